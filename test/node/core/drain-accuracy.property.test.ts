import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DRAIN_ERROR_BOUNDS, DrainAccuracyTracker, type DrainObservation } from "../../../src/core/drain-accuracy";
import { propertyRuns } from "../../support/property-runs";

/**
 * `DrainAccuracyTracker` (suggested vs observed drain time, the RFC's evidence) driven by arbitrary rejections and
 * drains, against a model written from its JSDoc and the spec's "Accuracy" paragraph
 * (/work/shared/spec/retry-after.md):
 *
 * - a rejection at t with depth D and drain counter C0 is observed drained at the first drain that brings the counter
 *   to C0 + D or past it (observed = that drain's time - t, in seconds; a clock that went back gives a negative one);
 *   a depth of 0 or less has drained already and is observed at once; several observed by one drain are observed
 *   nearest target first (equal targets in the order recorded);
 * - at most `maxPending` rejections wait: beyond that the oldest (the smallest `atMs`; of equal ages, the nearest
 *   target, then the first recorded) is dropped unobserved, whatever its target;
 * - `recent()` is the last `maxResults` observations, oldest first, and `onObservation` sees every one of them;
 * - `errorHistogram()` counts each hinted observation's error (suggested - observed) once, in the first bucket whose
 *   bound is at or above it (the last is +Inf), with the errors' sum and count; an observation without a hint is
 *   not in it.
 *
 * Steps include equal instants, a clock that goes back, drain counters that skip ahead (several drains reported at
 * once), fractional suggestions and depths at or below 0.
 */

const runs = propertyRuns(300, 20261206);

type Op =
  | { kind: "reject"; depth: number; suggestedS: number | undefined }
  | { kind: "drain"; by: number }
  | { kind: "clock"; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("reject" as const),
      depth: fc.oneof({ weight: 1, arbitrary: fc.constantFrom(-1, 0) }, { weight: 6, arbitrary: fc.nat(12) }),
      suggestedS: fc.option(
        fc.oneof(
          fc.constantFrom(0, 1, 2, 60, 120, -1, -60.5, 61),
          fc.double({ min: 0, max: 130, noNaN: true }),
          fc.integer({ min: 0, max: 70 }),
        ),
        { nil: undefined, freq: 4 },
      ),
    }),
  },
  {
    weight: 5,
    // Mostly one drain; sometimes none (the same counter again) or several at once.
    arbitrary: fc.record({ kind: fc.constant("drain" as const), by: fc.oneof(fc.constant(1), fc.nat(5)) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("clock" as const),
      ms: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 5_000, max: 200_000 }),
        fc.integer({ min: -3_000, max: -1 }),
      ),
    }),
  },
);

interface Pending {
  seq: number;
  atMs: number;
  queueDepth: number;
  suggestedS: number | undefined;
  target: number;
}

function run(ops: readonly Op[], maxPending: number, maxResults: number, startMs: number): string[] {
  const seen: DrainObservation[] = [];
  const tracker = new DrainAccuracyTracker(maxPending, maxResults, (o) => seen.push(o));
  let now = startMs;
  let drainCount = 0;
  let seq = 0;
  let pending: Pending[] = [];
  const all: DrainObservation[] = [];
  const bucketCounts = DRAIN_ERROR_BOUNDS.map(() => 0);
  let errorSum = 0;
  let errorCount = 0;
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}, drains ${drainCount}: ${what}`);
  const observe = (p: Pending) => {
    const observation = {
      atMs: p.atMs,
      queueDepth: p.queueDepth,
      suggestedS: p.suggestedS,
      observedS: (now - p.atMs) / 1000,
    };
    all.push(observation);
    if (p.suggestedS !== undefined) {
      const error = p.suggestedS - observation.observedS;
      const bucket = DRAIN_ERROR_BOUNDS.findIndex((le) => error <= le);
      bucketCounts[bucket] = (bucketCounts[bucket] ?? 0) + 1;
      errorSum += error;
      errorCount += 1;
    }
  };
  const byTarget = (a: Pending, b: Pending) => a.target - b.target || a.seq - b.seq;
  for (const o of ops) {
    if (o.kind === "clock") now += o.ms;
    else if (o.kind === "reject") {
      tracker.recordRejection(now, o.depth, drainCount, o.suggestedS);
      const p = {
        seq: seq++,
        atMs: now,
        queueDepth: o.depth,
        suggestedS: o.suggestedS,
        target: drainCount + o.depth,
      };
      if (o.depth <= 0) observe(p);
      else {
        pending.push(p);
        if (pending.length > maxPending) {
          const oldest = [...pending].sort((a, b) => a.atMs - b.atMs || byTarget(a, b))[0] as Pending;
          pending = pending.filter((q) => q !== oldest);
        }
      }
    } else {
      drainCount += o.by;
      tracker.onDrain(now, drainCount);
      const done = pending.filter((p) => p.target <= drainCount).sort(byTarget);
      pending = pending.filter((p) => p.target > drainCount);
      for (const p of done) observe(p);
    }
    if (tracker.pendingCount !== pending.length) fail(`${tracker.pendingCount} pending, modelled ${pending.length}`);
    if (tracker.pendingCount > maxPending) fail(`${tracker.pendingCount} pending over ${maxPending}`);
    const recent = tracker.recent();
    const want = maxResults > 0 ? all.slice(-maxResults) : [];
    if (JSON.stringify(recent) !== JSON.stringify(want))
      fail(`recent ${JSON.stringify(recent)}, modelled ${JSON.stringify(want)}`);
    if (JSON.stringify(seen) !== JSON.stringify(all)) fail(`onObservation saw ${seen.length}, modelled ${all.length}`);
    const histogram = tracker.errorHistogram();
    const counts = histogram.buckets.map((b) => b.count);
    if (JSON.stringify(counts) !== JSON.stringify(bucketCounts)) fail(`buckets ${counts}, modelled ${bucketCounts}`);
    if (histogram.count !== errorCount) fail(`error count ${histogram.count}, modelled ${errorCount}`);
    if (Math.abs(histogram.sum - errorSum) > 1e-9 * Math.max(1, Math.abs(errorSum)))
      fail(`error sum ${histogram.sum}, modelled ${errorSum}`);
    if (counts.reduce((a, b) => a + b, 0) !== histogram.count) fail("the buckets do not add up to the count");
    if (violations.length > 0) break;
  }
  return violations;
}

describe("DrainAccuracyTracker against a model of the spec's accuracy rule", () => {
  it("observes each rejection at the drain that reaches its target, bounded, with an exact error histogram", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 5, maxLength: 150, size: "max" }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: -10_000, max: 10_000 }),
        (ops, maxPending, maxResults, startMs) => {
          expect(run(ops, maxPending, maxResults, startMs)).toEqual([]);
        },
      ),
      runs,
    );
  });

  it("a recent() copy handed out is not the tracker's memory", () => {
    const tracker = new DrainAccuracyTracker();
    tracker.recordRejection(0, 0, 0, 1);
    const copy = tracker.recent();
    copy.pop();
    expect(tracker.recent()).toHaveLength(1);
    const histogram = tracker.errorHistogram();
    (histogram.buckets[0] as { count: number }).count += 5;
    expect(tracker.errorHistogram().buckets[0]?.count).toBe(0);
  });
});
