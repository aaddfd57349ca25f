import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type BucketRate, TokenBucket } from "../../../src/core/token-bucket";
import { propertyRuns } from "../../support/property-runs";

/**
 * `TokenBucket` (the refill line under every tenant quota) driven by arbitrary operation sequences on a clock the
 * test moves - forward by whole and fractional milliseconds, standing still, backwards (a little, or far), far
 * ahead, and onto (or 1 ms either side of) each instant a wait it named ends - against a model written from its
 * JSDoc:
 *
 * - it starts full at `limit`; it refills `limit` units per `periodMs` continuously, never above `limit`;
 * - a clock that goes back refills nothing, and nothing refills until the clock is past the latest instant the
 *   bucket saw again (no stretch of time is refilled twice);
 * - `take(amount)` takes it iff it is available now (with the documented 1e-6 slack of the refill's float
 *   arithmetic; an amount above the limit is never available), else takes nothing; so a take never leaves the
 *   level below -1e-6: only `adjust` charges into debt;
 * - `waitMs(amount)` is 0 iff the amount fits now, `Infinity` iff it exceeds the limit, otherwise the exact
 *   whole milliseconds from the caller's clock until it fits: it fits at that instant and not a millisecond
 *   before (with nothing else happening); `resetMs` is the wait for the whole limit;
 * - `adjust(+x)` refunds (never above the limit), `adjust(-x)` charges even into debt;
 * - `available` is the level now, exactly the model's (within float noise).
 *
 * Near a boundary the model accepts either answer only within float noise of it (`NEAR`); outside it, one.
 */

const runs = propertyRuns(300, 20261205);

/** The documented slack of the refill's float arithmetic (units). */
const EPS = 1e-6;

type Amount =
  /** A share of the limit (0: nothing; 1: all of it). */
  | { kind: "share"; share: number }
  /** Whole units (taken modulo the limit, plus one). */
  | { kind: "units"; n: number }
  /** The limit, plus a little (a tiny excess is still above the limit). */
  | { kind: "limit"; plus: number }
  /** What fits `ms` milliseconds from now (the model's level then), plus `plus` units: the boundary cases. */
  | { kind: "fitsIn"; ms: number; plus: number };

type Op =
  | { kind: "wait"; ms: number }
  | { kind: "back"; ms: number }
  /** To the instant a wait named earlier ends (its caller's clock + the wait), ± delta ms; then take that amount. */
  | { kind: "retry"; pick: number; delta: number }
  | { kind: "take"; amount: Amount }
  | { kind: "waitMs"; amount: Amount }
  | { kind: "resetMs" }
  | { kind: "adjust"; units: number };

/** Just under, at and just over a tolerance boundary, in units. */
const slack = fc.constantFrom(0, 1e-7, 5e-7, 9e-7, 1e-6, 1.1e-6, 2e-6, 5e-6, -1e-7, -5e-7, -2e-6, 1e-3, 0.5, -0.5);

const amount: fc.Arbitrary<Amount> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("share" as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("units" as const), n: fc.nat(1_000_000) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("limit" as const), plus: slack }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("fitsIn" as const),
      // Whole milliseconds, and fractions of one just past a whole one (the named wait's rounding).
      ms: fc.oneof(
        fc.integer({ min: 0, max: 5_000 }),
        fc
          .tuple(fc.integer({ min: 0, max: 5_000 }), fc.constantFrom(1e-7, 5e-7, 1e-6, 2e-6, 1e-3, 0.5, 1 - 1e-7))
          .map(([n, f]) => n + f),
      ),
      plus: slack,
    }),
  },
);

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        fc.constantFrom(0, 1, 0.5, 1e-7),
        fc.integer({ min: 0, max: 5_000 }),
        fc.double({ min: 0, max: 5_000, noNaN: true }),
        fc.integer({ min: 5_000, max: 10_000_000 }),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("back" as const),
      ms: fc.oneof(fc.constantFrom(1, 0.5), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 5_000, max: 1e7 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("retry" as const), pick: fc.nat(), delta: fc.constantFrom(-1, 0, 1) }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("take" as const), amount }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("waitMs" as const), amount }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resetMs" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("adjust" as const),
      // A share of the limit, either way: a refund (+) or a charge after the fact (-, into debt).
      units: fc.double({ min: -1.5, max: 1.5, noNaN: true }),
    }),
  },
);

/** Rates from one unit a minute to millions, units fractional or not, periods from 1 ms to an hour. */
const rateArb: fc.Arbitrary<BucketRate> = fc.record({
  limit: fc.oneof(
    fc.constantFrom(1, 7, 30, 1_000, 150_000, 600_000, 30_000_000),
    fc.integer({ min: 1, max: 10_000_000 }),
    fc.double({ min: 0.25, max: 1e6, noNaN: true }),
  ),
  periodMs: fc.oneof(fc.constantFrom(60_000, 1_000, 1, 3_600_000), fc.integer({ min: 1, max: 10_000_000 })),
});

/** A start instant: around 0, or a wall clock's milliseconds. */
const startArb = fc.oneof(fc.integer({ min: -10_000, max: 10_000 }), fc.integer({ min: 1.7e12, max: 1.8e12 }));

/** The model: the bucket's level at the latest instant it saw. */
interface Model {
  limit: number;
  periodMs: number;
  level: number;
  atMs: number;
}

const perMs = (m: Model) => m.limit / m.periodMs;
/** The level at `t`: a clock behind the latest instant seen refills nothing. */
const levelAt = (m: Model, t: number) => Math.min(m.limit, m.level + Math.max(0, t - m.atMs) * perMs(m));

function run(rate: BucketRate, start: number, ops: readonly Op[]): string[] {
  const bucket = new TokenBucket(rate, start);
  const m: Model = { limit: rate.limit, periodMs: rate.periodMs, level: rate.limit, atMs: start };
  let now = start;
  // Float noise of two computations of the same level: its magnitude's, and the clock's resolution at the rate (a
  // fractional clock far from 0 cannot name an instant finer than its last bits: 1e-9 ms at 4e6 ms, 2e-4 at 1.7e12).
  const near = () =>
    Math.max(1e-8, rate.limit * 1e-11, perMs(m) * Math.max(Math.abs(start), Math.abs(now), Math.abs(m.atMs)) * 1e-15);
  const told: { at: number; wait: number; amount: number }[] = [];
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now} (${JSON.stringify(rate)}): ${what}`);

  const refill = () => {
    m.level = levelAt(m, now);
    m.atMs = Math.max(m.atMs, now);
  };
  /** Whether `need` fits a level: "either" only within float noise of the boundary. */
  const fits = (level: number, need: number): "yes" | "no" | "either" => {
    if (need > m.limit) return "no";
    const d = level + EPS - need;
    return d >= near() ? "yes" : d < -near() ? "no" : "either";
  };
  const resolve = (a: Amount): number => {
    if (a.kind === "share") return a.share * m.limit;
    if (a.kind === "units") return 1 + (a.n % Math.max(1, Math.floor(m.limit)));
    if (a.kind === "limit") return m.limit + a.plus;
    return Math.max(0, levelAt(m, now + a.ms) + a.plus);
  };
  const take = (need: number) => {
    refill();
    const expected = fits(m.level, need);
    const took = bucket.take(need, now);
    if (expected !== "either" && took !== (expected === "yes"))
      fail(`take(${need}) ${took}; modelled level ${m.level}: fits ${expected}`);
    if (took) m.level -= need;
  };
  const wait = (need: number, what: string) => {
    refill();
    const w = what === "resetMs" ? bucket.resetMs(now) : bucket.waitMs(need, now);
    if (need > m.limit) {
      if (w !== Number.POSITIVE_INFINITY) fail(`${what}(${need}) = ${w}: above the limit ${m.limit}`);
      return;
    }
    if (!Number.isInteger(w) || w < 0) {
      fail(`${what}(${need}) = ${w}: not whole milliseconds`);
      return;
    }
    const nowFits = fits(m.level, need);
    if ((w === 0 && nowFits === "no") || (w > 0 && nowFits === "yes"))
      fail(`${what}(${need}) = ${w}; modelled level ${m.level}: fits now ${nowFits}`);
    if (w === 0) return;
    // Exact, from the caller's clock: fits at now + w, not at now + w - 1 (nothing else happening).
    if (fits(levelAt(m, now + w), need) === "no")
      fail(`${what}(${need}) = ${w}: still short then (level ${levelAt(m, now + w)}, from ${m.level} at ${m.atMs})`);
    if (w > 1 && fits(levelAt(m, now + w - 1), need) === "yes")
      fail(`${what}(${need}) = ${w}: fits already a millisecond before (level ${levelAt(m, now + w - 1)})`);
    told.push({ at: now, wait: w, amount: need });
  };

  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "back") now -= o.ms;
    else if (o.kind === "retry") {
      const t = told[o.pick % Math.max(1, told.length)];
      if (t) {
        now = t.at + t.wait + o.delta;
        take(t.amount);
      }
    } else if (o.kind === "take") take(resolve(o.amount));
    else if (o.kind === "waitMs") wait(resolve(o.amount), "waitMs");
    else if (o.kind === "resetMs") wait(m.limit, "resetMs");
    else {
      refill();
      const units = o.units * m.limit;
      bucket.adjust(units, now);
      m.level = Math.min(m.limit, m.level + units);
    }
    // The level now: exactly the model's; never above the limit; below -EPS only after a charge into debt.
    refill();
    const level = bucket.available(now);
    if (Math.abs(level - m.level) > near()) fail(`available ${level}, modelled ${m.level}`);
    if (level > m.limit) fail(`available ${level} above the limit ${m.limit}`);
    if (violations.length > 0) break;
  }
  return violations;
}

describe("TokenBucket against a model of its refill line", () => {
  it("refills exactly, takes iff available, names the exact wait, under any clock", () => {
    fc.assert(
      fc.property(rateArb, startArb, fc.array(op, { minLength: 5, maxLength: 80, size: "max" }), (rate, start, ops) => {
        expect(run(rate, start, ops)).toEqual([]);
      }),
      runs,
    );
  });

  it("a take never leaves the level below the documented slack; only a charge after the fact does", () => {
    fc.assert(
      fc.property(
        rateArb,
        startArb,
        fc.array(fc.tuple(fc.double({ min: 0, max: 2, noNaN: true }), fc.double({ min: -1000, max: 5000 })), {
          maxLength: 60,
          size: "max",
        }),
        (rate, start, steps) => {
          const bucket = new TokenBucket(rate, start);
          let now = start;
          for (const [share, dt] of steps) {
            now += Number.isNaN(dt) ? 0 : dt;
            bucket.take(share * rate.limit, now);
            const level = bucket.available(now);
            expect(level).toBeGreaterThanOrEqual(-EPS);
            expect(level).toBeLessThanOrEqual(rate.limit);
          }
        },
      ),
      runs,
    );
  });
});
