import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_SCHEDULE_OPTIONS as OPTIONS, RetrySchedule } from "../../../src/core/retry-schedule";
import { propertyRuns } from "../../support/property-runs";

/**
 * The legacy `retry_schedule` ledger under arbitrary arrivals, refusals and retries, against a model of its
 * bookings (their due instants): hints within [1, 60] s in a second that had room, per-second counts that add up to
 * the bookings outstanding (none leaked by a claim or a lapse), claims of the earliest booking due and never of one
 * not yet due or lapsed, and room held only for bookings near now.
 */

type Op =
  | { kind: "wait"; ms: number }
  | { kind: "arrive"; count: number; retry: boolean }
  | { kind: "refuse"; depth: number; rate: number; r: number }
  | { kind: "retry"; pick: number; lateMs: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 3_000 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("arrive" as const),
      count: fc.integer({ min: 1, max: 20 }),
      retry: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("refuse" as const),
      depth: fc.integer({ min: 0, max: 80 }),
      // 0: no usable drain rate.
      rate: fc.oneof(fc.constant(0), fc.double({ min: 0.2, max: 10, noNaN: true })),
      r: fc.double({ min: 0, max: 0.999, noNaN: true }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("retry" as const),
      pick: fc.nat(),
      // A retry this long after some booking's due instant (negative: early; beyond the grace: lapsed).
      lateMs: fc.integer({ min: -1_500, max: 4_000 }),
    }),
  },
);

/** Runs the ops; returns the violations seen (none expected). */
function run(ops: readonly Op[]): string[] {
  let now = 500;
  const schedule = new RetrySchedule(OPTIONS, now);
  // Due instants of the bookings made and not yet claimed or lapsed.
  let model: number[] = [];
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "arrive") for (let i = 0; i < o.count; i++) schedule.onArrival(now, o.retry);
    else if (o.kind === "refuse") {
      const second = Math.floor(now / 1000);
      const hintS = schedule.estimate(now, { queueDepth: o.depth, drainRate: o.rate }, () => o.r);
      if (o.rate === 0 && hintS !== undefined) fail("a hint without a drain rate");
      if (hintS === undefined) continue;
      if (!(hintS >= 1 && hintS <= 60)) fail(`hint ${hintS} s outside [1, 60]`);
      const slot = Math.floor(now / 1000 + hintS);
      const before = schedule.promisedAt(now, slot - second);
      schedule.book(now, hintS);
      if (schedule.promisedAt(now, slot - second) !== before + 1) fail(`the hint's second ${slot} was not booked`);
      model.push(now + hintS * 1000);
    } else {
      if (model.length > 0) {
        const due = model[o.pick % model.length] as number;
        now = Math.max(now, Math.round(due + o.lateMs));
      }
      // Lapsed: due in a second that ended more than `graceS` ago.
      model = model.filter((due) => Math.floor(due / 1000) >= Math.floor(now / 1000) - OPTIONS.graceS);
      const earliest = Math.min(...model);
      const claimed = schedule.claim(now);
      if (claimed !== earliest <= now) fail(`claimed ${claimed} with the earliest booking due at ${earliest}`);
      if (claimed) model.splice(model.indexOf(earliest), 1);
    }
    model = model.filter((due) => Math.floor(due / 1000) >= Math.floor(now / 1000) - OPTIONS.graceS);
    // Every outstanding booking counted once in its second, and nothing else.
    const current = Math.floor(now / 1000);
    let counted = 0;
    for (let k = -OPTIONS.graceS; k < OPTIONS.horizonS; k++) counted += schedule.promisedAt(now, k);
    if (counted !== model.length) fail(`${counted} bookings counted, ${model.length} outstanding`);
    if (schedule.outstanding !== model.length) fail(`${schedule.outstanding} outstanding, modelled ${model.length}`);
    const near = model.filter((due) => {
      const s = Math.floor(due / 1000);
      return s >= current - OPTIONS.graceS && s <= current + OPTIONS.leadS;
    }).length;
    if (schedule.reservedRoom(now) !== near)
      fail(`room held ${schedule.reservedRoom(now)} for ${near} bookings near now`);
  }
  return violations;
}

describe("the retry_schedule ledger under arbitrary arrivals, refusals and retries", () => {
  it("books each hint in its second, counts exactly the bookings outstanding and gives each to one retry", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 20, maxLength: 150, size: "max" }), (ops) => {
        expect(run(ops)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});
