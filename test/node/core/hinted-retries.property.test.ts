import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type HintedRetryOptions, HintedRetryTracker, type HintTiming } from "../../../src/core/hinted-retries";
import { propertyRuns } from "../../support/property-runs";

/**
 * `HintedRetryTracker` at the edges the model in router-memories.property.test.ts leaves out, against a model from
 * its JSDoc: hints of every number (0, negative, fractions, a value so large its instant is `Infinity`, and NaN or
 * infinite ones, which are no hint: nothing is remembered and an earlier hint of the same request stays), instants
 * in fractions of a millisecond, a clock that goes back (a request back before its hinted instant is early), the
 * empty fingerprint (a fingerprint like any other) and capacities of 0, fractions and below 0 (never more hints
 * remembered than the capacity allows, the oldest hint forgotten first). A returning request is classed against its
 * latest hint, early / on time / late with both tolerances' ends on time, once.
 */

const runs = propertyRuns(400, 20261206);

const fingerprint = fc.option(fc.constantFrom("", "a", "b", "c", "d"), { nil: undefined, freq: 8 });
type Op =
  | { kind: "hinted"; fp: string | undefined; delayS: number }
  | { kind: "returned"; fp: string | undefined; edge: number | undefined }
  | { kind: "step"; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("hinted" as const),
      fp: fingerprint,
      delayS: fc.oneof(
        fc.constantFrom(0, -1, 0.0005, 59.9995, 1.7e308, Number.NaN, Number.POSITIVE_INFINITY, -Infinity),
        fc.double({ min: -5, max: 130, noNaN: true }),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("returned" as const),
      fp: fingerprint,
      // Back at an edge of its tolerances (-1 just before "early" ends ... +1 just after "late" begins), or now.
      edge: fc.option(fc.constantFrom(-1, 0, 1, 2, 3), { nil: undefined, freq: 2 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      ms: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 20_000 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        fc.integer({ min: -20_000, max: -1 }),
      ),
    }),
  },
);

const trackerOptions: fc.Arbitrary<HintedRetryOptions> = fc.record({
  earlyMs: fc.constantFrom(0, 0.5, 1_000),
  lateMs: fc.constantFrom(0, 2.25, 3_000),
  capacity: fc.constantFrom(-1, 0, 1, 2.5, 3, 8),
});

function run(ops: readonly Op[], options: HintedRetryOptions, startMs: number): string[] {
  const tracker = new HintedRetryTracker(options);
  let now = startMs;
  let hints = 0;
  const model = new Map<string, { dueMs: number; hint: number }>();
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  const timingOf = (dueMs: number, atMs: number): HintTiming =>
    atMs < dueMs - options.earlyMs ? "early" : atMs > dueMs + options.lateMs ? "late" : "on_time";
  for (const o of ops) {
    if (o.kind === "step") now += o.ms;
    else if (o.kind === "hinted") {
      tracker.hinted(o.fp, now, o.delayS);
      if (o.fp !== undefined && Number.isFinite(o.delayS)) {
        model.set(o.fp, { dueMs: now + o.delayS * 1000, hint: ++hints });
        while (model.size > Math.max(0, Math.floor(options.capacity))) {
          const oldest = [...model.entries()].reduce((a, b) => (b[1].hint < a[1].hint ? b : a));
          model.delete(oldest[0]);
        }
      }
    } else {
      const known = o.fp === undefined ? undefined : model.get(o.fp);
      const due = known?.dueMs ?? now;
      const at =
        o.edge === undefined || !Number.isFinite(due)
          ? now
          : [due - options.earlyMs - 1, due - options.earlyMs, due, due + options.lateMs, due + options.lateMs + 1][
              o.edge + 1
            ];
      const timing = tracker.returned(o.fp, at as number);
      const expected = known === undefined ? undefined : timingOf(known.dueMs, at as number);
      if (timing !== expected) fail(`${o.fp} back at ${at} (hinted for ${known?.dueMs}): ${timing}, not ${expected}`);
      if (o.fp !== undefined) model.delete(o.fp);
    }
    if (tracker.tracked !== model.size) fail(`${tracker.tracked} hints tracked, modelled ${model.size}`);
    if (violations.length > 0) break;
  }
  return violations;
}

describe("HintedRetryTracker at the edges of its inputs", () => {
  it("remembers finite hints only, classes returns against the latest, bounded by any capacity", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 5, maxLength: 120, size: "max" }),
        trackerOptions,
        fc.oneof(fc.integer({ min: -100_000, max: 100_000 }), fc.double({ min: 0, max: 1e9, noNaN: true })),
        (ops, options, startMs) => {
          expect(run(ops, options, startMs)).toEqual([]);
        },
      ),
      runs,
    );
  });

  it("a NaN or infinite hint leaves the request's earlier hint in place", () => {
    const tracker = new HintedRetryTracker({ earlyMs: 1_000, lateMs: 3_000, capacity: 4 });
    tracker.hinted("a", 0, 5);
    tracker.hinted("a", 1_000, Number.NaN);
    tracker.hinted("a", 1_000, Number.POSITIVE_INFINITY);
    expect(tracker.tracked).toBe(1);
    expect(tracker.returned("a", 5_000)).toBe("on_time");
  });
});
