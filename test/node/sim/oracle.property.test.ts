import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { drawClient } from "../../../src/sim/client-mix";
import { CLIENT_STYLES, type ClientStyle } from "../../../src/sim/client-model";
import { COMPLETION_HORIZONS_S } from "../../../src/sim/metrics";
import { computeOracle, type OracleJob, type OracleModel, oracleModel, poolOracles } from "../../../src/sim/oracle";
import { randomStream } from "../../../src/sim/random-streams";
import { type Scenario, scenarioSchema } from "../../../src/sim/scenario";
import type { WorkloadRequest } from "../../../src/sim/workload";
import { propertyRuns } from "../../support/property-runs";

/**
 * The oracle (src/sim/oracle.ts), held against models written from its documentation: docs/evaluation.md
 * (Metrics, "oracle"), the JSDoc of `oracleModel`, `computeOracle` and `OracleJob`, and the client styles of
 * src/sim/client-model.ts.
 *
 * - the windows (`oracleModel`), against the documented per-style horizons: every request starts no sooner than
 *   its first attempt reaches the router (arrival + half its round trip + Worker-to-router) and no later than its
 *   last chance: the queue's drain time (min(queue timeout, queued x shards / capacity)) plus, per retry (the
 *   scenario's `maxRetries`, none for no-shows), the way back to the client and forth to the router plus the
 *   longest hint it honours capped at 120 s (openai_node and headerless_hints any value, openai_python and
 *   legacy_sdk 60 s), for backoff-only clients the SDK backoff min(0.5 x 2^n, 8) s at its longest, for no-shows
 *   nothing; the 120 s cap holds whatever the travel. The fleet: slots = replicas x maxOngoingRequests, the start
 *   rate the capacity scaled by the replicas' speed left after a loss (the last ones listed), the run's end
 *   traffic + tail;
 * - the schedule (`computeOracle`), against a plain re-implementation of the documented rule (a linear scan, no
 *   heap): starts on a grid one start (1 / rate(t)) apart, each standing for any moment of its step; among the
 *   requests whose first attempt reaches the router within the step and whose last useful start (last chance, or
 *   the last start that completes by the run's end) has not passed, the earliest last useful start first; with
 *   nobody to start, whole steps skipped to the next first attempt's; a request served when it completes (start +
 *   slots / capacity + its way back) by the run's end. Served count and completion curve must be equal (on
 *   instances whose last chances are all distinct: ties may go either way);
 * - against an exhaustive search of the same capacity model on tiny instances (every order of every subset, each
 *   started as early as its window and the start spacing allow): it serves at least the optimum (an upper bound,
 *   off the start grid too), and exactly the optimum where earliest-deadline-first is optimal: every first attempt
 *   on the start grid (multiples of 1 / capacity), equal ways back, one rate throughout;
 * - monotonicity on those grid instances: adding a request, a retry more or twice the capacity (with no queue,
 *   so that the windows stay the same) never serves fewer;
 * - determinism: the same inputs give the same result; the workload's order does not matter and it is not
 *   changed; `poolOracles` sums requests and served and weights the curves by requests.
 *
 * The oracle's capacity model does not count an idle fleet filling its free slots at once (its JSDoc says so);
 * its completion curve is its schedule's, not a bound, so only the served count is held to the exhaustive search.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);
const PARAMS = { numRuns: RUNS, seed: SEED };

/** Sums of a few floats in a different order: equal up to rounding. */
const EPS_S = 1e-9;

// ---- the documented client horizons --------------------------------------------------------------------------

/** The longest hint the oracle gives (docs/evaluation.md: "at most 120 s"). */
const MAX_HINT_S = 120;

/** The longest hint each style honours (src/sim/client-model.ts); 0: it reads no hint. */
const HONOURS_UP_TO_S: Record<ClientStyle, number> = {
  openai_node: Number.POSITIVE_INFINITY,
  openai_python: 60,
  headerless_hints: Number.POSITIVE_INFINITY,
  legacy_sdk: 60,
  backoff_only: 0,
  no_show: 0,
};

/** The SDK backoff before retry n (0-based), at its longest (jitter factor 1): min(0.5 x 2^n, 8) s. */
const sdkBackoffS = (n: number) => Math.min(0.5 * 2 ** n, 8);

/** The client of a request, drawn as the documentation says the simulation draws it. */
function clientOf(scenario: Scenario, id: number) {
  return drawClient(scenario.clients, randomStream(scenario.seed, "client-kind", id));
}

/** The queue's drain time: what a queue could hold a request (its timeout, or a full queue's drain). */
function queueDrainS(scenario: Scenario, capacityRps: number): number {
  const r = scenario.router;
  return Math.min(r.queueTimeoutS, (r.maxQueuedRequests * r.shards) / capacityRps);
}

// ---- scenarios and workloads ---------------------------------------------------------------------------------

interface ScenarioShape {
  seed: number;
  trafficS: number;
  tailS: number;
  groups: { count: number; speed: number }[];
  maxOngoing: number;
  loss: { atS: number; replicas: number } | null;
  shards: number;
  maxQueued: number;
  queueTimeoutS: number;
  maxRetries: number;
  mix: Partial<Record<ClientStyle, number>>;
  roundTrip: { kind: "zero" } | { kind: "lognormal"; medianMs: number; p99Ms: number };
  workerToRouterMs: number;
}

function scenarioOf(s: ScenarioShape): Scenario {
  return scenarioSchema.parse({
    name: "oracle-property",
    title: "oracle property",
    description: "test",
    seed: s.seed,
    phases: [{ durationS: s.trafficS, load: 1 }],
    tailS: s.tailS,
    fleet: {
      replicas: s.groups,
      maxOngoingRequests: s.maxOngoing,
      maxTotalTokens: 8192,
      ...(s.loss ? { loss: s.loss } : {}),
    },
    router: { shards: s.shards, maxQueuedRequests: s.maxQueued, queueTimeoutS: s.queueTimeoutS },
    requests: { prompt: { kind: "fixed", tokens: 8 }, output: { kind: "fixed", tokens: 4 } },
    client: { maxRetries: s.maxRetries },
    clients: { mix: s.mix, roundTrip: s.roundTrip, workerToRouterMs: s.workerToRouterMs },
  });
}

/** Every client style the simulator knows. */
const STYLES = CLIENT_STYLES;

/** A mix of one to four styles with random shares. */
const mixArb = fc
  .uniqueArray(fc.constantFrom(...STYLES), { minLength: 1, maxLength: 4 })
  .chain((styles) =>
    fc
      .array(fc.integer({ min: 1, max: 5 }), { minLength: styles.length, maxLength: styles.length })
      .map((shares) => Object.fromEntries(styles.map((s, i) => [s, shares[i] as number]))),
  );

const roundTripArb = fc.oneof(
  fc.constant({ kind: "zero" as const }),
  fc
    .record({ medianMs: fc.integer({ min: 5, max: 300 }), spread: fc.double({ min: 1, max: 20, noNaN: true }) })
    .map(({ medianMs, spread }) => ({ kind: "lognormal" as const, medianMs, p99Ms: medianMs * spread })),
);

/** Any scenario shape the schema accepts, small: a loss may take every replica (the rate falls to nothing). */
const scenarioShapeArb: fc.Arbitrary<ScenarioShape> = fc
  .record({
    seed: fc.integer({ min: 0, max: 10_000 }),
    trafficS: fc.integer({ min: 1, max: 30 }),
    tailS: fc.integer({ min: 0, max: 60 }),
    groups: fc.array(fc.record({ count: fc.integer({ min: 1, max: 3 }), speed: fc.constantFrom(0.5, 1, 2, 3) }), {
      minLength: 1,
      maxLength: 3,
    }),
    maxOngoing: fc.integer({ min: 1, max: 4 }),
    lossAtS: fc.option(fc.double({ min: 0.5, max: 40, noNaN: true }), { nil: null }),
    lossShare: fc.double({ min: 0, max: 1, noNaN: true }),
    shards: fc.integer({ min: 1, max: 3 }),
    maxQueued: fc.integer({ min: 0, max: 8 }),
    queueTimeoutS: fc.double({ min: 0.1, max: 30, noNaN: true }),
    maxRetries: fc.integer({ min: 0, max: 3 }),
    mix: mixArb,
    roundTrip: roundTripArb,
    workerToRouterMs: fc.constantFrom(0, 1, 5, 20),
  })
  .map(({ lossAtS, lossShare, ...rest }) => {
    const total = rest.groups.reduce((s, g) => s + g.count, 0);
    const replicas = Math.max(1, Math.ceil(lossShare * total));
    return { ...rest, loss: lossAtS === null ? null : { atS: lossAtS, replicas } };
  });

const capacityArb = fc.double({ min: 0.3, max: 40, noNaN: true });

/** Requests with ids 0..n-1 and the given first attempts (ms), in the given (not necessarily time) order. */
function workloadOf(arrivalsMs: readonly number[]): WorkloadRequest[] {
  return arrivalsMs.map((arrivalMs, id) => ({ id, arrivalMs, promptTokens: 8, outputTokens: 4, maxTokens: 4 }));
}

const arrivalsArb = (maxLength: number, maxMs: number) =>
  fc.array(fc.oneof(fc.integer({ min: 0, max: maxMs }), fc.double({ min: 0, max: maxMs, noNaN: true })), {
    maxLength,
  });

/**
 * A tiny instance on the start grid, where earliest-deadline-first is optimal: capacity a power of two (so
 * 1 / capacity and its multiples are exact), every first attempt a multiple of 1 / capacity, no round trip and
 * no Worker-to-router latency (first attempt = reaching the router, every way back 0), no loss.
 */
const gridInstanceArb = fc.record({
  shape: scenarioShapeArb.map((s) => ({
    ...s,
    loss: null,
    roundTrip: { kind: "zero" as const },
    workerToRouterMs: 0,
  })),
  capacityRps: fc.constantFrom(1, 2, 4, 8),
  steps: fc.array(fc.integer({ min: 0, max: 24 }), { maxLength: 6 }),
});

const gridArrivalsMs = (steps: readonly number[], capacityRps: number) => steps.map((k) => (k * 1000) / capacityRps);

// ---- the documented schedule, two ways -------------------------------------------------------------------------

/** The order the oracle starts requests in: their last useful start (last chance, or the last that completes). */
const lastStartOf = (model: OracleModel, capacityRps: number) => (j: OracleJob) =>
  Math.min(j.deadline, model.endS - model.slots / capacityRps - j.tail);

/** No two requests tie on their last useful start (ties may go either way). */
const distinctLastStarts = (model: OracleModel, capacityRps: number) =>
  new Set(model.jobs.map(lastStartOf(model, capacityRps))).size === model.jobs.length;

/** The served requests' completion times from their first attempt, by the documented rule (a linear scan). */
function edfModel(model: OracleModel, capacityRps: number): number[] {
  const serviceS = model.slots / capacityRps;
  const left = [...model.jobs];
  const times: number[] = [];
  const lastStart = lastStartOf(model, capacityRps);
  let t = 0;
  while (t <= model.endS) {
    const rate = model.rateAt(t);
    if (!(rate > 0)) break;
    const step = 1 / rate;
    // The start at t stands for any moment of [t, t + step): whoever reaches the router within the step and whose
    // last useful start has not passed may take it.
    let pick = -1;
    for (let i = 0; i < left.length; i++) {
      const j = left[i] as OracleJob;
      if (j.release < t + step && lastStart(j) >= t && (pick < 0 || lastStart(j) < lastStart(left[pick] as OracleJob)))
        pick = i;
    }
    if (pick < 0) {
      // Nobody may start: the fleet skips whole steps to the one the next first attempt comes in (or stops).
      const later = left.filter((j) => j.release >= t + step).map((j) => j.release);
      if (later.length === 0) break;
      t += Math.max(1, Math.floor((Math.min(...later) - t) / step)) * step;
      continue;
    }
    const job = left.splice(pick, 1)[0] as OracleJob;
    const done = t + serviceS + job.tail;
    if (done <= model.endS) times.push(done - job.arrival);
    t += step;
  }
  return times;
}

/**
 * The most requests any schedule of the capacity model serves (within `horizonS` of their first attempt, if
 * given): starts at least 1 / rate(previous start) apart, each within its window, completing by the run's end.
 * Every order of every subset, each request started as early as allowed (the rate only falls, so earlier is
 * never worse). The same float expressions as the code, so that boundary cases agree.
 */
function bruteForceMost(model: OracleModel, capacityRps: number, horizonS = Number.POSITIVE_INFINITY): number {
  const serviceS = model.slots / capacityRps;
  const jobs = model.jobs;
  let best = 0;
  const search = (used: number, count: number, nextFree: number) => {
    best = Math.max(best, count);
    if (best === jobs.length) return; // everyone served: nothing better to find
    for (let i = 0; i < jobs.length; i++) {
      if (used & (1 << i)) continue;
      const j = jobs[i] as OracleJob;
      const s = Math.max(nextFree, j.release);
      const done = s + serviceS + j.tail;
      // A start needs a fleet: none once every replica is lost.
      if (s > j.deadline || done > model.endS || done - j.arrival > horizonS || !(model.rateAt(s) > 0)) continue;
      search(used | (1 << i), count + 1, s + 1 / model.rateAt(s));
    }
  };
  search(0, 0, 0);
  return best;
}

// ---- the properties --------------------------------------------------------------------------------------------

describe("oracleModel (model-based)", () => {
  it("gives each request the documented window for its client style, and the documented fleet", () => {
    fc.assert(
      fc.property(scenarioShapeArb, capacityArb, arrivalsArb(40, 30_000), (shape, capacityRps, arrivalsMs) => {
        const scenario = scenarioOf(shape);
        const workload = workloadOf(arrivalsMs);
        const model = oracleModel(scenario, workload, capacityRps);
        const queueS = queueDrainS(scenario, capacityRps);
        expect(model.jobs).toHaveLength(workload.length);
        workload.forEach((request, i) => {
          const job = model.jobs[i] as OracleJob;
          const client = clientOf(scenario, request.id);
          const style = client.profile.style;
          const oneWayS = client.roundTripMs / 2000 + scenario.clients.workerToRouterMs / 1000;
          const retries = style === "no_show" ? 0 : scenario.client.maxRetries;
          expect(job.arrival).toBe(request.arrivalMs / 1000);
          expect(job.release).toBeCloseTo(job.arrival + oneWayS, 9);
          expect(job.tail).toBeCloseTo(oneWayS, 9);
          const windowS = job.deadline - job.release;
          if (style === "no_show") expect(windowS).toBeCloseTo(queueS, 9);
          else if (style === "backoff_only") {
            let backoffS = 0;
            for (let n = 0; n < retries; n++) backoffS += sdkBackoffS(n) + 2 * oneWayS;
            expect(windowS).toBeCloseTo(queueS + backoffS, 9);
          } else {
            // The hint styles: per retry, the way back to the client, the longest hint it honours (at most 120 s)
            // and the way to the router: when the simulated client's retry reaches the router at the latest.
            const hintS = Math.min(HONOURS_UP_TO_S[style], MAX_HINT_S);
            expect(windowS).toBeCloseTo(queueS + retries * (hintS + 2 * oneWayS), 9);
          }
          expect(windowS).toBeLessThanOrEqual(queueS + retries * (MAX_HINT_S + 2 * oneWayS) + EPS_S);
        });

        const speeds = scenario.fleet.replicas.flatMap((g) => Array.from({ length: g.count }, () => g.speed));
        const total = speeds.reduce((s, v) => s + v, 0);
        expect(model.slots).toBe(speeds.length * scenario.fleet.maxOngoingRequests);
        expect(model.endS).toBe(shape.trafficS + shape.tailS);
        const loss = scenario.fleet.loss;
        const kept = loss ? speeds.slice(0, speeds.length - loss.replicas).reduce((s, v) => s + v, 0) : total;
        for (const t of [0, 0.25, ...(loss ? [loss.atS - 1e-6, loss.atS, loss.atS + 1] : []), model.endS]) {
          const expected = capacityRps * ((loss && t >= loss.atS ? kept : total) / total);
          expect(model.rateAt(t)).toBeCloseTo(expected, 9);
        }
      }),
      PARAMS,
    );
  });

  it("caps a client that honours any hint at 120 s per retry, whatever the round trip", () => {
    // openai_node and headerless_hints read any hint; the oracle's longest is 120 s per retry. With zero travel
    // the window is exactly the queue's drain plus 120 s per retry.
    fc.assert(
      fc.property(
        scenarioShapeArb,
        capacityArb,
        fc.constantFrom("openai_node" as const, "headerless_hints" as const),
        arrivalsArb(10, 30_000),
        (shape, capacityRps, style, arrivalsMs) => {
          const scenario = scenarioOf({
            ...shape,
            mix: { [style]: 1 },
            roundTrip: { kind: "zero" },
            workerToRouterMs: 0,
          });
          const model = oracleModel(scenario, workloadOf(arrivalsMs), capacityRps);
          const expected = queueDrainS(scenario, capacityRps) + scenario.client.maxRetries * MAX_HINT_S;
          for (const job of model.jobs) {
            expect(job.release).toBe(job.arrival);
            expect(job.deadline - job.release).toBeCloseTo(expected, 9);
          }
        },
      ),
      PARAMS,
    );
  });
});

describe("computeOracle (model-based)", () => {
  it("serves exactly what the documented earliest-deadline-first rule serves, with the same curve", () => {
    fc.assert(
      fc.property(scenarioShapeArb, capacityArb, arrivalsArb(30, 30_000), (shape, capacityRps, arrivalsMs) => {
        const scenario = scenarioOf(shape);
        const workload = workloadOf(arrivalsMs);
        const model = oracleModel(scenario, workload, capacityRps);
        fc.pre(distinctLastStarts(model, capacityRps));
        const times = edfModel(model, capacityRps);
        const n = workload.length;
        const result = computeOracle(scenario, workload, capacityRps);
        expect(result.requests).toBe(n);
        expect(result.served).toBe(times.length);
        expect(result.servedFraction).toBe(n > 0 ? times.length / n : 0);
        expect(result.servedWithinS).toEqual(
          Object.fromEntries(
            COMPLETION_HORIZONS_S.map((h) => [String(h), n > 0 ? times.filter((x) => x <= h).length / n : 0]),
          ),
        );
      }),
      PARAMS,
    );
  });

  it("is an upper bound: it serves at least as many requests as any schedule of its capacity model", () => {
    // Off the start grid too: waiting for a request about to arrive with a narrower window, or keeping the last
    // start of the run for a request that can still complete, never beats it.
    fc.assert(
      fc.property(scenarioShapeArb, capacityArb, arrivalsArb(6, 8_000), (shape, capacityRps, arrivalsMs) => {
        const scenario = scenarioOf(shape);
        const workload = workloadOf(arrivalsMs);
        const model = oracleModel(scenario, workload, capacityRps);
        const result = computeOracle(scenario, workload, capacityRps);
        expect(result.served).toBeGreaterThanOrEqual(bruteForceMost(model, capacityRps));
        expect(result.served).toBeLessThanOrEqual(workload.length);
      }),
      PARAMS,
    );
  });

  it("the counterexample that found the old rule short: a no-show arriving half a start after a patient client", () => {
    // One slot at 1 start/s, no queue: an openai_node client at 0 s (a window of 240 s) and a no-show at 0.5 s
    // (a window of none). Starting the first at once lost the second; both can be served.
    const shape = {
      seed: 1,
      trafficS: 1,
      tailS: 10,
      groups: [{ count: 1, speed: 1 }],
      maxOngoing: 1,
      shards: 1,
      maxQueued: 0,
      queueTimeoutS: 0.1,
      maxRetries: 2,
      mix: { openai_node: 1 },
      roundTrip: { kind: "zero" as const },
      workerToRouterMs: 0,
      loss: null,
    };
    const nodeClient = scenarioOf(shape);
    const ids = [0, 1, 2, 3, 4, 5, 6, 7].filter((id) => clientOf(nodeClient, id).profile.style === "openai_node");
    expect(ids.length).toBeGreaterThan(0);
    const mixed = scenarioOf({ ...shape, mix: { openai_node: 1, no_show: 1 } });
    const node = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].find((id) => clientOf(mixed, id).profile.style === "openai_node");
    const noShow = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].find((id) => clientOf(mixed, id).profile.style === "no_show");
    if (node === undefined || noShow === undefined) throw new Error("no such clients in the first ten");
    const workload = [
      { ...workloadOf([0])[0], id: node, arrivalMs: 0 },
      { ...workloadOf([500])[0], id: noShow, arrivalMs: 500 },
    ] as WorkloadRequest[];
    expect(computeOracle(mixed, workload, 1).served).toBe(2);
  });

  it("serves the most any schedule can where earliest-deadline-first is optimal (first attempts on the start grid)", () => {
    fc.assert(
      fc.property(gridInstanceArb, ({ shape, capacityRps, steps }) => {
        const scenario = scenarioOf(shape);
        const workload = workloadOf(gridArrivalsMs(steps, capacityRps));
        const model = oracleModel(scenario, workload, capacityRps);
        expect(computeOracle(scenario, workload, capacityRps).served).toBe(bruteForceMost(model, capacityRps));
      }),
      PARAMS,
    );
  });

  it("on the start grid, a request more, a retry more or twice the capacity never serves fewer", () => {
    fc.assert(
      fc.property(gridInstanceArb, fc.integer({ min: 0, max: 24 }), ({ shape, capacityRps, steps }, extra) => {
        const scenario = scenarioOf(shape);
        const arrivalsMs = gridArrivalsMs(steps, capacityRps);
        const served = computeOracle(scenario, workloadOf(arrivalsMs), capacityRps).served;

        const more = workloadOf([...arrivalsMs, (extra * 1000) / capacityRps]);
        expect(computeOracle(scenario, more, capacityRps).served).toBeGreaterThanOrEqual(served);

        const patient = scenarioOf({ ...shape, maxRetries: shape.maxRetries + 1 });
        expect(computeOracle(patient, workloadOf(arrivalsMs), capacityRps).served).toBeGreaterThanOrEqual(served);

        // No queue: its drain time (queued x shards / capacity) would shrink with the capacity and narrow every
        // window; the old start grid lies on the new one.
        const noQueue = scenarioOf({ ...shape, maxQueued: 0 });
        const before = computeOracle(noQueue, workloadOf(arrivalsMs), capacityRps).served;
        expect(computeOracle(noQueue, workloadOf(arrivalsMs), 2 * capacityRps).served).toBeGreaterThanOrEqual(before);
      }),
      PARAMS,
    );
  });

  it("is deterministic, ignores the workload's order and leaves it unchanged", () => {
    fc.assert(
      fc.property(
        scenarioShapeArb,
        capacityArb,
        arrivalsArb(30, 30_000),
        fc.integer({ min: 0, max: 1_000_000 }),
        (shape, capacityRps, arrivalsMs, shuffleSeed) => {
          const scenario = scenarioOf(shape);
          const workload = workloadOf(arrivalsMs);
          const copy = structuredClone(workload);
          const first = computeOracle(scenario, workload, capacityRps);
          expect(computeOracle(scenario, workload, capacityRps)).toEqual(first);
          expect(workload).toEqual(copy);
          // Ties in last chance may go either way in another order; the order of the rest must not matter.
          fc.pre(distinctLastStarts(oracleModel(scenario, workload, capacityRps), capacityRps));
          const random = randomStream(shuffleSeed, "shuffle");
          const shuffled = [...workload].sort(() => random() - 0.5);
          expect(computeOracle(scenario, shuffled, capacityRps)).toEqual(first);
        },
      ),
      PARAMS,
    );
  });
});

describe("poolOracles", () => {
  it("sums requests and served, and weights each seed's curve by its requests", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(scenarioShapeArb, capacityArb, arrivalsArb(20, 20_000)), { minLength: 1, maxLength: 3 }),
        (seeds) => {
          const results = seeds.map(([shape, capacityRps, arrivalsMs]) =>
            computeOracle(scenarioOf(shape), workloadOf(arrivalsMs), capacityRps),
          );
          const pooled = poolOracles(results);
          const requests = results.reduce((s, r) => s + r.requests, 0);
          const served = results.reduce((s, r) => s + r.served, 0);
          expect(pooled.requests).toBe(requests);
          expect(pooled.served).toBe(served);
          expect(pooled.servedFraction).toBe(requests > 0 ? served / requests : 0);
          for (const h of COMPLETION_HORIZONS_S) {
            const count = results.reduce((s, r) => s + (r.servedWithinS[String(h)] ?? 0) * r.requests, 0);
            expect(pooled.servedWithinS[String(h)]).toBeCloseTo(requests > 0 ? count / requests : 0, 12);
          }
        },
      ),
      PARAMS,
    );
  });
});
