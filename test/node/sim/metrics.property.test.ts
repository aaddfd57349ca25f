import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DrainAccuracyTracker, type DrainObservation } from "../../../src/core/drain-accuracy";
import { CLIENT_STYLES } from "../../../src/sim/client-model";
import { type ClientStyleOutcome, outcomesByClientStyle } from "../../../src/sim/client-outcomes";
import { poolTraces } from "../../../src/sim/evaluation";
import { IdleMeter } from "../../../src/sim/idle-meter";
import { computeMetrics, type RunMetrics } from "../../../src/sim/metrics";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import type { AttemptRecord, DrainSample, LedgerSample, RequestTrace, RunTrace } from "../../../src/sim/trace";
import { generateWorkload } from "../../../src/sim/workload";
import { propertyRuns } from "../../support/property-runs";
import { smallBurst } from "./small-scenario";

/**
 * The simulator's measurements, held against models written from their documentation (docs/evaluation.md,
 * "Metrics", and the JSDoc of src/sim/metrics.ts, src/sim/client-outcomes.ts and src/sim/trace.ts), never by
 * calling the code under test:
 *
 * - `computeMetrics` (src/sim/metrics.ts) on arbitrary request histories (any client style; one to five attempts,
 *   refused at once or after a queue wait, with or without a hint, retried at the hint or off it; served, given up,
 *   unfinished while sleeping or on a replica; served exactly on a horizon or 1 ms either side of it; empty runs,
 *   runs without a refusal, runs refused throughout): the completion curve (share of OFFERED requests served within
 *   5/15/30/60/120 s of the client's first attempt, a request never served counting as never), served share and
 *   goodput (per second of the simulated span), attempts per offered request (failed requests' included), attempts
 *   per success, refusals and hint coverage, retries, X (of the retries made at the hint, the share placed on that
 *   attempt) and the any-retry rate, give-ups and unfinished requests, the nearest-rank p50/p99 time to success and
 *   p50 time on a replica, the mean wait (capped at 120 s, a request never served counting 120 s), served share per
 *   client, idle while waiting (over the fleet's slot-seconds), the drain error (relative, (suggested - observed) /
 *   observed, median signed, median and p90 absolute) and the ledger's totals and promise-weighted trust;
 * - the same figures of seeds pooled by `poolTraces` (src/sim/evaluation.ts): those of the union of their requests;
 * - `outcomesByClientStyle` (src/sim/client-outcomes.ts): per style, in `CLIENT_STYLES` order, absent styles left
 *   out: served share, served within 60 s, its part of all that was lost, attempts and queue timeouts per request;
 *   its 60 s figure agrees with the completion curve's;
 * - `IdleMeter` (src/sim/idle-meter.ts): the integral of min(free slots, clients sleeping) over time;
 * - `DrainAccuracyTracker` (src/core/drain-accuracy.ts), which makes the simulator's drain samples: a rejection at t
 *   with depth D >= 1 and drain counter C0 is observed drained at the first drain that takes the counter to C0 + D;
 * - the simulator's own traces (a small burst under several policies) measured as the model measures them, and
 *   shaped as the model assumes (a served request's last attempt placed it; a hinted retry follows a hinted refusal).
 *
 * Where the docs are silent the model encodes the code's current choice, and says so: the shares of an empty run
 * are 0; a drain sample observed at once (0 s) has no relative error and is left out; a give-up is a request whose
 * trace says `gave_up`. Times are drawn on a 1/8 ms grid, exact in binary, so that a request served exactly on a
 * horizon is exactly on it.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);
const PARAMS = { numRuns: RUNS, seed: SEED };

/** docs/evaluation.md: "served within 5, 15, 30, 60 and 120 s of their first attempt". */
const HORIZONS_S = [5, 15, 30, 60, 120] as const;
/** The mean wait's cap: "capped at 120 s ... one never served counting 120 s". */
const WAIT_CAP_S = 120;

// ---- the model, from docs/evaluation.md's "Metrics" ----------------------------------------------------------

/** Nearest-rank percentile: the ceil(p n / 100)-th smallest value, ranks counted in integers (no float rank). */
function nearestRank(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.floor((p * sorted.length + 99) / 100));
  return sorted[rank - 1] as number;
}

/** a / b, or `null` where there is nothing to divide by (a rate of no events is n/a, not 0 or 1). */
const rateOf = (a: number, b: number): number | null => (b > 0 ? a / b : null);

const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);

const isServed = (r: RequestTrace): boolean => r.result === "served";

/** From the client's first attempt (`arrivalMs`: when it sent it) to the end of the response, ms. */
const waitMs = (r: RequestTrace): number => (r.completedAtMs as number) - r.arrivalMs;

/** The attempt that placed a served request: its last admitted one. */
function placingAttempt(r: RequestTrace): AttemptRecord | undefined {
  return [...r.attempts].reverse().find((a) => a.outcome === "admitted");
}

/** Every figure of `computeMetrics`, computed the plain way from the documented definitions. */
function modelMetrics(trace: RunTrace): RunMetrics {
  const requests = trace.requests;
  const offered = requests.length;
  const served = requests.filter(isServed);
  // An empty run has shares of 0 (the code's choice; the docs do not say what a share of nothing is).
  const shareOfOffered = (n: number): number => (offered > 0 ? n / offered : 0);
  const attempts = requests.flatMap((r) => r.attempts);
  const retries = requests.flatMap((r) => r.attempts.slice(1));
  const atHint = retries.filter((a) => a.hinted);
  const refusals = attempts.filter((a) => a.outcome === "rejected");
  const placed = (as: readonly AttemptRecord[]) => as.filter((a) => a.outcome === "admitted").length;
  const byClient: RunMetrics["byClient"] = {};
  for (const style of new Set(requests.map((r) => r.client))) {
    const mine = requests.filter((r) => r.client === style);
    const mineServed = mine.filter(isServed).length;
    byClient[style] = { requests: mine.length, served: mineServed, servedFraction: mineServed / mine.length };
  }
  const onReplicaMs = served.flatMap((r) => {
    const a = placingAttempt(r);
    return a ? [(r.completedAtMs as number) - a.answeredAtMs] : [];
  });
  const errors = trace.drainSamples
    .filter((s) => s.observedS > 0)
    .map((s) => (s.suggestedS - s.observedS) / s.observedS);
  const absErrors = errors.map(Math.abs);
  const msToS = (ms: number | null) => (ms === null ? null : ms / 1000);
  return {
    requests: offered,
    served: served.length,
    gaveUp: requests.filter((r) => r.result === "gave_up").length,
    unfinished: requests.filter((r) => r.result === "unfinished").length,
    retries: retries.length,
    hintedRetries: atHint.length,
    admittedRetryRate: rateOf(placed(atHint), atHint.length),
    anyRetryAdmittedRate: rateOf(placed(retries), retries.length),
    attemptsPerSuccess: rateOf(sum(served.map((r) => r.attempts.length)), served.length),
    attemptsPerOffered: shareOfOffered(attempts.length),
    refusals: refusals.length,
    hintCoverage: rateOf(refusals.filter((a) => a.hintMs !== undefined).length, refusals.length),
    // Compared in ms: on the 1/8 ms grid a request served exactly on a horizon is exactly on it.
    servedWithinS: Object.fromEntries(
      HORIZONS_S.map((h) => [String(h), shareOfOffered(served.filter((r) => waitMs(r) <= h * 1000).length)]),
    ),
    byClient,
    meanWaitS: shareOfOffered(
      sum(requests.map((r) => (isServed(r) ? Math.min(waitMs(r) / 1000, WAIT_CAP_S) : WAIT_CAP_S))),
    ),
    timeToSuccessP50S: msToS(nearestRank(served.map(waitMs), 50)),
    timeToSuccessP99S: msToS(nearestRank(served.map(waitMs), 99)),
    onReplicaP50S: msToS(nearestRank(onReplicaMs, 50)),
    goodputRps: trace.spanS > 0 ? served.length / trace.spanS : 0,
    servedFraction: shareOfOffered(served.length),
    idleWhileWaitingFraction:
      trace.fleetSlots > 0 && trace.spanS > 0 ? trace.idleWhileWaitingSlotS / (trace.fleetSlots * trace.spanS) : 0,
    idleWhileWaitingSlotS: trace.idleWhileWaitingSlotS,
    // A sample observed drained at once (0 s) has no relative error: left out (the code's choice).
    drainSamples: errors.length,
    drainRelErrorMedian: nearestRank(errors, 50),
    drainAbsRelErrorMedian: nearestRank(absErrors, 50),
    drainAbsRelErrorP90: nearestRank(absErrors, 90),
    ...(trace.ledger ? { ledger: modelLedger(trace.ledger) } : {}),
  };
}

/** The ledger's totals, and its trust weighted by the promises made in each second. */
function modelLedger(samples: readonly LedgerSample[]): NonNullable<RunMetrics["ledger"]> {
  const made = sum(samples.map((s) => s.made));
  return {
    made,
    kept: sum(samples.map((s) => s.kept)),
    broken: sum(samples.map((s) => s.broken)),
    noShow: sum(samples.map((s) => s.noShow)),
    trustAtPromise: made > 0 ? sum(samples.map((s) => s.made * s.trust)) / made : null,
  };
}

/** Float sums taken in another order: equal up to rounding. */
function near(actual: number | null | undefined, expected: number | null | undefined, what: string): void {
  if (expected === null || expected === undefined) {
    expect(actual, what).toBe(expected);
    return;
  }
  expect(typeof actual, what).toBe("number");
  const tolerance = 1e-9 * Math.max(1, Math.abs(expected));
  if (!(Math.abs((actual as number) - expected) <= tolerance)) throw new Error(`${what}: ${actual} != ${expected}`);
}

/** Every figure equal to the model's: counts and shares exactly (same quotient), sums of floats up to rounding. */
function expectMetrics(actual: RunMetrics, expected: RunMetrics): void {
  near(actual.meanWaitS, expected.meanWaitS, "meanWaitS");
  near(actual.ledger?.trustAtPromise, expected.ledger?.trustAtPromise, "ledger.trustAtPromise");
  const exact = (m: RunMetrics) => ({
    ...m,
    meanWaitS: 0,
    ...(m.ledger ? { ledger: { ...m.ledger, trustAtPromise: 0 } } : {}),
  });
  expect(exact(actual)).toStrictEqual(exact(expected));
}

// ---- arbitrary request histories ----------------------------------------------------------------------------

/** A time in ms on a 1/8 ms grid: exact in binary floating point, so sums and differences are exact. */
const gridMs = (maxMs: number) => fc.integer({ min: 0, max: maxMs * 8 }).map((n) => n / 8);

const REFUSAL_REASONS = ["queue_full", "queue_timeout", "no_replica_available", "replica_gone", "router_restart"];

/** One attempt as drawn: how long the router kept it, what it answered, and how the client came back. */
const attemptStoryArb = fc.record({
  queuedMs: fc.oneof(fc.constant(0), gridMs(35_000)),
  hintMs: fc.option(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60_000 })), { nil: undefined }),
  reason: fc.constantFrom(...REFUSAL_REASONS),
  /** Whether the client's next attempt is made at the hint (when there is one) or at its own backoff. */
  retryAtHint: fc.boolean(),
  backoffMs: gridMs(8_000),
});

const ENDS = ["served", "gave_up", "unfinished_sleeping", "unfinished_on_replica", "aborted"] as const;

const requestStoryArb = fc.record({
  client: fc.constantFrom(...CLIENT_STYLES),
  arrivalMs: gridMs(600_000),
  /** Client to router: the first attempt reaches the router this long after the client sent it. */
  oneWayMs: gridMs(400),
  attempts: fc.array(attemptStoryArb, { minLength: 1, maxLength: 5 }),
  end: fc.constantFrom(...ENDS, "served", "served"),
  serviceMs: gridMs(200_000),
  /** Served on a horizon, or 1 ms either side of it (where the history allows). */
  onHorizon: fc.option(fc.record({ h: fc.constantFrom(...HORIZONS_S), offsetMs: fc.constantFrom(-1, 0, 1) }), {
    nil: undefined,
  }),
});
type RequestStory = typeof requestStoryArb extends fc.Arbitrary<infer T> ? T : never;

/**
 * The trace of one drawn request, timed as the simulator times it: the router sees each attempt one way after the
 * client sent it; a refusal travels back, the client sleeps the hint (a retry "at the hint") or its own backoff,
 * and sends again. Every attempt but the last was refused; the last placed the request unless it ended refused.
 */
function requestOf(story: RequestStory, id: number): RequestTrace {
  const attempts: AttemptRecord[] = [];
  const placedAtEnd = story.end === "served" || story.end === "aborted" || story.end === "unfinished_on_replica";
  let atMs = story.arrivalMs + story.oneWayMs;
  let atHint = false;
  story.attempts.forEach((s, i) => {
    const answeredAtMs = atMs + s.queuedMs;
    if (i === story.attempts.length - 1 && placedAtEnd) {
      attempts.push({ atMs, outcome: "admitted", answeredAtMs, hinted: atHint });
      return;
    }
    // A replica found gone after placement answers 502 with no hint.
    const hintMs = s.reason === "replica_gone" ? undefined : s.hintMs;
    attempts.push({
      atMs,
      outcome: "rejected",
      answeredAtMs,
      hinted: atHint,
      status: s.reason === "replica_gone" ? 502 : s.reason === "no_replica_available" ? 503 : 429,
      reason: s.reason,
      ...(hintMs === undefined ? {} : { hintMs }),
    });
    atHint = hintMs !== undefined && hintMs > 0 && s.retryAtHint;
    atMs = answeredAtMs + 2 * story.oneWayMs + (atHint ? (hintMs as number) : s.backoffMs);
  });
  const base = { id, arrivalMs: story.arrivalMs, client: story.client, roundTripMs: 2 * story.oneWayMs, attempts };
  const trace = { ...base, outputTokens: 16 };
  if (story.end === "served") {
    const placedAtMs = (attempts.at(-1) as AttemptRecord).answeredAtMs;
    const tie = story.onHorizon && story.arrivalMs + story.onHorizon.h * 1000 + story.onHorizon.offsetMs;
    const completedAtMs = tie !== undefined && tie >= placedAtMs ? tie : placedAtMs + story.serviceMs;
    return { ...trace, result: "served", completedAtMs };
  }
  return { ...trace, result: story.end === "gave_up" || story.end === "aborted" ? "gave_up" : "unfinished" };
}

const drainSampleArb: fc.Arbitrary<DrainSample> = fc.record({
  atMs: gridMs(600_000),
  suggestedS: fc.integer({ min: 0, max: 120_000 }).map((ms) => ms / 1000),
  // Drained in the very ms of the rejection (0 s) now and then.
  observedS: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 1, max: 200_000 }).map((ms) => ms / 1000),
  ),
});

const ledgerSampleArb: fc.Arbitrary<LedgerSample> = fc.record({
  atMs: fc.integer({ min: 1, max: 600 }).map((s) => s * 1000),
  made: fc.integer({ min: 0, max: 6 }),
  kept: fc.integer({ min: 0, max: 6 }),
  broken: fc.integer({ min: 0, max: 6 }),
  noShow: fc.integer({ min: 0, max: 6 }),
  trust: fc.integer({ min: 0, max: 100 }).map((t) => t / 100),
});

/** A run: requests drawn as above, the meters' totals, and sometimes a ledger. */
const runArb = (maxRequests: number): fc.Arbitrary<RunTrace> =>
  fc
    .record({
      stories: fc.array(requestStoryArb, { maxLength: maxRequests }),
      drainSamples: fc.array(drainSampleArb, { maxLength: 25 }),
      idleWhileWaitingSlotS: gridMs(5_000),
      // Half slots: with a replica lost the trace's fleet is a mean of two sizes.
      fleetSlots: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 128 }).map((n) => n / 2),
      ),
      spanS: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_000 })),
      ledger: fc.option(fc.array(ledgerSampleArb, { maxLength: 12 }), { nil: undefined }),
    })
    .map(({ stories, ledger, ...rest }) => ({
      requests: stories.map(requestOf),
      trafficS: rest.spanS / 2,
      ...rest,
      ...(ledger ? { ledger } : {}),
    }));

/** A run of `requests` and nothing else (one slot over 100 s). */
function runOf(requests: RequestTrace[]): RunTrace {
  return { requests, drainSamples: [], idleWhileWaitingSlotS: 0, fleetSlots: 1, spanS: 100, trafficS: 100 };
}

/** A request sent at `arrivalS`, placed on its first attempt and served `afterMs` later (undefined: it gave up refused). */
function servedAfter(id: number, arrivalS: number, afterMs: number | undefined): RequestTrace {
  const arrivalMs = arrivalS * 1000;
  if (afterMs === undefined)
    return {
      id,
      arrivalMs,
      client: "openai_node",
      roundTripMs: 0,
      attempts: [{ atMs: arrivalMs, outcome: "rejected", answeredAtMs: arrivalMs, hinted: false, hintMs: 1000 }],
      result: "gave_up",
      outputTokens: 1,
    };
  return {
    id,
    arrivalMs,
    client: "openai_node",
    roundTripMs: 0,
    attempts: [{ atMs: arrivalMs, outcome: "admitted", answeredAtMs: arrivalMs, hinted: false }],
    result: "served",
    completedAtMs: arrivalMs + afterMs,
    outputTokens: 1,
  };
}

describe("computeMetrics against the documented definitions", () => {
  it("every figure of an arbitrary run equals the model's", () => {
    fc.assert(
      fc.property(runArb(40), (run) => expectMetrics(computeMetrics(run), modelMetrics(run))),
      PARAMS,
    );
  });

  it("the order of the requests changes no figure", () => {
    fc.assert(
      fc.property(runArb(20), fc.infiniteStream(fc.nat()), (run, keys) => {
        const order = run.requests.map((r) => [keys.next().value as number, r] as const);
        const shuffled = { ...run, requests: order.sort((a, b) => a[0] - b[0]).map(([, r]) => r) };
        expectMetrics(computeMetrics(shuffled), modelMetrics(run));
      }),
      PARAMS,
    );
  });

  it("seeds pooled by poolTraces measure as the union of their requests, samples, idle time and spans", () => {
    fc.assert(
      fc.property(fc.array(runArb(15), { minLength: 1, maxLength: 3 }), (runs) => {
        // The seeds of one scenario share its fleet.
        const seeds = runs.map((r) => ({ ...r, fleetSlots: (runs[0] as RunTrace).fleetSlots }));
        const union: RunTrace = {
          requests: seeds.flatMap((r) => r.requests),
          drainSamples: seeds.flatMap((r) => r.drainSamples),
          idleWhileWaitingSlotS: sum(seeds.map((r) => r.idleWhileWaitingSlotS)),
          fleetSlots: (seeds[0] as RunTrace).fleetSlots,
          spanS: sum(seeds.map((r) => r.spanS)),
          trafficS: sum(seeds.map((r) => r.trafficS)),
          ...(seeds.every((r) => r.ledger) ? { ledger: seeds.flatMap((r) => r.ledger ?? []) } : {}),
        };
        const expected = modelMetrics(union);
        const actual = computeMetrics(poolTraces(seeds));
        // Summed in another order: the idle share is equal up to rounding.
        near(actual.idleWhileWaitingFraction, expected.idleWhileWaitingFraction, "idleWhileWaitingFraction");
        near(actual.idleWhileWaitingSlotS, expected.idleWhileWaitingSlotS, "idleWhileWaitingSlotS");
        expectMetrics(
          { ...actual, idleWhileWaitingFraction: 0, idleWhileWaitingSlotS: 0 },
          { ...expected, idleWhileWaitingFraction: 0, idleWhileWaitingSlotS: 0 },
        );
      }),
      PARAMS,
    );
  });

  it("a request served exactly on a horizon counts within it, 1 ms later it does not; the mean wait caps at 120 s", () => {
    // Sent at 7.5 s: 4.999, 5.000, 5.001, 15.000, 29.999, 60.001, 119.999, 120.000, 120.001 s, and never.
    const afterMs = [4_999, 5_000, 5_001, 15_000, 29_999, 60_001, 119_999, 120_000, 120_001, undefined];
    const m = computeMetrics(runOf(afterMs.map((ms, i) => servedAfter(i, 7.5, ms))));
    expect(m.servedWithinS).toStrictEqual({ "5": 0.2, "15": 0.4, "30": 0.5, "60": 0.5, "120": 0.8 });
    expect(m.served).toBe(9);
    expect(m.servedFraction).toBe(0.9);
    expect(m.gaveUp).toBe(1);
    // (4.999 + 5 + 5.001 + 15 + 29.999 + 60.001 + 119.999 + 120 + 120 + 120) / 10.
    near(m.meanWaitS, 599.999 / 10, "meanWaitS");
    // Nearest rank of 9 served: p50 the 5th (29.999 s), p99 the 9th (120.001 s).
    expect(m.timeToSuccessP50S).toBe(29.999);
    expect(m.timeToSuccessP99S).toBe(120.001);
    expect(m.hintCoverage).toBe(1);
    expectMetrics(m, modelMetrics(runOf(afterMs.map((ms, i) => servedAfter(i, 7.5, ms)))));
  });

  it("on every horizon and 1 ms either side, whatever the history before it, the curve agrees with the model", () => {
    const tieArb = fc.array(
      requestStoryArb.map((s) => ({
        ...s,
        end: "served" as const,
        onHorizon: s.onHorizon ?? { h: 5 as const, offsetMs: 0 as const },
        attempts: s.attempts.map((a) => ({ ...a, queuedMs: 0, backoffMs: Math.min(a.backoffMs, 500) })),
      })),
      { minLength: 1, maxLength: 20 },
    );
    fc.assert(
      fc.property(tieArb, (stories) => {
        const run = runOf(stories.map(requestOf));
        expectMetrics(computeMetrics(run), modelMetrics(run));
      }),
      PARAMS,
    );
  });

  it("an empty run: no share is NaN, every rate of nothing is n/a", () => {
    const m = computeMetrics({ ...runOf([]), spanS: 0, fleetSlots: 0 });
    expect(m.servedWithinS).toStrictEqual({ "5": 0, "15": 0, "30": 0, "60": 0, "120": 0 });
    expect([m.servedFraction, m.attemptsPerOffered, m.meanWaitS, m.goodputRps, m.idleWhileWaitingFraction]).toEqual([
      0, 0, 0, 0, 0,
    ]);
    expect([m.admittedRetryRate, m.anyRetryAdmittedRate, m.attemptsPerSuccess, m.hintCoverage]).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect([m.timeToSuccessP50S, m.timeToSuccessP99S, m.onReplicaP50S, m.drainRelErrorMedian]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });

  it("zero refusals: hint coverage and X are n/a; all refused: nothing served, every wait 120 s", () => {
    const none = computeMetrics(runOf([servedAfter(0, 0, 800), servedAfter(1, 3, 2_400)]));
    expect([none.refusals, none.hintCoverage, none.retries, none.admittedRetryRate]).toEqual([0, null, 0, null]);
    expect(none.servedWithinS["5"]).toBe(1);
    const refused = (id: number, hintMs: number | undefined): RequestTrace => ({
      ...servedAfter(id, id, undefined),
      attempts: [0, 1, 2].map((k) => ({
        atMs: id * 1000 + k * 3000,
        outcome: "rejected",
        answeredAtMs: id * 1000 + k * 3000,
        hinted: k > 0 && hintMs !== undefined,
        ...(hintMs === undefined ? {} : { hintMs }),
      })),
    });
    const all = computeMetrics(runOf([refused(0, 3000), refused(1, undefined), refused(2, 3000), refused(3, 3000)]));
    expect(Object.values(all.servedWithinS)).toEqual([0, 0, 0, 0, 0]);
    expect([all.served, all.gaveUp, all.meanWaitS, all.attemptsPerOffered, all.attemptsPerSuccess]).toEqual([
      0,
      4,
      120,
      3,
      null,
    ]);
    // 12 refusals, 9 with a hint; 8 retries, 6 of them at the hint, none admitted.
    expect([all.refusals, all.hintCoverage, all.retries, all.hintedRetries]).toEqual([12, 0.75, 8, 6]);
    expect([all.admittedRetryRate, all.anyRetryAdmittedRate]).toEqual([0, 0]);
  });
});

// ---- outcomes per client style --------------------------------------------------------------------------------

/** The model computes the module's documented fields, each from the definitions above. */
type StyleOutcomeModel = ClientStyleOutcome;

/** Per style present, in `CLIENT_STYLES` order: shares of its own requests, and its lost share of all requests. */
function modelStyleOutcomes(run: RunTrace): StyleOutcomeModel[] {
  const total = run.requests.length;
  return CLIENT_STYLES.flatMap((style) => {
    const mine = run.requests.filter((r) => r.client === style);
    if (mine.length === 0) return [];
    const served = mine.filter(isServed);
    const attempts = mine.flatMap((r) => r.attempts);
    return [
      {
        style,
        requests: mine.length,
        served: served.length / mine.length,
        servedWithin60s: served.filter((r) => waitMs(r) <= 60_000).length / mine.length,
        lostOfAll: (mine.length - served.length) / total,
        attemptsPerRequest: attempts.length / mine.length,
        // "Attempts queued and then shed at the queue timeout".
        timedOutPerRequest: attempts.filter((a) => a.reason === "queue_timeout").length / mine.length,
      },
    ];
  });
}

describe("outcomesByClientStyle against the documented definitions", () => {
  it("every row of an arbitrary run equals the model's, and its 60 s figure agrees with the completion curve", () => {
    fc.assert(
      fc.property(runArb(40), (run) => {
        const rows = outcomesByClientStyle(run);
        expect(rows).toStrictEqual(modelStyleOutcomes(run));
        if (run.requests.length === 0) return;
        const within60 = sum(rows.map((r) => r.servedWithin60s * r.requests)) / run.requests.length;
        near(within60, computeMetrics(run).servedWithinS["60"], "served within 60 s, per style vs curve");
        near(sum(rows.map((r) => r.lostOfAll)), 1 - computeMetrics(run).servedFraction, "lost of all");
      }),
      PARAMS,
    );
  });
});

// ---- the idle meter --------------------------------------------------------------------------------------------

type MeterStep = { dtMs: number; what: "free" | "waiting"; delta: number };

const meterStepArb: fc.Arbitrary<MeterStep> = fc.record({
  dtMs: fc.oneof(fc.constant(0), gridMs(3_000)),
  what: fc.constantFrom("free" as const, "waiting" as const),
  delta: fc.integer({ min: -3, max: 3 }),
});

describe("IdleMeter against the integral of min(free slots, clients sleeping)", () => {
  it("integrates the minimum over time, ticked before every change as the simulator does", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 16 }),
        fc.array(meterStepArb, { maxLength: 60, size: "max" }),
        gridMs(3_000),
        (slots, steps, tailMs) => {
          let now = 0;
          const meter = new IdleMeter(() => now, slots);
          // The model: the piecewise-constant state, and its integral over each interval.
          let free = slots;
          let waiting = 0;
          let expectedSlotMs = 0;
          for (const step of steps) {
            expectedSlotMs += Math.min(free, waiting) * step.dtMs;
            now += step.dtMs;
            meter.tick();
            // Free slots stay within the fleet and sleeping clients are never negative, as in a run.
            if (step.what === "free") {
              const next = Math.min(slots, Math.max(0, free + step.delta));
              meter.freeSlots += next - free;
              free = next;
            } else {
              const next = Math.max(0, waiting + step.delta);
              meter.clientsWaiting += next - waiting;
              waiting = next;
            }
          }
          expectedSlotMs += Math.min(free, waiting) * tailMs;
          now += tailMs;
          meter.tick();
          near(meter.slotSeconds, expectedSlotMs / 1000, "idle slot-seconds");
        },
      ),
      PARAMS,
    );
  });
});

// ---- the drain tracker ------------------------------------------------------------------------------------------

type DrainStep =
  | { kind: "reject"; dtMs: number; depth: number; suggestedS: number | undefined }
  | { kind: "drain"; dtMs: number; by: number };

const drainStepArb: fc.Arbitrary<DrainStep> = fc.oneof(
  fc.record({
    kind: fc.constant("reject" as const),
    dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4_000 })),
    // D >= 1. With D = 0 (nothing queued) the docs' rule has the counter at C0 + 0 already, drained at once (0 s),
    // while the tracker waits for the next drain; no run of the evaluation makes a hinted refusal at depth 0.
    depth: fc.integer({ min: 1, max: 6 }),
    suggestedS: fc.option(
      fc.integer({ min: 0, max: 30_000 }).map((ms) => ms / 1000),
      { nil: undefined },
    ),
  }),
  fc.record({
    kind: fc.constant("drain" as const),
    dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4_000 })),
    by: fc.integer({ min: 1, max: 2 }),
  }),
);

/** Each rejection's observation: at the first later drain that takes the counter to C0 + D (none if none did). */
function modelDrainObservations(startCount: number, steps: readonly DrainStep[]): DrainObservation[] {
  let now = 0;
  let count = startCount;
  const timeline = steps.map((step) => {
    now += step.dtMs;
    if (step.kind === "drain") count += step.by;
    return { step, atMs: now, count };
  });
  return timeline.flatMap((event, i) => {
    if (event.step.kind !== "reject") return [];
    const target = event.count + event.step.depth;
    const drained = timeline.slice(i + 1).find((later) => later.step.kind === "drain" && later.count >= target);
    if (!drained) return [];
    const { depth: queueDepth, suggestedS } = event.step;
    return [{ atMs: event.atMs, queueDepth, suggestedS, observedS: (drained.atMs - event.atMs) / 1000 }];
  });
}

const observationKey = (o: DrainObservation) => JSON.stringify([o.atMs, o.queueDepth, o.suggestedS, o.observedS]);

describe("DrainAccuracyTracker against the documented observed drain time", () => {
  it("a rejection with depth D and counter C0 is observed drained when the counter reaches C0 + D", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.array(drainStepArb, { maxLength: 60, size: "max" }),
        (startCount, steps) => {
          const seen: DrainObservation[] = [];
          // As the simulator builds it: every observation kept, none dropped.
          const tracker = new DrainAccuracyTracker(Number.MAX_SAFE_INTEGER, 0, (o) => seen.push(o));
          let now = 0;
          let count = startCount;
          for (const step of steps) {
            now += step.dtMs;
            if (step.kind === "reject") tracker.recordRejection(now, step.depth, count, step.suggestedS);
            else {
              count += step.by;
              tracker.onDrain(now, count);
            }
          }
          const expected = modelDrainObservations(startCount, steps);
          expect(seen.map(observationKey).sort()).toStrictEqual(expected.map(observationKey).sort());
        },
      ),
      PARAMS,
    );
  });
});

// ---- the simulator's own traces --------------------------------------------------------------------------------

describe("the simulator's traces, measured as the model measures them", () => {
  const scenario = smallBurst();
  // Arrivals for a fleet of 20 req/s (about half what it measures): a burst that refuses and retries, without the
  // measuring run.
  const workload = generateWorkload(scenario, 20);
  const policies = EVAL_POLICIES.filter((p) => ["none", "static-5", "booked_capacity"].includes(p.id));

  it.each(policies.map((p) => [p.id, p] as const))(
    "%s: shaped as the model assumes, and measured alike",
    (_, policy) => {
      const run = runSimulation(scenario, policy, workload);
      expect(run.requests.some((r) => r.attempts.length > 1)).toBe(true);
      for (const r of run.requests) {
        const last = r.attempts.at(-1) as AttemptRecord;
        // The first attempt reaches the router after the client sent it; it is no retry.
        expect((r.attempts[0] as AttemptRecord).atMs).toBeGreaterThanOrEqual(r.arrivalMs);
        expect((r.attempts[0] as AttemptRecord).hinted).toBe(false);
        if (isServed(r)) {
          expect(last.outcome).toBe("admitted");
          expect(r.completedAtMs as number).toBeGreaterThanOrEqual(last.answeredAtMs);
        } else expect(r.completedAtMs).toBeUndefined();
        // Only the last attempt can have been placed; a retry at the hint follows a refusal that carried one.
        r.attempts.forEach((a, i) => {
          if (i < r.attempts.length - 1) expect(a.outcome).toBe("rejected");
          if (i > 0 && a.hinted) expect((r.attempts[i - 1] as AttemptRecord).hintMs).toBeDefined();
        });
      }
      expectMetrics(computeMetrics(run), modelMetrics(run));
      expect(outcomesByClientStyle(run)).toStrictEqual(modelStyleOutcomes(run));
    },
  );
});
