import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DrainAccuracyTracker } from "../../../src/core/drain-accuracy";
import { propertyRuns } from "../../support/property-runs";

const runs = propertyRuns(200, 20261206);

type Call =
  | { kind: "reject"; args: [number, number, number, number | undefined] }
  | { kind: "drain"; args: [number, number] };

const notFinite = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY);
const finiteCall: fc.Arbitrary<Call> = fc.oneof(
  fc.record({
    kind: fc.constant("reject" as const),
    args: fc.tuple(
      fc.integer({ min: 0, max: 100_000 }),
      fc.integer({ min: -1, max: 8 }),
      fc.nat(40),
      fc.option(fc.double({ min: -10, max: 130, noNaN: true }), { nil: undefined }),
    ),
  }),
  fc.record({ kind: fc.constant("drain" as const), args: fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.nat(40)) }),
);
/** A call with one of its numbers replaced by NaN or an infinity. */
const badCall: fc.Arbitrary<Call> = fc.tuple(finiteCall, fc.nat(3), notFinite).map(([call, at, bad]) => {
  const args = [...call.args] as number[];
  args[at % args.length] = bad;
  return { kind: call.kind, args } as Call;
});

function play(calls: readonly Call[]) {
  const seen: unknown[] = [];
  const tracker = new DrainAccuracyTracker(16, 64, (o) => seen.push(o));
  for (const c of calls) {
    if (c.kind === "reject") tracker.recordRejection(...c.args);
    else tracker.onDrain(...c.args);
  }
  return { recent: tracker.recent(), histogram: tracker.errorHistogram(), pending: tracker.pendingCount, seen };
}

describe("DrainAccuracyTracker and numbers that are not finite", () => {
  it("a rejection with a NaN depth does not hold back the observations behind it", () => {
    const tracker = new DrainAccuracyTracker();
    tracker.recordRejection(0, Number.NaN, 0, 3);
    tracker.recordRejection(0, 1, 0, 2);
    tracker.onDrain(1_000, 1);
    expect(tracker.recent()).toEqual([{ atMs: 0, queueDepth: 1, suggestedS: 2, observedS: 1 }]);
    expect(tracker.pendingCount).toBe(0);
  });

  it("a NaN hint or time does not poison the error sum", () => {
    const tracker = new DrainAccuracyTracker();
    tracker.recordRejection(0, 1, 0, Number.NaN);
    tracker.recordRejection(Number.NaN, 1, 0, 3);
    tracker.recordRejection(0, 1, 0, 3);
    tracker.onDrain(Number.NaN, 1);
    tracker.onDrain(2_000, 1);
    expect(tracker.errorHistogram()).toMatchObject({ sum: 1, count: 1 });
  });

  it("ignores every call carrying one: the state is that of the finite calls alone", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof({ weight: 3, arbitrary: finiteCall }, { weight: 1, arbitrary: badCall })),
        (calls) => {
          const finite = calls.filter((c) => c.args.every((a) => a === undefined || Number.isFinite(a)));
          expect(play(calls)).toEqual(play(finite));
        },
      ),
      runs,
    );
  });
});
