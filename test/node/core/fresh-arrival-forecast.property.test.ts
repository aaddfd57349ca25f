import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FreshArrivalForecast,
  type FreshArrivalForecastOptions,
  riseLength,
} from "../../../src/core/fresh-arrival-forecast";
import { ForecastModel } from "../../support/fresh-arrival-forecast-model";
import { propertyRuns } from "../../support/property-runs";

/**
 * `FreshArrivalForecast` (what `booked_capacity` expects fresh arrivals to take) driven by arbitrary arrivals, seconds
 * closed one at a time or many at once (a quiet spell longer than every ring, which the forecast folds in at once),
 * and overload floors asked for, against the model written from its JSDoc (test/support/fresh-arrival-forecast-model.ts,
 * shared with load-estimators.property.test.ts) that keeps every closed second's count and
 * recomputes everything from that history, one second at a time:
 *
 * - `recent` is the `burstAlpha`-smoothed count of the closed seconds (the first second sets it; 0 before one);
 * - `baseline` is the lowest `freshAlpha`-smoothed count of the last `baselineWindowS` seconds (`undefined` before
 *   a closed second);
 * - `overloadFloor(true, depth, rate)` is the `overloadFloorQuantile` (the value at index floor(q * n) of the n
 *   sorted, 0 the lowest) of the fast-smoothed rates of the `overloadFloorS` whole seconds before it (read that many
 *   seconds earlier when `riseLength` finds the newest seconds stepped up by `overloadFloorSkipsRise`), raised to
 *   the same quantile of the `overloadFloorMovingS`-second moving means of those seconds when that is higher and
 *   still below `rate`; at or above `rate` it is read over the same span before the queue began to fill (depth /
 *   rate seconds ago, at most 30 s; 0 when there are no such seconds); `overloadFloor(false, ...)` lowers the floor
 *   to `recent` when that is lower, never raises it; with `overloadFloorS` below 1 the floor is 0.
 *
 * And `riseLength` against a brute-force least-squares split of the newest values.
 */

const runs = propertyRuns(1500, 20261206);

/** Relative float noise allowed between folded and second-by-second decay (`(1 - a) ** n` against n products). */
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

type Op =
  | { kind: "count"; n: number }
  | { kind: "close"; seconds: number }
  /** `n` arrivals in each of `seconds` seconds: steady traffic, whose smoothed and moving rates meet the drain rate. */
  | { kind: "steady"; n: number; seconds: number }
  | { kind: "floor"; starts: boolean; depth: number; rate: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("count" as const), n: fc.integer({ min: 0, max: 25 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("close" as const),
      // One second mostly; a few; and quiet spells longer than every ring (folded at once).
      seconds: fc.oneof(
        { weight: 6, arbitrary: fc.constant(1) },
        { weight: 3, arbitrary: fc.integer({ min: 2, max: 6 }) },
        { weight: 1, arbitrary: fc.integer({ min: 7, max: 150 }) },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("steady" as const),
      n: fc.integer({ min: 0, max: 12 }),
      seconds: fc.integer({ min: 1, max: 40 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("floor" as const),
      starts: fc.boolean(),
      depth: fc.oneof(fc.constantFrom(0, 1, 10, 100, 1_000), fc.integer({ min: 0, max: 400 })),
      rate: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(0.5, 1, 2, 3, 5, 10, 20) },
        { weight: 1, arbitrary: fc.double({ min: 0.1, max: 30, noNaN: true }) },
      ),
    }),
  },
);

const forecastOptions: fc.Arbitrary<FreshArrivalForecastOptions> = fc.record({
  freshAlpha: fc.constantFrom(0.05, 0.1, 0.5, 1),
  baselineWindowS: fc.constantFrom(1, 2, 5, 13, 60),
  burstAlpha: fc.constantFrom(0.1, 0.3, 0.7, 1),
  // Below 1 (off), fractional, and windows up to the 30 s a queue's fill time may reach back past them.
  overloadFloorS: fc.constantFrom(0, 0.5, 1, 3, 10, 10.7, 30),
  overloadFloorQuantile: fc.constantFrom(0, 0, 0.25, 0.5, 0.5, 0.9, 1),
  overloadFloorSkipsRise: fc.constantFrom(0, 0, 1, 1.5, 2, 3),
  overloadFloorMovingS: fc.constantFrom(0, 1, 3, 3, 5.5),
});

describe("FreshArrivalForecast against a second-by-second model", () => {
  function run(ops: readonly Op[], options: FreshArrivalForecastOptions): string[] {
    const forecast = new FreshArrivalForecast(options);
    const model = new ForecastModel(options);
    const violations: string[] = [];
    const fail = (what: string) => violations.push(`after ${model.counts.length} s: ${what}`);
    for (const o of ops) {
      if (o.kind === "count") {
        for (let i = 0; i < o.n; i++) forecast.count();
        model.count(o.n);
      } else if (o.kind === "close") {
        forecast.closeSeconds(o.seconds);
        for (let s = 0; s < o.seconds; s++) model.closeSeconds(1);
      } else if (o.kind === "steady") {
        for (let s = 0; s < o.seconds; s++) {
          for (let i = 0; i < o.n; i++) forecast.count();
          forecast.closeSeconds(1);
          model.count(o.n);
          model.closeSeconds(1);
        }
      } else {
        const got = forecast.overloadFloor(o.starts, o.depth, o.rate);
        const want = model.overloadFloor(o.starts, o.depth, o.rate);
        if (!close(got, want))
          fail(`overloadFloor(${o.starts}, ${o.depth}, ${o.rate}) = ${got}, modelled ${want} (${model.fast.length} s)`);
      }
      const baseline = forecast.baseline;
      const wantBaseline = model.baseline;
      if (
        (baseline === undefined) !== (wantBaseline === undefined) ||
        (baseline !== undefined && !close(baseline, wantBaseline as number))
      )
        fail(`baseline ${baseline}, modelled ${wantBaseline}`);
      if (!close(forecast.recent, model.recent)) fail(`recent ${forecast.recent}, modelled ${model.recent}`);
      if (violations.length > 0) break;
    }
    return violations;
  }

  it("smooths, keeps the baseline and sets the overload floor as the JSDoc says, quiet spells folded or not", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 5, maxLength: 120, size: "max" }), forecastOptions, (ops, options) => {
        expect(run(ops, options)).toEqual([]);
      }),
      runs,
    );
  });
});

describe("FreshArrivalForecast.overloadFloor's quantile", () => {
  it("counts each second of the window once: the newest (the current rate) is not weighted twice", () => {
    // burstAlpha 1: the fast rates are the counts, 10 down to 1 (the newest). The median of the ten (index 5 of the
    // sorted ten) is 6; with the current rate counted again beside the window it read 5.
    const forecast = new FreshArrivalForecast({
      freshAlpha: 0.1,
      baselineWindowS: 60,
      burstAlpha: 1,
      overloadFloorS: 10,
      overloadFloorQuantile: 0.5,
      overloadFloorSkipsRise: 0,
      overloadFloorMovingS: 0,
    });
    for (let n = 10; n >= 1; n--) {
      for (let i = 0; i < n; i++) forecast.count();
      forecast.closeSeconds(1);
    }
    expect(forecast.recent).toBe(1);
    expect(forecast.overloadFloor(true, 10, 20)).toBe(6);
  });
});

describe("riseLength (a one-change-point fit of the newest values)", () => {
  /** Squared error of values about their mean. */
  const spread = (values: readonly number[]) => {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    return values.reduce((a, v) => a + (v - mean) ** 2, 0);
  };
  const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

  it("counts a newer run of exactly the ratio times the older one as a step up", () => {
    // Written oldest first: 2, 2, 2, then 4, 4 - the newer two average exactly twice the older three.
    expect(riseLength(Float64Array.of(2, 2, 2, 4, 4), 5, 5, 2)).toBe(2);
    expect(riseLength(Float64Array.of(2, 2, 2, 4, 4), 5, 5, 2.01)).toBe(0);
  });

  it("returns a best split whose newer run stepped up by the ratio, or 0 when no best split did", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 20 }), fc.double({ min: 0, max: 50, noNaN: true })), {
          minLength: 1,
          maxLength: 40,
          size: "max",
        }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 50 }),
        fc.constantFrom(1.01, 1.5, 2, 3),
        (written, ringLength, n, ratio) => {
          // A ring of `ringLength` that had `written` written to it in turn (oldest first).
          const ring = new Float64Array(ringLength);
          written.forEach((v, i) => {
            ring[i % ringLength] = v;
          });
          const newestFirst = written.slice(-Math.min(n, ringLength)).reverse();
          const m = newestFirst.length;
          const fits = Array.from({ length: Math.max(0, m - 1) }, (_, i) => {
            const k = i + 1;
            return spread(newestFirst.slice(0, k)) + spread(newestFirst.slice(k));
          });
          const best = Math.min(...fits);
          const tolerance = 1e-9 * Math.max(1, ...newestFirst.map((v) => v * v)) * m;
          const isBest = (k: number) => (fits[k - 1] as number) <= best + tolerance;
          const steps = (k: number) =>
            mean(newestFirst.slice(0, k)) >= ratio * mean(newestFirst.slice(k)) * (1 - 1e-9) - 1e-12;
          const got = riseLength(ring, written.length, n, ratio);
          if (got === 0) {
            // A split clearly best (beyond float noise) that clearly stepped up is a rise: 0 is then wrong.
            for (let k = 1; k < m; k++) {
              const clearlyBest = fits.every((fit, j) => j === k - 1 || fit > (fits[k - 1] as number) + tolerance);
              const clearlySteps = mean(newestFirst.slice(0, k)) > ratio * mean(newestFirst.slice(k)) * (1 + 1e-9);
              if (clearlyBest && clearlySteps) expect.fail(`0, but the split after ${k} of ${newestFirst} steps up`);
            }
          } else {
            expect(got).toBeGreaterThanOrEqual(1);
            expect(got).toBeLessThan(m);
            expect(isBest(got)).toBe(true);
            expect(steps(got)).toBe(true);
          }
        },
      ),
      runs,
    );
  });
});
