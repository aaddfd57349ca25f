import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DRAINING_WINDOW_S, StandingQueue, type StandingQueueOptions } from "../../../src/core/standing-queue";
import { propertyRuns } from "../../support/property-runs";

/**
 * `StandingQueue` at the edges the model in router-memories.property.test.ts leaves out: a clock that goes back or
 * stands still, instants in fractions of a millisecond, intervals in fractions of a second (whole milliseconds, as
 * its comment says), refusals noted out of order, and drain rates that are no estimate (`undefined`, 0, negative,
 * NaN) or an unbounded one (`Infinity`), held after every operation to a model written from its JSDoc:
 *
 * - the target depth is `queueDelayTargetS` of drain at the rate, rounded up, at least 1; no bound without a target or
 *   without a positive rate;
 * - it stands once the queue has not been at or below the target's depth (or draining) for `standingIntervalS`
 *   (whole milliseconds) since construction, its last short sample or the last spell's end; a spell ends once
 *   nothing has been refused for max(`standingIntervalS`, `DRAINING_WINDOW_S`) since the later of the last refusal
 *   and the spell's start, or the queue drains by itself;
 * - a clock that goes back does not move those instants back: the last short moment, the last refusal and the
 *   spell's start are the latest seen (so nothing starts or ends until the clock has passed them again), and an
 *   attempt offered at an earlier instant counts in the latest second the offered count has seen.
 */

const runs = propertyRuns(400, 20261206);

type Op =
  | { kind: "step"; ms: number }
  | { kind: "offer"; n: number }
  | { kind: "refused"; backMs: number }
  | { kind: "update"; relative: number; depth: number }
  | { kind: "rate"; rate: number | undefined };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      ms: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 6_000 }),
        fc.double({ min: 0, max: 3_000, noNaN: true }),
        fc.integer({ min: -4_000, max: -1 }),
        fc.double({ min: -1, max: 0, noNaN: true }),
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("offer" as const), n: fc.integer({ min: 1, max: 15 }) }) },
  // A refusal noted now, or one noted late (an earlier instant than the last one seen).
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("refused" as const),
      backMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4_000 })),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("update" as const),
      relative: fc.integer({ min: -2, max: 2 }),
      depth: fc.integer({ min: -1, max: 40 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("rate" as const),
      rate: fc.constantFrom(undefined, 0, -3, Number.NaN, Number.POSITIVE_INFINITY, 1e-9, 0.5, 2, 10),
    }),
  },
);

const queueOptions: fc.Arbitrary<StandingQueueOptions> = fc.record({
  queueDelayTargetS: fc.constantFrom(undefined, 1e-6, 0.01, 1, 2.5, 3600),
  // Fractions of a second whose product with 1000 is not a whole number in floats (16.1 * 1000), and sub-ms ones.
  standingIntervalS: fc.constantFrom(0, 0.0004, 0.0006, 1.0005, 2.3, 5, 16.1, 30),
  drainingOfferedShare: fc.constantFrom(undefined, undefined, 0.5, 1),
});

function run(ops: readonly Op[], options: StandingQueueOptions, startMs: number, startRate: number | undefined) {
  let rate = startRate;
  let now = startMs;
  const queue = new StandingQueue(options, () => rate, startMs);
  const intervalMs = Math.round(options.standingIntervalS * 1000);
  const quietMs = Math.max(intervalMs, DRAINING_WINDOW_S * 1000);
  let standing = false;
  let shortAtMs = startMs;
  let refusedAtMs = Number.NEGATIVE_INFINITY;
  // The offered attempts' seconds, and the latest second the offered count has seen.
  const offered: number[] = [];
  let offeredSecond = Number.NEGATIVE_INFINITY;
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  const hasRate = () => rate !== undefined && rate > 0;
  const targetDepth = () => {
    const target = options.queueDelayTargetS;
    if (target === undefined || rate === undefined || !(rate > 0)) return Number.POSITIVE_INFINITY;
    return Math.max(1, Math.ceil(target * rate));
  };
  const draining = () => {
    if (options.drainingOfferedShare === undefined || !hasRate()) return false;
    offeredSecond = Math.max(offeredSecond, Math.floor(now / 1000));
    const inWindow = offered.filter((s) => s >= offeredSecond - DRAINING_WINDOW_S && s < offeredSecond).length;
    return inWindow / DRAINING_WINDOW_S < options.drainingOfferedShare * (rate as number);
  };
  for (const o of ops) {
    if (o.kind === "step") now += o.ms;
    else if (o.kind === "offer") {
      for (let i = 0; i < o.n; i++) {
        queue.offer(now);
        offeredSecond = Math.max(offeredSecond, Math.floor(now / 1000));
        offered.push(offeredSecond);
      }
    } else if (o.kind === "refused") {
      queue.refused(now - o.backMs);
      refusedAtMs = Math.max(refusedAtMs, now - o.backMs);
    } else if (o.kind === "rate") rate = o.rate;
    else {
      const target = targetDepth();
      const depth = Number.isFinite(target) ? Math.max(0, target + o.relative) : o.depth;
      const drains = draining();
      if (standing) {
        if (drains || now - refusedAtMs >= quietMs) {
          standing = false;
          shortAtMs = Math.max(shortAtMs, now);
        }
      } else if (drains || depth <= target) shortAtMs = Math.max(shortAtMs, now);
      else if (now - shortAtMs >= intervalMs) {
        standing = true;
        refusedAtMs = Math.max(refusedAtMs, now);
      }
      const stands = queue.update(now, depth);
      if (stands !== standing)
        fail(
          `update(depth ${depth}, target ${target}, draining ${drains}, short since ${shortAtMs}, refused ` +
            `${refusedAtMs}): ${stands}, expected ${standing}`,
        );
    }
    if (queue.isStanding !== standing) fail(`isStanding ${queue.isStanding}, modelled ${standing}`);
    if (queue.targetDepth() !== targetDepth()) fail(`target depth ${queue.targetDepth()}, ${targetDepth()}`);
    if (violations.length > 0) break;
  }
  return violations;
}

describe("StandingQueue at the edges of its inputs", () => {
  it("stands and stops standing as documented, whatever the clock and the drain rate do", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 5, maxLength: 150, size: "max" }),
        queueOptions,
        fc.oneof(fc.integer({ min: -50_000, max: 50_000 }), fc.double({ min: 0, max: 1e6, noNaN: true })),
        fc.constantFrom(undefined, 2, 10, 7.5),
        (ops, options, startMs, startRate) => {
          expect(run(ops, options, startMs, startRate)).toEqual([]);
        },
      ),
      runs,
    );
  });
});

describe("StandingQueue under a clock that goes back", () => {
  it("a refusal noted at an earlier instant does not end the spell before the interval after the latest one", () => {
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => 10, 0);
    expect(queue.update(30_000, 50)).toBe(true);
    queue.refused(40_000);
    queue.refused(39_000); // the clock stepped back a second
    expect(queue.update(69_999, 50)).toBe(true); // refused 29.999 s ago: still standing
    expect(queue.update(70_000, 50)).toBe(false);
  });

  it("a short queue seen at an earlier instant does not start the interval earlier", () => {
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => 10, 0);
    expect(queue.update(10_000, 5)).toBe(false); // at the target: the interval starts again
    expect(queue.update(9_000, 5)).toBe(false); // the clock stepped back a second, the queue still short
    expect(queue.update(39_999, 50)).toBe(false); // above the target for 29.999 s since the latest short sample
    expect(queue.update(40_000, 50)).toBe(true);
  });
});
