import { DrainAccuracyTracker } from "../core/drain-accuracy";
import type { RouterOptions } from "../core/router-core";
import type { AcquireResult } from "../core/router-driver";
import { routerOptionsFromSettings, routerSettingsSchema } from "../core/router-schema";
import { type RetryHeaders, retryDelay } from "./client-model";
import { EventLoop } from "./event-loop";
import { buildFleet, promptIds } from "./fleet";
import { IdleMeter } from "./idle-meter";
import type { PolicySpec } from "./policies";
import { randomStream } from "./random-streams";
import { type Scenario, trafficDurationS } from "./scenario";
import { createSimRouter } from "./sim-router";
import type { AttemptRecord, DrainSample, RequestTrace, RunTrace } from "./trace";
import type { WorkloadRequest } from "./workload";

/**
 * The router options of a scenario under a policy, from the core's router schema (the one the edge's config
 * extends), so defaults such as the estimator's alpha and the jitter are exactly the deployed ones.
 *
 * @example
 * ```ts
 * const options = routerOptionsForRun(scenario, EVAL_POLICIES[4], ["replica-0"]);
 * ```
 */
export function routerOptionsForRun(scenario: Scenario, policy: PolicySpec, replicas: string[]): RouterOptions {
  const settings = routerSettingsSchema.parse({
    maxOngoingRequests: scenario.fleet.maxOngoingRequests,
    maxQueuedRequests: scenario.router.maxQueuedRequests,
    queueTimeoutS: scenario.router.queueTimeoutS,
    backpressure: {
      retryAfterPolicy: policy.retryAfterPolicy,
      ...(policy.retryAfterS !== undefined ? { retryAfterS: policy.retryAfterS } : {}),
    },
  });
  return routerOptionsFromSettings(replicas, settings);
}

/**
 * Runs one scenario under one policy in virtual time and returns its trace: the real RouterCore (one per
 * shard, driven as the Durable Object drives it), the real scheduler in every replica with the engine's
 * timing model, SDK-like clients, and the given arrivals. Deterministic: same inputs, same trace.
 *
 * @example
 * ```ts
 * const workload = generateWorkload(scenario, measureCapacity(scenario));
 * const trace = runSimulation(scenario, EVAL_POLICIES[4], workload);
 * ```
 */
export function runSimulation(scenario: Scenario, policy: PolicySpec, workload: readonly WorkloadRequest[]): RunTrace {
  const loop = new EventLoop();
  const fleet = buildFleet(scenario, loop);
  const replicaNames = [...fleet.keys()];
  const options = routerOptionsForRun(scenario, policy, replicaNames);
  const drainSamples: DrainSample[] = [];
  const trackerFactory = () =>
    new DrainAccuracyTracker(Number.MAX_SAFE_INTEGER, 0, (o) => {
      if (o.suggestedS !== undefined)
        drainSamples.push({ atMs: o.atMs, suggestedS: o.suggestedS, observedS: o.observedS });
    });
  const fleetView = { queueLength: (replica: string) => fleet.get(replica)?.queueLength };
  const routers = Array.from({ length: scenario.router.shards }, (_, i) =>
    createSimRouter(
      loop,
      { options, random: randomStream(scenario.seed, "router", i), accuracy: trackerFactory },
      fleetView,
      { probeMs: scenario.network.probeMs },
    ),
  );
  const maxOngoing = scenario.fleet.maxOngoingRequests;
  const meter = new IdleMeter(() => loop.now(), replicaNames.length * maxOngoing);
  for (const replica of fleet.values()) {
    replica.onLoadChange = (delta) => {
      meter.tick();
      const after = replica.queueLength;
      const before = after - delta;
      meter.freeSlots += Math.max(0, maxOngoing - after) - Math.max(0, maxOngoing - before);
    };
  }
  const edgeRandom = randomStream(scenario.seed, "edge");
  const { forwardMs } = scenario.network;
  const traces: RequestTrace[] = [];

  const attempt = (request: WorkloadRequest, trace: RequestTrace, random: () => number, hinted: boolean) => {
    const record: AttemptRecord = { atMs: loop.now(), outcome: "rejected", answeredAtMs: loop.now(), hinted };
    const retriesSoFar = trace.attempts.length;
    trace.attempts.push(record);
    const router = routers[Math.floor(edgeRandom() * routers.length)] as (typeof routers)[number];
    const ticket = `${request.id}.${retriesSoFar}`;
    // Like the OpenAI SDKs, the client marks its retries (`x-stainless-retry-count: n`, n >= 1).
    const isRetry = retriesSoFar > 0;
    let reacquired = false;
    const onResult = (result: AcquireResult) => {
      // The Worker's call failed because the router restarted: the request never reached an engine, so the
      // Worker asks the fresh router once more (src/edge/acquire-slot.ts), the client none the wiser.
      if (result.kind === "rejected" && result.reason === "router_restart" && !reacquired) {
        reacquired = true;
        router.acquire(ticket, { retry: isRetry, ...request.tenant }, onResult);
        return;
      }
      record.answeredAtMs = loop.now();
      if (result.kind === "admitted") {
        record.outcome = "admitted";
        const replica = fleet.get(result.replica) as NonNullable<ReturnType<typeof fleet.get>>;
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
                trace.result = ok ? "served" : "gave_up";
                if (ok) trace.completedAtMs = loop.now();
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
      if (retriesSoFar >= scenario.client.maxRetries) {
        trace.result = "gave_up";
        return;
      }
      const delay = retryDelay(policy.client, headers, retriesSoFar, random);
      meter.tick();
      meter.clientsWaiting += 1;
      loop.after(delay.delayMs, () => {
        meter.tick();
        meter.clientsWaiting -= 1;
        attempt(request, trace, random, delay.hinted);
      });
    };
    router.acquire(ticket, { retry: isRetry, ...request.tenant }, onResult);
  };

  for (const request of workload) {
    loop.at(request.arrivalMs, () => {
      const trace: RequestTrace = {
        id: request.id,
        arrivalMs: request.arrivalMs,
        attempts: [],
        result: "unfinished",
        outputTokens: request.outputTokens,
      };
      traces.push(trace);
      attempt(request, trace, randomStream(scenario.seed, "client", request.id), false);
    });
  }
  if (scenario.router.restartAtS !== undefined) {
    loop.at(scenario.router.restartAtS * 1000, () => {
      for (const router of routers) router.restart();
    });
  }
  const trafficS = trafficDurationS(scenario);
  const spanS = trafficS + scenario.tailS;
  loop.run(spanS * 1000);
  meter.tick();
  return {
    requests: traces,
    drainSamples,
    idleWhileWaitingSlotS: meter.slotSeconds,
    fleetSlots: replicaNames.length * maxOngoing,
    spanS,
    trafficS,
  };
}
