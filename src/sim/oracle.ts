import { drawClient } from "./client-mix";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import { randomStream } from "./random-streams";
import { type Scenario, trafficDurationS } from "./scenario";
import type { WorkloadRequest } from "./workload";

/** The oracle's figures for one scenario (pooled over seeds like the policies'). */
export interface OracleResult {
  requests: number;
  served: number;
  servedFraction: number;
  servedWithinS: CompletionCurve;
  /** How the oracle was computed, for the report. */
  model: string;
}

/** The longest single hint the oracle may give a client that honours any value (the span of a run bounds it too). */
export const ORACLE_MAX_HINT_S = 120;

/** Binary min-heap of [key, value] pairs. */
class PairHeap {
  private readonly items: [number, number][] = [];
  get size(): number {
    return this.items.length;
  }
  peekKey(): number | undefined {
    return this.items[0]?.[0];
  }
  push(key: number, value: number): void {
    const a = this.items;
    a.push([key, value]);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((a[p] as [number, number])[0] <= key) break;
      [a[i], a[p]] = [a[p] as [number, number], a[i] as [number, number]];
      i = p;
    }
  }
  pop(): [number, number] | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || !last) return top;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && (a[l] as [number, number])[0] < (a[m] as [number, number])[0]) m = l;
      if (r < a.length && (a[r] as [number, number])[0] < (a[m] as [number, number])[0]) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m] as [number, number], a[i] as [number, number]];
      i = m;
    }
    return top;
  }
}

/** One request's window in the oracle's model (seconds). */
export interface OracleJob {
  /** The client's first attempt. */
  arrival: number;
  /** The first attempt reaching the router: the earliest start. */
  release: number;
  /** The client's last chance: the latest start. */
  deadline: number;
  /** Half the client's round trip plus the Worker-to-router latency: the way back to the client. */
  tail: number;
}

/** The oracle's model of a scenario's fleet and requests (see {@link computeOracle}). */
export interface OracleModel {
  jobs: OracleJob[];
  /** The fleet's slots (replicas x `maxOngoingRequests`). */
  slots: number;
  /** Starts per second the fleet sustains at time t. */
  rateAt: (tS: number) => number;
  /** The run's end (traffic plus tail), seconds. */
  endS: number;
}

/**
 * A scenario's fleet by its replicas' speeds: their sum at time t (less the lost replicas' from the loss on, the
 * last ones listed, as the simulation removes them), the sum at the start, and the fastest replica's.
 *
 * @example
 * ```ts
 * const speed = fleetSpeed(scenario); // 4 replicas at speed 1, 2 lost at 80 s
 * speed.at(79); // 4
 * speed.at(80); // 2
 * ```
 */
export function fleetSpeed(scenario: Scenario): { at: (tS: number) => number; total: number; fastest: number } {
  const speeds = scenario.fleet.replicas.flatMap((g) => Array.from({ length: g.count }, () => g.speed));
  const total = speeds.reduce((s, v) => s + v, 0);
  const loss = scenario.fleet.loss;
  const lost = loss ? speeds.slice(-loss.replicas).reduce((s, v) => s + v, 0) : 0;
  return { at: (tS) => (loss && tS >= loss.atS ? total - lost : total), total, fastest: Math.max(...speeds) };
}

/**
 * The oracle's windows: for each request, when it may start (its first attempt reaching the router) and its
 * client's last chance, drawn exactly as the simulation draws its clients; and the fleet's start rate.
 *
 * @example
 * ```ts
 * const { jobs, rateAt } = oracleModel(scenario, workload, measureCapacity(scenario));
 * jobs[0].deadline - jobs[0].release; // e.g. 251.7: the queue's drain plus two 120 s hints
 * ```
 */
export function oracleModel(
  scenario: Scenario,
  workload: readonly WorkloadRequest[],
  capacityRps: number,
): OracleModel {
  const slots = scenario.fleet.replicas.reduce((s, g) => s + g.count, 0) * scenario.fleet.maxOngoingRequests;
  const queueS = Math.min(
    scenario.router.queueTimeoutS,
    (scenario.router.maxQueuedRequests * scenario.router.shards) / capacityRps,
  );
  const speed = fleetSpeed(scenario);
  const rateAt = (tS: number) => capacityRps * (speed.at(tS) / speed.total);
  const w2r = scenario.clients.workerToRouterMs / 1000;
  const jobs = workload.map((request) => {
    const client = drawClient(scenario.clients, randomStream(scenario.seed, "client-kind", request.id));
    const retries = client.profile.maxRetries ?? scenario.client.maxRetries;
    const oneWayS = client.roundTripMs / 2000 + w2r;
    let waitS = 0;
    // Per retry: the refusal's way back to the client, its wait, and the retry's way to the router.
    for (let n = 0; n < retries; n++)
      waitS +=
        (client.profile.honoursUpToS > 0
          ? Math.min(client.profile.honoursUpToS, ORACLE_MAX_HINT_S)
          : Math.min(0.5 * 2 ** n, 8)) +
        2 * oneWayS;
    const release = request.arrivalMs / 1000 + oneWayS;
    return { arrival: request.arrivalMs / 1000, release, deadline: release + queueS + waitS, tail: oneWayS };
  });
  return { jobs, slots, rateAt, endS: trafficDurationS(scenario) + scenario.tailS };
}

/**
 * The best any hint policy could do for a scenario's clients under the oracle's capacity model, offline, from the
 * same arrivals and the same clients (style and round trip, drawn exactly as the simulation draws them).
 *
 * Model: the fleet starts requests at its measured capacity (one start every 1 / capacity seconds while anyone
 * is waiting; the rate falls with the replicas lost). It does not count the burst of an idle fleet filling its free
 * slots at once: a policy may serve a few requests of a short overload sooner than the oracle says. A request may
 * start from the moment its first attempt reaches the router until its client's last chance: the queue's drain
 * time (what a queue could hold it) plus, per retry it will make, the refusal's way back to the client, the longest
 * hint it honours (at most {@link ORACLE_MAX_HINT_S}; backoff-only clients the SDK backoff; no-shows none) and the
 * retry's way to the router. Starts lie on a grid one start apart, each standing for any moment of its step (a
 * request whose first attempt comes within the step may take it); among the requests that may take a start, the
 * one whose last useful start (its last chance, or the last start that completes by the run's end) comes first
 * takes it. Earliest deadline first on that grid serves the most requests the grid allows, so the oracle is an upper
 * bound on the requests served under its capacity model (its completion curve is that schedule's, not a bound).
 * A request completes a service time (fleet slots / capacity, Little's law at full load) plus its way back to the
 * client (half its round trip plus the Worker-to-router latency) after it starts.
 *
 * @example
 * ```ts
 * const oracle = computeOracle(scenario, workload, measureCapacity(scenario));
 * oracle.servedFraction; // e.g. 0.99
 * ```
 */
export function computeOracle(
  scenario: Scenario,
  workload: readonly WorkloadRequest[],
  capacityRps: number,
): Omit<OracleResult, "model"> {
  const { jobs, slots, rateAt, endS } = oracleModel(scenario, workload, capacityRps);
  const serviceS = slots / capacityRps;
  jobs.sort((a, b) => a.release - b.release);
  const heap = new PairHeap();
  const times: number[] = [];
  let next = 0;
  let t = 0;
  while (t <= endS) {
    const rate = rateAt(t);
    if (!(rate > 0)) break; // every replica lost: nothing starts any more
    const step = 1 / rate;
    // A start at t stands for any start in [t, t + step): a request whose first attempt comes within the step
    // may take it (a relaxation, so that waiting for a narrower window never beats the oracle). Its key is its
    // last useful start: its client's last chance, or the last start that still completes by the run's end.
    while (next < jobs.length && (jobs[next] as (typeof jobs)[number]).release < t + step) {
      const job = jobs[next] as (typeof jobs)[number];
      heap.push(Math.min(job.deadline, endS - serviceS - job.tail), next);
      next += 1;
    }
    while (heap.size > 0 && (heap.peekKey() as number) < t) heap.pop();
    const top = heap.pop();
    if (top === undefined) {
      if (next >= jobs.length) break;
      // Idle until the step in which the next first attempt comes (on the start grid: starts stay a step apart).
      t += Math.max(1, Math.floor(((jobs[next] as (typeof jobs)[number]).release - t) / step)) * step;
      continue;
    }
    const job = jobs[top[1]] as (typeof jobs)[number];
    const done = t + serviceS + job.tail;
    if (done <= endS) times.push(done - job.arrival);
    t += step;
  }
  const total = workload.length;
  return {
    requests: total,
    served: times.length,
    servedFraction: total > 0 ? times.length / total : 0,
    servedWithinS: Object.fromEntries(
      COMPLETION_HORIZONS_S.map((h) => [String(h), total > 0 ? times.filter((x) => x <= h).length / total : 0]),
    ),
  };
}

/** Pools per-seed oracle results (request-weighted). */
export function poolOracles(results: readonly Omit<OracleResult, "model">[]): OracleResult {
  const requests = results.reduce((s, r) => s + r.requests, 0);
  const served = results.reduce((s, r) => s + r.served, 0);
  const curve: CompletionCurve = {};
  for (const h of COMPLETION_HORIZONS_S)
    curve[String(h)] =
      requests > 0 ? results.reduce((s, r) => s + (r.servedWithinS[String(h)] ?? 0) * r.requests, 0) / requests : 0;
  return {
    requests,
    served,
    servedFraction: requests > 0 ? served / requests : 0,
    servedWithinS: curve,
    model:
      "earliest-deadline-first on a grid of starts at the fleet's measured capacity, each start standing for any moment of its step (an upper bound on requests served); each request's window: queue drain time plus, per retry, the way back and forth and the longest hint its client honours (<= 120 s), SDK backoff for backoff-only clients, none for no-shows",
  };
}
