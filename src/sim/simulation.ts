import { PROMISE_OUTCOME_KEYS, type PromiseOutcomes } from "../core/capacity-booking";
import { announcesSdk, clientHorizonS } from "../core/client-horizon";
import { DrainAccuracyTracker } from "../core/drain-accuracy";
import type { LedgerView, SubmitOptions } from "../core/router-core";
import type { AcquireResult, RouterDriver } from "../core/router-driver";
import type { RouterOptions } from "../core/router-options";
import { routerOptionsFromSettings, routerSettingsSchema } from "../core/router-schema";
import { hashInts } from "../engine/rng";
import { drawClient, type SimClient } from "./client-mix";
import { type RetryHeaders, retryDelay } from "./client-model";
import { EventLoop } from "./event-loop";
import { buildFleet, promptIds } from "./fleet";
import { hintScheduleOf } from "./hint-schedule";
import { IdleMeter } from "./idle-meter";
import { knownDrainRate } from "./known-drain-rate";
import { knownFreshRate } from "./known-fresh-rate";
import type { PolicySpec } from "./policies";
import { randomStream } from "./random-streams";
import { type Scenario, trafficDurationS } from "./scenario";
import { createSimRouter } from "./sim-router";
import type { AttemptRecord, DrainSample, LedgerSample, RequestTrace, RunTrace } from "./trace";
import type { WorkloadRequest } from "./workload";

/**
 * The router options of a scenario under a policy, from the core's router schema (the one the edge's config
 * spreads, so defaults such as the estimator's alpha and the jitter are exactly the deployed ones).
 *
 * @example
 * ```ts
 * const options = routerOptionsForRun(scenario, EVAL_POLICIES[4]);
 * ```
 */
export function routerOptionsForRun(scenario: Scenario, policy: PolicySpec, replicas: string[]): RouterOptions {
  const settings = routerSettingsSchema.parse({
    maxOngoingRequests: scenario.fleet.maxOngoingRequests,
    maxQueuedRequests: scenario.router.maxQueuedRequests,
    queueTimeoutS: scenario.router.queueTimeoutS,
    ...(scenario.router.tenantHeadroomSlots !== undefined
      ? { tenantHeadroomSlots: scenario.router.tenantHeadroomSlots }
      : {}),
    ...(policy.booking ? { booking: policy.booking } : {}),
    backpressure: {
      retryAfterPolicy: policy.retryAfterPolicy,
      ...(policy.retryAfterS !== undefined ? { retryAfterS: policy.retryAfterS } : {}),
    },
  });
  const options = { ...routerOptionsFromSettings(replicas, settings), routerShards: scenario.router.shards };
  return policy.ledger ? { ...options, bookingLedger: policy.ledger } : options;
}

/**
 * What the simulation asks of a router shard: a `RouterDriver`'s calls, or a stand-in's (`runSimulation`'s
 * `routersFor`).
 *
 * @example
 * ```ts
 * runSimulation(scenario, policy, workload, (setting) => [new PlannedRouter(setting, plan, 30)]);
 * ```
 */
export interface SimRouterPort {
  acquire(ticket: string, options: SubmitOptions, respond: (result: AcquireResult) => void): void;
  release(ticket: string, replicaFailed?: boolean): void;
  restart(): void;
}

/** What a stand-in router is given: the run's clock, its replicas and their slots, and the replicas lost so far. */
export interface SimRouterSetting {
  loop: EventLoop;
  replicas: readonly string[];
  maxOngoing: number;
  lost: ReadonlySet<string>;
}

/** The router shard a request's fingerprint picks (the Worker hashes the fingerprint the same way). */
function shardOf(requestId: number, shards: number): number {
  return shards <= 1 ? 0 : (hashInts([requestId, 0x5eed]) >>> 0) % shards;
}

/** What the Worker tells the router about an attempt: the fingerprint, the SDK headers' horizon and whether it sent them. */
function submitOptionsFor(client: SimClient, requestId: number, retriesSoFar: number): SubmitOptions {
  const { profile } = client;
  const identity = profile.sendsSdkHeaders ? { lang: profile.lang, packageVersion: profile.packageVersion } : {};
  return {
    retry: profile.sendsSdkHeaders && retriesSoFar > 0,
    fingerprint: `req-${requestId}`,
    clientHorizonS: clientHorizonS(identity),
    sdkClient: announcesSdk(identity),
  };
}

/**
 * Runs one scenario under one policy in virtual time and returns its trace: the real RouterCore (one per
 * shard, driven as the Durable Object drives it), the real scheduler in every replica with the engine's
 * timing model, the scenario's client mix with their round trips, and the given arrivals. Deterministic: same
 * inputs, same trace.
 *
 * Timing of an attempt: the client sends at t; the router sees it at t + roundTrip / 2 + workerToRouter; a
 * refusal reaches the client workerToRouter + roundTrip / 2 later, and the client sleeps its delay from then.
 * Every attempt of a request goes to the shard its fingerprint picks. With `routersFor`, its routers stand in for
 * the RouterCore shards (a router that follows a bound's schedule: src/sim/plan-replay.ts); `policy` then only
 * names the run. `known.capacityRps` is the scenario's measured capacity, which a policy with `knownCapacity` (a
 * simulator-only variant) plans on; such a policy throws without it.
 *
 * @example
 * ```ts
 * const workload = generateWorkload(scenario, measureCapacity(scenario));
 * const trace = runSimulation(scenario, EVAL_POLICIES[4], workload);
 * ```
 */
export function runSimulation(
  scenario: Scenario,
  policy: PolicySpec,
  workload: readonly WorkloadRequest[],
  routersFor?: (setting: SimRouterSetting) => SimRouterPort[],
  known: { capacityRps?: number } = {},
): RunTrace {
  const loop = new EventLoop();
  const fleet = buildFleet(scenario, loop);
  const replicaNames = [...fleet.keys()];
  const planned = routerOptionsForRun(scenario, policy, replicaNames);
  if (policy.knownCapacity && known.capacityRps === undefined)
    throw new Error(`${policy.id}: knownCapacity needs the scenario's measured capacity (known.capacityRps)`);
  const options = {
    ...planned,
    ...(policy.clairvoyantForecast ? { knownFreshRate: knownFreshRate(workload, scenario.router.shards) } : {}),
    ...(policy.knownCapacity ? { knownDrainRate: knownDrainRate(scenario, known.capacityRps as number) } : {}),
    ...(policy.hintSchedule ? { hintSchedule: hintScheduleOf(policy.hintSchedule) } : {}),
  };
  const drainSamples: DrainSample[] = [];
  const trackerFactory = () =>
    new DrainAccuracyTracker(Number.MAX_SAFE_INTEGER, 0, (o) => {
      if (o.suggestedS !== undefined)
        drainSamples.push({ atMs: o.atMs, suggestedS: o.suggestedS, observedS: o.observedS });
    });
  const lost = new Set<string>();
  const fleetView = {
    queueLength: (replica: string) => (lost.has(replica) ? undefined : fleet.get(replica)?.queueLength),
  };
  const maxOngoing = scenario.fleet.maxOngoingRequests;
  const drivers = routersFor
    ? undefined
    : Array.from({ length: scenario.router.shards }, (_, i) =>
        createSimRouter(
          loop,
          { options, random: randomStream(scenario.seed, "router", i), accuracy: trackerFactory },
          fleetView,
          { probeMs: scenario.network.probeMs },
        ),
      );
  const routers: SimRouterPort[] =
    drivers ?? (routersFor as NonNullable<typeof routersFor>)({ loop, replicas: replicaNames, maxOngoing, lost });
  const meter = new IdleMeter(() => loop.now(), replicaNames.length * maxOngoing);
  for (const replica of fleet.values()) {
    replica.onLoadChange = (delta) => {
      meter.tick();
      const after = replica.queueLength;
      const before = after - delta;
      const free = (n: number) => (lost.has(replica.name) ? 0 : Math.max(0, maxOngoing - n));
      meter.freeSlots += free(after) - free(before);
    };
  }
  const { forwardMs } = scenario.network;
  const { workerToRouterMs } = scenario.clients;
  const traces: RequestTrace[] = [];
  /** Whether a request's next attempt is made at the server's hint (else the client's own backoff). */
  const pendingHinted = new Map<RequestTrace, boolean>();

  /** The client of `request` sends an attempt now (client time). */
  const send = (request: WorkloadRequest, client: SimClient, trace: RequestTrace, random: () => number) => {
    const oneWayMs = client.roundTripMs / 2 + workerToRouterMs;
    const retriesSoFar = trace.attempts.length;
    loop.after(oneWayMs, () => {
      const record: AttemptRecord = {
        atMs: loop.now(),
        outcome: "rejected",
        answeredAtMs: loop.now(),
        hinted: pendingHinted.get(trace) ?? false,
      };
      trace.attempts.push(record);
      const router = routers[shardOf(request.id, routers.length)] as (typeof routers)[number];
      const ticket = `${request.id}.${retriesSoFar}`;
      const refused = (headers: RetryHeaders) => {
        const maxRetries = client.profile.maxRetries ?? scenario.client.maxRetries;
        if (retriesSoFar >= maxRetries) {
          trace.result = "gave_up";
          return;
        }
        const delay = retryDelay(client.profile, headers, retriesSoFar, random);
        meter.tick();
        meter.clientsWaiting += 1;
        // The refusal travels back to the client, which sleeps its delay and sends again.
        loop.after(oneWayMs + delay.delayMs, () => {
          meter.tick();
          meter.clientsWaiting -= 1;
          pendingHinted.set(trace, delay.hinted);
          send(request, client, trace, random);
        });
      };
      const options = { ...submitOptionsFor(client, request.id, retriesSoFar), ...request.tenant };
      let reacquired = false;
      const onResult = (result: AcquireResult) => {
        // The Worker's call failed because the router restarted: the request never reached an engine, so the
        // Worker asks the fresh router once more (src/edge/acquire-slot.ts), the client none the wiser.
        if (result.kind === "rejected" && result.reason === "router_restart" && !reacquired) {
          reacquired = true;
          router.acquire(ticket, options, onResult);
          return;
        }
        record.answeredAtMs = loop.now();
        if (result.kind === "admitted") {
          const replica = fleet.get(result.replica) as NonNullable<ReturnType<typeof fleet.get>>;
          if (lost.has(result.replica)) {
            // The replica is gone: the Worker's forward fails (502), the slot is given back marked failed.
            router.release(ticket, true);
            record.status = 502;
            record.reason = "replica_gone";
            refused({});
            return;
          }
          record.outcome = "admitted";
          loop.after(forwardMs, () =>
            replica.submit(
              {
                id: ticket,
                promptTokenIds: promptIds(request.id, request.promptTokens),
                maxTokens: request.maxTokens,
                outputTokens: request.outputTokens,
              },
              (ok) =>
                loop.after(forwardMs, () => {
                  router.release(ticket, false);
                  if (!ok) {
                    trace.result = "gave_up";
                    return;
                  }
                  loop.after(client.roundTripMs / 2, () => {
                    trace.result = "served";
                    trace.completedAtMs = loop.now();
                  });
                }),
            ),
          );
          return;
        }
        const headers: RetryHeaders = {};
        if (result.retryAfterMs !== undefined) headers.retryAfterMs = result.retryAfterMs;
        if (result.retryAfterS !== undefined) headers.retryAfterS = result.retryAfterS;
        record.status = result.status;
        record.reason = result.reason;
        if (result.retryAfterMs !== undefined) record.hintMs = result.retryAfterMs;
        refused(headers);
      };
      router.acquire(ticket, options, onResult);
    });
  };
  for (const request of workload) {
    loop.at(request.arrivalMs, () => {
      const client = drawClient(scenario.clients, randomStream(scenario.seed, "client-kind", request.id));
      const trace: RequestTrace = {
        id: request.id,
        arrivalMs: request.arrivalMs,
        client: client.profile.style,
        roundTripMs: client.roundTripMs,
        attempts: [],
        result: "unfinished",
        outputTokens: request.outputTokens,
      };
      traces.push(trace);
      send(request, client, trace, randomStream(scenario.seed, "client", request.id));
    });
  }
  if (scenario.router.restartAtS !== undefined) {
    loop.at(scenario.router.restartAtS * 1000, () => {
      for (const router of routers) router.restart();
    });
  }
  const { loss } = scenario.fleet;
  if (loss) {
    loop.at(loss.atS * 1000, () => {
      meter.tick();
      for (const name of replicaNames.slice(-loss.replicas)) {
        meter.freeSlots -= Math.max(0, maxOngoing - (fleet.get(name)?.queueLength ?? 0));
        lost.add(name);
      }
    });
  }
  const trafficS = trafficDurationS(scenario);
  const spanS = trafficS + scenario.tailS;
  const ledger = drivers ? sampleLedgers(loop, drivers, spanS) : undefined;
  loop.run(spanS * 1000);
  meter.tick();
  const aliveSlots = (replicaNames.length - lost.size) * maxOngoing;
  return {
    requests: traces,
    drainSamples,
    idleWhileWaitingSlotS: meter.slotSeconds,
    fleetSlots: meanFleetSlots(replicaNames.length * maxOngoing, aliveSlots, loss?.atS, spanS),
    ...(loss
      ? { slotLoss: { atS: loss.atS, slotsBefore: replicaNames.length * maxOngoing, slotsAfter: aliveSlots } }
      : {}),
    spanS,
    trafficS,
    ...(ledger ? { ledger } : {}),
  };
}

/**
 * The fleet's slots averaged over the run: all of them until a loss at `lossAtS`, those left after it. (The plain
 * mean of before and after was right only for a loss half way through: capacity-halves' loss at 80 s of 360 s
 * put idle-while-waiting's denominator at 24 slots, not 19.6.)
 *
 * @example
 * ```ts
 * meanFleetSlots(32, 16, 80, 360); // (32 * 80 + 16 * 280) / 360 = 19.56
 * meanFleetSlots(32, 32, undefined, 360); // 32
 * ```
 */
export function meanFleetSlots(slots: number, aliveSlots: number, lossAtS: number | undefined, spanS: number): number {
  if (lossAtS === undefined || !(spanS > 0)) return slots;
  const before = Math.min(Math.max(0, lossAtS), spanS);
  return (slots * before + aliveSlots * (spanS - before)) / spanS;
}

/**
 * Samples the routers' ledgers at the end of every second of the run (`LedgerSample`), for the timeline; `undefined`
 * when the policy keeps no ledger. It reads them without changing anything (`RouterCore.ledgerView`), so the run is
 * the same with it. A router restarted since the last sample starts its counts from zero again.
 */
function sampleLedgers(loop: EventLoop, routers: readonly RouterDriver[], spanS: number): LedgerSample[] | undefined {
  if (routers.some((router) => router.core.ledgerView() === undefined)) return undefined;
  const samples: LedgerSample[] = [];
  const last: PromiseOutcomes[] = routers.map(() => ({ made: 0, kept: 0, broken: 0, noShow: 0 }));
  const cores = routers.map((router) => router.core);
  for (let s = 1; s <= spanS; s++)
    loop.at(s * 1000, () => {
      const sample: LedgerSample = { atMs: s * 1000, made: 0, kept: 0, broken: 0, noShow: 0, trust: 0 };
      routers.forEach((router, i) => {
        const view = router.core.ledgerView() as LedgerView;
        const before = last[i] as PromiseOutcomes;
        const restarted = router.core !== cores[i];
        cores[i] = router.core;
        for (const key of PROMISE_OUTCOME_KEYS) sample[key] += view.promises[key] - (restarted ? 0 : before[key]);
        sample.trust += view.trust / routers.length;
        last[i] = view.promises;
      });
      samples.push(sample);
    });
  return samples;
}
