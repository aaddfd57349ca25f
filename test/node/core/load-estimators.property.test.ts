import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BACKOFF_INITIAL_MS,
  BACKOFF_MAX_MS,
  backoffDelayMs,
  PROBE_DEADLINE_INITIAL_MS,
  PROBE_DEADLINE_MAX_MS,
  probeDeadlineMs,
} from "../../../src/core/backoff";
import { DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../../../src/core/capacity-booking";
import { DEFAULT_DRAIN_RATE_OPTIONS, DrainRateEstimator, type DrainRateOptions } from "../../../src/core/drain-rate";
import {
  FreshArrivalForecast,
  type FreshArrivalForecastOptions,
  riseLength,
} from "../../../src/core/fresh-arrival-forecast";
import { RecentRate } from "../../../src/core/recent-rate";
import {
  COMPUTED_MAX_S,
  COMPUTED_MIN_S,
  DEFAULT_SATURATION_OPTIONS,
  decideRetryAfter,
  EMITTED_MAX_S,
  estimateRetryAfterS,
  jitterWithin,
  type LoadSignals,
  RETRY_AFTER_POLICIES,
  type RetryAfterDecision,
  type RetryAfterOptions,
  type SaturationOptions,
} from "../../../src/core/retry-after";
import { ForecastModel } from "../../support/fresh-arrival-forecast-model";
import { propertyRuns } from "../../support/property-runs";

/**
 * Model-based properties of the router's load estimators, which every Retry-After hint is computed from
 * (/work/shared/spec/retry-after.md, "Estimation", "Fallback ladder", "Clamp, jitter, format"): the drain-rate EWMA
 * against the spec's formula recomputed from the intervals closed, a recent rate against a count of the events in its
 * window, the fresh-arrival forecast against its documented definition recomputed from the per-second counts, and
 * the hint ladder (rung, clamps, jitter, header rounding) against the spec. Arbitrary event sequences and clock steps:
 * interval edges +-1 ms, long gaps, bursts in one millisecond, a clock that does not move (or, where the code says
 * it is ignored, goes back). No real time: every clock is a number the test moves.
 */

const RUN = propertyRuns(200, 20261205);

/**
 * A real in [min, max] spread uniformly over the range (fc.double spreads over the floats' representation, so most of
 * its draws are tiny), with the bounds and some fc.double draws beside it.
 */
const real = (min: number, max: number): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
    { weight: 8, arbitrary: fc.integer({ min: 0, max: 2 ** 30 }).map((i) => min + ((max - min) * i) / 2 ** 30) },
    { weight: 1, arbitrary: fc.double({ min, max, noNaN: true }) },
  );

/** `actual` equals `expected` within a small relative tolerance (real-valued definitions recomputed another way). */
function close(actual: number | undefined, expected: number | undefined, what: string, rel = 1e-9): void {
  if (expected === undefined || actual === undefined) {
    expect(actual, what).toBe(expected);
    return;
  }
  const tol = rel * Math.max(1, Math.abs(expected)) + 1e-12;
  if (!(Math.abs(actual - expected) <= tol)) expect.fail(`${what}: ${actual} != ${expected} (tolerance ${tol})`);
}

// ---------------------------------------------------------------------------------------------------------------
// drain-rate.ts
// ---------------------------------------------------------------------------------------------------------------

/** The spec's EWMA in closed form: rate_n = (1-a)^(n-1) s_1 + sum_{k>=2} a (1-a)^(n-k) s_k; undefined before s_1. */
function ewmaClosedForm(samples: readonly number[], alpha: number): number | undefined {
  const n = samples.length;
  if (n === 0) return undefined;
  let rate = (1 - alpha) ** (n - 1) * (samples[0] as number);
  for (let k = 2; k <= n; k++) rate += alpha * (1 - alpha) ** (n - k) * (samples[k - 1] as number);
  return rate;
}

type DrainOp =
  | { kind: "step"; ms: number }
  | { kind: "edge"; delta: -1 | 0 | 1 }
  | { kind: "drain"; times: number; depth: number }
  | { kind: "advance"; depth: number };

const depthArb = fc.oneof(
  { weight: 2, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 50 }) },
);

const drainOp: fc.Arbitrary<DrainOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      ms: fc.oneof(
        { weight: 2, arbitrary: fc.constant(0) }, // the clock does not move
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 1_500 }) },
        { weight: 1, arbitrary: fc.integer({ min: 1_500, max: 600_000 }) }, // a long gap
        { weight: 1, arbitrary: fc.integer({ min: -2_000, max: -1 }) }, // the clock goes back (ignored, spec)
      ),
    }),
  },
  // To the end of the current interval, exactly or 1 ms either side.
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("edge" as const),
      delta: fc.constantFrom(-1 as const, 0 as const, 1 as const),
    }),
  },
  // A burst of drains in one millisecond.
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("drain" as const),
      times: fc.integer({ min: 1, max: 40 }),
      depth: depthArb,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("advance" as const), depth: depthArb }) },
);

const drainOptionsArb: fc.Arbitrary<DrainRateOptions> = fc.oneof(
  fc.constant(DEFAULT_DRAIN_RATE_OPTIONS),
  fc.record({
    alpha: fc.oneof(fc.constant(1), real(0.01, 1)),
    // Whole milliseconds, so the interval's edge is a clock value.
    intervalS: fc.constantFrom(0.001, 0.25, 1, 2.5, 10),
    warmupSamples: fc.integer({ min: 1, max: 6 }),
  }),
);

describe("drain-rate.ts: DrainRateEstimator", () => {
  it("equals the spec's EWMA recomputed from the intervals it closed, at every instant; warm-up and drains counted exactly", () => {
    fc.assert(
      fc.property(
        drainOptionsArb,
        fc.integer({ min: 0, max: 1e9 }),
        fc.array(drainOp, { maxLength: 120, size: "max" }),
        (options, start, ops) => {
          const intervalMs = Math.round(options.intervalS * 1000);
          let now = start;
          const est = new DrainRateEstimator(options, now);
          // The model: the open interval (start, drains, whether the queue was seen non-empty), the queue's depth at
          // the last event (what it held until this one), and the samples taken.
          let openedAt = start;
          let drains = 0;
          let busy = false;
          let lastDepth = 0;
          let drainCount = 0;
          const samples: number[] = [];
          /**
           * Intervals close lazily, on the first event at least one interval after the open one began, and each is
           * `intervalS` long (the spec's drains / interval_s): the drains counted fell in it; the whole intervals after
           * it had no drain, and were busy (a 0 each) if the queue held requests at the last event, else idle.
           */
          const modelAdvance = (depth: number) => {
            const elapsedMs = now - openedAt;
            if (elapsedMs >= intervalMs) {
              // Spec: an idle interval (no drains, nothing queued) is skipped; a busy one with no drains is a 0.
              if (drains > 0 || busy) samples.push(drains / options.intervalS);
              const whole = Math.floor(elapsedMs / intervalMs);
              drains = 0;
              if (lastDepth > 0) {
                for (let i = 1; i < Math.min(whole, 200); i++) samples.push(0);
                openedAt += whole * intervalMs;
                busy = openedAt < now;
              } else {
                openedAt = now;
                busy = false;
              }
            }
            if (depth > 0) busy = true;
            lastDepth = depth;
          };
          for (const op of ops) {
            if (op.kind === "step") now += op.ms;
            else if (op.kind === "edge") now = Math.max(now, openedAt + intervalMs + op.delta);
            else if (op.kind === "drain")
              for (let i = 0; i < op.times; i++) {
                est.recordDrain(now, op.depth);
                modelAdvance(op.depth);
                drains += 1;
                drainCount += 1;
              }
            else {
              est.advance(now, op.depth);
              modelAdvance(op.depth);
            }
            const at = `t=${now} after ${JSON.stringify(op)}`;
            expect(est.samples, `samples ${at}`).toBe(samples.length);
            expect(est.warm, `warm ${at}`).toBe(samples.length >= options.warmupSamples);
            expect(est.drainCount, `drain counter ${at}`).toBe(drainCount);
            const rate = est.rate;
            close(rate, ewmaClosedForm(samples, options.alpha), `rate ${at}`);
            if (rate !== undefined) {
              // Never negative, NaN or infinite; a weighted mean of the samples, so within their range.
              expect(Number.isFinite(rate) && rate >= 0, `rate ${rate} ${at}`).toBe(true);
              expect(rate).toBeGreaterThanOrEqual(Math.min(...samples) * (1 - 1e-12));
              expect(rate).toBeLessThanOrEqual(Math.max(...samples) * (1 + 1e-12));
            }
          }
        },
      ),
      RUN,
    );
  });

  it("addSample follows the spec's rule: zero/negative elapsed ignored, idle skipped, busy zero a sample of 0", () => {
    const sampleArb = fc.record({
      drains: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_000 })),
      elapsedS: fc.oneof(
        fc.constantFrom(0, -0, -1, Number.NaN, Number.NEGATIVE_INFINITY, 1e-3, 1, 3600),
        real(1e-3, 1e4),
      ),
      busy: fc.boolean(),
    });
    fc.assert(
      fc.property(drainOptionsArb, fc.array(sampleArb, { maxLength: 60 }), (options, input) => {
        const est = new DrainRateEstimator(options, 0);
        const samples: number[] = [];
        for (const { drains, elapsedS, busy } of input) {
          est.addSample(drains, elapsedS, busy);
          if (elapsedS > 0 && (drains > 0 || busy)) samples.push(drains / elapsedS);
          expect(est.samples).toBe(samples.length);
          expect(est.warm).toBe(samples.length >= options.warmupSamples);
          close(est.rate, ewmaClosedForm(samples, options.alpha), "rate");
          if (est.rate !== undefined) expect(est.rate >= 0 && Number.isFinite(est.rate)).toBe(true);
        }
        // The spec's vector: samples 10 then 20 give 0.3 * 20 + 0.7 * 10 = 13.
        const vector = new DrainRateEstimator(DEFAULT_DRAIN_RATE_OPTIONS, 0);
        vector.addSample(10, 1, true);
        vector.addSample(20, 1, true);
        close(vector.rate, 13, "spec vector");
      }),
      RUN,
    );
  });

  it("a steady drain of k per interval, closed on its edges, reads exactly k per interval (whatever the warm-up)", () => {
    fc.assert(
      fc.property(
        drainOptionsArb,
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 20 }),
        (options, k, intervals) => {
          const intervalMs = Math.round(options.intervalS * 1000);
          const est = new DrainRateEstimator(options, 0);
          for (let i = 0; i < intervals; i++) for (let j = 0; j < k; j++) est.recordDrain(i * intervalMs, 1);
          est.advance(intervals * intervalMs, 1);
          expect(est.samples).toBe(intervals);
          close(est.rate, k / options.intervalS, "steady rate");
        },
      ),
      RUN,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// recent-rate.ts
// ---------------------------------------------------------------------------------------------------------------

type RecentOp =
  | { kind: "step"; ms: number }
  | { kind: "edge"; delta: -1 | 0 | 1 }
  | { kind: "add"; times: number }
  | { kind: "rate" };

const recentOp: fc.Arbitrary<RecentOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      ms: fc.oneof(
        { weight: 2, arbitrary: fc.constant(0) },
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 2_500 }) },
        { weight: 1, arbitrary: fc.integer({ min: 2_500, max: 100_000 }) },
      ),
    }),
  },
  // To the next whole second, exactly or 1 ms either side.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("edge" as const),
      delta: fc.constantFrom(-1 as const, 0 as const, 1 as const),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("add" as const), times: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("rate" as const) }) },
);

describe("recent-rate.ts: RecentRate", () => {
  it("is the count of events in the windowS whole seconds before the current one, over windowS", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 1e10 }),
        fc.array(recentOp, { maxLength: 120, size: "max" }),
        (windowS, start, ops) => {
          const rate = new RecentRate(windowS);
          let now = start;
          const events: number[] = [];
          for (const op of ops) {
            if (op.kind === "step") now += op.ms;
            else if (op.kind === "edge") now = Math.max(now, (Math.floor(now / 1000) + 1) * 1000 + op.delta);
            else if (op.kind === "add")
              for (let i = 0; i < op.times; i++) {
                rate.add(now);
                events.push(now);
              }
            // The clock never goes back here (callers pass a monotonic clock); `rate` is read after every op.
            const current = Math.floor(now / 1000);
            const inWindow = events.filter((t) => {
              const s = Math.floor(t / 1000);
              return s >= current - windowS && s <= current - 1;
            }).length;
            const got = rate.rate(now);
            expect(Number.isFinite(got) && got >= 0).toBe(true);
            expect(got, `t=${now} after ${JSON.stringify(op)}`).toBe(inWindow / windowS);
          }
        },
      ),
      RUN,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// fresh-arrival-forecast.ts
// ---------------------------------------------------------------------------------------------------------------

type ForecastOp =
  | { kind: "count"; n: number }
  | { kind: "close"; elapsed: number }
  | { kind: "floor"; starts: boolean; depth: number; drain: number; relative: boolean };

/** Closes of up to `maxGap` seconds at once (a gap of seconds with no ledger event); mostly one. */
const forecastOp = (maxGap: number): fc.Arbitrary<ForecastOp> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("count" as const), n: fc.integer({ min: 1, max: 60 }) }) },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("close" as const),
        elapsed: fc.oneof(
          { weight: 6, arbitrary: fc.constant(1) },
          { weight: 2, arbitrary: fc.integer({ min: 2, max: 5 }) },
          { weight: 1, arbitrary: fc.integer({ min: 1, max: maxGap }) },
          { weight: 1, arbitrary: fc.constant(maxGap) },
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("floor" as const),
        starts: fc.boolean(),
        depth: fc.integer({ min: 0, max: 400 }),
        // A drain rate of its own, or a multiple of the current fast rate (so the moving means fall either side).
        drain: real(0.05, 80),
        relative: fc.boolean(),
      }),
    },
  );

const forecastOptionsArb: fc.Arbitrary<FreshArrivalForecastOptions> = fc.oneof(
  fc.constant(DEFAULT_CAPACITY_BOOKING_OPTIONS),
  fc.record({
    freshAlpha: real(0.01, 1),
    burstAlpha: real(0.01, 1),
    // At least the overload floor's ring (overloadFloorS + 30 s): see the long-gap property below.
    baselineWindowS: fc.integer({ min: 42, max: 70 }),
    overloadFloorS: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 12 }), real(0, 12)),
    overloadFloorQuantile: fc.constantFrom(0, 0.25, 0.5, 0.9, 1),
    overloadFloorSkipsRise: fc.constantFrom(0, 1, 1.5, 2),
    overloadFloorMovingS: fc.constantFrom(0, 1, 2, 3, 5),
  }),
);

function checkForecast(
  forecast: FreshArrivalForecast,
  model: ForecastModel,
  options: FreshArrivalForecastOptions,
  op: ForecastOp,
  got: number | undefined,
): void {
  const at = `after ${model.counts.length} s, ${JSON.stringify(op)}`;
  const baseline = forecast.baseline;
  close(baseline, model.baseline, `baseline ${at}`);
  close(forecast.recent, model.recent, `recent ${at}`);
  const maxCount = Math.max(0, ...model.counts);
  if (baseline !== undefined) {
    // The lowest smoothed rate of its window: at most each of them (a burst in it does not raise it), the latest too.
    expect(Number.isFinite(baseline) && baseline >= 0).toBe(true);
    const window = model.slow.slice(-Math.max(1, options.baselineWindowS));
    for (const s of window) expect(baseline).toBeLessThanOrEqual(s * (1 + 1e-12) + 1e-12);
    expect(baseline).toBeLessThanOrEqual(maxCount * (1 + 1e-12));
  }
  expect(Number.isFinite(forecast.recent) && forecast.recent >= 0).toBe(true);
  expect(forecast.recent).toBeLessThanOrEqual(maxCount * (1 + 1e-12));
  if (op.kind === "floor") {
    close(got, model.floor, `overload floor ${at}`);
    const floor = got as number;
    expect(Number.isFinite(floor) && floor >= 0, `floor ${floor} ${at}`).toBe(true);
    // Read from the fast rates and moving means seen: never above the highest of them.
    expect(floor).toBeLessThanOrEqual(Math.max(0, ...model.fast, ...model.moving) * (1 + 1e-12));
    if (!(options.overloadFloorS >= 1)) expect(floor).toBe(0);
  }
}

describe("fresh-arrival-forecast.ts: FreshArrivalForecast", () => {
  it("baseline, recent rate and overload floor equal their documented definitions recomputed from the counts", () => {
    fc.assert(
      fc.property(forecastOptionsArb, fc.array(forecastOp(40), { maxLength: 150, size: "max" }), (options, ops) => {
        const forecast = new FreshArrivalForecast(options);
        const model = new ForecastModel(options);
        for (const op of ops) {
          let got: number | undefined;
          if (op.kind === "count") {
            for (let i = 0; i < op.n; i++) forecast.count();
            model.count(op.n);
          } else if (op.kind === "close") {
            forecast.closeSeconds(op.elapsed);
            model.closeSeconds(op.elapsed);
          } else {
            const before = model.floor;
            const drain = op.relative ? Math.max(0.05, (model.recent * op.drain) / 40) : op.drain;
            got = forecast.overloadFloor(op.starts, op.depth, drain);
            model.overloadFloor(op.starts, op.depth, drain);
            // Later refusals only lower the floor, to the current rate when that is lower.
            if (!op.starts) expect(got).toBeLessThanOrEqual(before * (1 + 1e-12) + 1e-12);
          }
          checkForecast(forecast, model, options, op, got);
        }
      }),
      RUN,
    );
  });

  it("the overload floor rises above the fast rates' quantile only to a moving mean below the drain rate", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 300 }),
        real(0.1, 50),
        (perSecond, depth, drain) => {
          const options = DEFAULT_CAPACITY_BOOKING_OPTIONS;
          const withMoving = new FreshArrivalForecast(options);
          const fastOnly = new FreshArrivalForecast({ ...options, overloadFloorMovingS: 0 });
          for (const n of perSecond)
            for (const f of [withMoving, fastOnly]) {
              for (let i = 0; i < n; i++) f.count();
              f.closeSeconds(1);
            }
          const floor = withMoving.overloadFloor(true, depth, drain);
          const fast = fastOnly.overloadFloor(true, depth, drain);
          // "A floor that reads low overbooks, one that reads high only books less, so the moving means may raise it
          // and never lower it" - and only while below the drain rate (else they read the overload itself).
          if (fast < drain) {
            expect(floor).toBeGreaterThanOrEqual(fast);
            if (floor > fast) expect(floor).toBeLessThan(drain);
          } else expect(floor).toBe(fast);
        },
      ),
      RUN,
    );
  });

  it("the baseline is the lowest smoothed rate of exactly the last baselineWindowS seconds, second by second", () => {
    // Bursts and quiet spells, so the lowest smoothed rate (the end of a quiet spell) crosses the window's edge.
    const segment = fc.record({ n: fc.integer({ min: 0, max: 40 }), seconds: fc.integer({ min: 1, max: 40 }) });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        real(0.01, 1),
        fc.array(segment, { minLength: 1, maxLength: 8 }),
        (baselineWindowS, freshAlpha, segments) => {
          const options = { ...DEFAULT_CAPACITY_BOOKING_OPTIONS, baselineWindowS, freshAlpha };
          const forecast = new FreshArrivalForecast(options);
          const model = new ForecastModel(options);
          for (const { n, seconds } of segments)
            for (let s = 0; s < seconds; s++) {
              for (let i = 0; i < n; i++) forecast.count();
              forecast.closeSeconds(1);
              model.count(n);
              model.closeSeconds(1);
              close(forecast.baseline, model.baseline, `baseline after ${model.counts.length} s`);
              close(forecast.recent, model.recent, `recent after ${model.counts.length} s`);
            }
        },
      ),
      RUN,
    );
  });

  it("a burst fades: over empty seconds the fast rate falls by (1 - burstAlpha) a second, to 0, never rising", () => {
    fc.assert(
      fc.property(
        forecastOptionsArb,
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        (options, burst, gaps) => {
          const forecast = new FreshArrivalForecast(options);
          for (const n of burst) {
            for (let i = 0; i < n; i++) forecast.count();
            forecast.closeSeconds(1);
          }
          let prev = forecast.recent;
          for (const gap of gaps) {
            forecast.closeSeconds(gap);
            const now = forecast.recent;
            expect(now).toBeLessThanOrEqual(prev);
            close(now, prev * (1 - options.burstAlpha) ** gap, `fade over ${gap} s`);
            prev = now;
          }
        },
      ),
      RUN,
    );
  });

  it("a gap of any length closes like that many single seconds (the first with the arrivals, the others empty)", () => {
    // closeSeconds' JSDoc; CapacityBooking passes it the whole seconds elapsed since its last event, however many.
    fc.assert(
      fc.property(
        fc.oneof(fc.constant(DEFAULT_CAPACITY_BOOKING_OPTIONS), forecastOptionsArb),
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 20 }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 400 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 15 }),
        fc.integer({ min: 0, max: 200 }),
        real(0.5, 60),
        (options, before, inGapSecond, gap, after, depth, drain) => {
          const atOnce = new FreshArrivalForecast(options);
          const oneByOne = new FreshArrivalForecast(options);
          const feed = (n: number) => {
            for (let i = 0; i < n; i++) {
              atOnce.count();
              oneByOne.count();
            }
          };
          for (const n of before) {
            feed(n);
            atOnce.closeSeconds(1);
            oneByOne.closeSeconds(1);
          }
          feed(inGapSecond);
          atOnce.closeSeconds(gap);
          for (let k = 0; k < gap; k++) oneByOne.closeSeconds(1);
          const compare = (what: string) => {
            close(atOnce.baseline, oneByOne.baseline, `baseline ${what}`);
            close(atOnce.recent, oneByOne.recent, `recent ${what}`);
          };
          compare(`after a ${gap} s gap`);
          for (const n of after) {
            feed(n);
            atOnce.closeSeconds(1);
            oneByOne.closeSeconds(1);
            compare("after it");
          }
          close(
            atOnce.overloadFloor(true, depth, drain),
            oneByOne.overloadFloor(true, depth, drain),
            "overload floor after it",
          );
        },
      ),
      RUN,
    );
  });

  it("riseLength is the best one-change-point split when its newer run is at least `ratio` times the older", () => {
    fc.assert(
      fc.property(
        fc.array(real(0, 100), { minLength: 1, maxLength: 16 }),
        fc.integer({ min: 1, max: 16 }),
        fc.constantFrom(1.5, 2, 3),
        (values, n, ratio) => {
          const ring = Float64Array.from(values);
          const got = riseLength(ring, ring.length, n, ratio);
          const newestFirst = [...values].reverse().slice(0, n);
          const m = newestFirst.length;
          const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
          const sse = (xs: number[]) => {
            const mu = mean(xs);
            return xs.reduce((a, x) => a + (x - mu) ** 2, 0);
          };
          const fits: { k: number; error: number; rises: boolean }[] = [];
          for (let k = 1; k < m; k++) {
            const newer = newestFirst.slice(0, k);
            const older = newestFirst.slice(k);
            fits.push({ k, error: sse(newer) + sse(older), rises: mean(newer) >= ratio * mean(older) });
          }
          expect(got).toBeGreaterThanOrEqual(0);
          expect(got).toBeLessThan(Math.max(1, m));
          if (fits.length === 0) {
            expect(got).toBe(0);
            return;
          }
          const best = Math.min(...fits.map((f) => f.error));
          const tol = 1e-9 * Math.max(1, ...newestFirst.map((v) => v * v)) * m;
          const nearBest = fits.filter((f) => f.error <= best + tol);
          if (got > 0) {
            const fit = fits[got - 1] as (typeof fits)[number];
            expect(fit.error).toBeLessThanOrEqual(best + tol);
            expect(fit.rises).toBe(true);
          } else expect(nearBest.some((f) => !f.rises)).toBe(true);
        },
      ),
      RUN,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// retry-after.ts and backoff.ts
// ---------------------------------------------------------------------------------------------------------------

/** The random source's draw, in [0, 1): spread uniformly, with its edges (1 - 2^-53 the largest). */
const uArb = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(0, 0.5, 1 - 2 ** -53) },
  { weight: 9, arbitrary: fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((i) => i / 2 ** 32) },
);

const rateArb = fc.oneof(
  fc.constantFrom(undefined, 0, -0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-300, 5e-324),
  real(1e-3, 1e4),
);

const signalsArb: fc.Arbitrary<LoadSignals> = fc.record({
  queueDepth: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 1e7 })),
  drainRate: rateArb,
  warm: fc.boolean(),
  replicaQueueLengthSum: fc.integer({ min: 0, max: 2_000 }),
  numReplicas: fc.integer({ min: 0, max: 16 }),
  maxOngoingRequests: fc.constantFrom(0, 1, 4, 100, 1e9),
  backoffStreak: fc.integer({ min: 0, max: 40 }),
});

const saturationArb: fc.Arbitrary<SaturationOptions> = fc.oneof(
  fc.constant(DEFAULT_SATURATION_OPTIONS),
  fc.record({
    backoffStreakSaturation: fc.integer({ min: 0, max: 10 }),
    occupancyWeight: fc.oneof(fc.constant(0), real(0, 2)),
    backoffWeight: fc.oneof(fc.constant(0), real(0, 2)),
  }),
);

const optionsArb: fc.Arbitrary<RetryAfterOptions> = fc.record({
  retryAfterPolicy: fc.constantFrom(...RETRY_AFTER_POLICIES),
  retryAfterS: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(0, 5, 7.5, 30, 120, -3, Number.NaN, 1.7e308, Number.POSITIVE_INFINITY),
    real(0, 1e4),
  ),
  jitter: fc.oneof(fc.constantFrom(0, 0.2, 1), real(0, 1)),
  saturation: saturationArb,
});

/** The client's horizon the router passes as `maxS`: 60 s unless the client honours longer. */
const maxSArb = fc.oneof(fc.constantFrom(COMPUTED_MAX_S, 120), real(0, 300));

/** The spec's saturation factor, `1 + w1 * occupancy + w2 * backoff_signal`. */
function modelFactor(s: LoadSignals, o: SaturationOptions): number {
  const capacity = s.numReplicas * s.maxOngoingRequests;
  const occupancy = capacity > 0 ? Math.min(1, s.replicaQueueLengthSum / capacity) : 0;
  const backoff = o.backoffStreakSaturation > 0 ? Math.min(s.backoffStreak / o.backoffStreakSaturation, 1) : 0;
  return 1 + o.occupancyWeight * occupancy + o.backoffWeight * backoff;
}

/** The spec's computed estimate, or undefined (static policy, cold, rate 0/NaN/infinite); an overflow is a huge wait. */
function modelEstimate(policy: RetryAfterOptions["retryAfterPolicy"], s: LoadSignals, o: SaturationOptions) {
  if (policy === "static") return undefined;
  const rate = s.drainRate;
  if (!s.warm || rate === undefined || !(rate > 0) || rate === Number.POSITIVE_INFINITY) return undefined;
  const estimate = (s.queueDepth / rate) * (policy === "router_queue_drain_rate" ? modelFactor(s, o) : 1);
  return estimate === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : estimate;
}

/** Header values: whole ms of the jittered value rounded up (sub-nanosecond float error aside), seconds from them. */
function checkHeaders(d: RetryAfterDecision): void {
  const jittered = d.jitteredS as number;
  const ms = d.retryAfterMs as number;
  const s = d.retryAfterS as number;
  expect(Number.isSafeInteger(ms) && ms >= 0, `retry-after-ms ${ms}`).toBe(true);
  expect(Number.isSafeInteger(s) && s >= 0, `Retry-After ${s}`).toBe(true);
  expect(s).toBe(Math.ceil(ms / 1000));
  const target = Math.min(jittered, EMITTED_MAX_S) * 1000;
  // Rounded up: never below the jittered value (a sub-nanosecond float error aside), less than 1 ms above it.
  expect(ms, `retry-after-ms ${ms} for ${target} ms`).toBeGreaterThanOrEqual(target - 1e-5);
  expect(ms).toBeLessThan(target + 1);
}

function checkDecision(
  d: RetryAfterDecision,
  computed: number | undefined,
  options: RetryAfterOptions,
  u: number,
  maxS: number,
): void {
  const j = options.jitter;
  if (computed !== undefined) {
    // Computed rung: clamped to [1, cap], jitter drawn inside it (the spec's correction), never piled on the cap.
    expect(d.rung).toBe("computed");
    const cap = Math.max(COMPUTED_MIN_S, maxS);
    const pre = Math.min(cap, Math.max(COMPUTED_MIN_S, computed));
    expect(d.preJitterS).toBe(pre);
    const jittered = d.jitteredS as number;
    expect(jittered).toBeGreaterThanOrEqual(COMPUTED_MIN_S);
    expect(jittered).toBeLessThanOrEqual(cap);
    // (A draw within 1e-9 of u = 1, or a jitter below 1e-6, can round onto the cap: measure zero, not a pile.)
    if (j >= 1e-6 && cap > COMPUTED_MIN_S && u < 1 - 1e-9) expect(jittered, "no draw on the cap").toBeLessThan(cap);
    // Plain jitter when its whole range fits inside [1, cap]; else min(value, cap) jittered downward only near the
    // cap, upward only near the floor.
    const expected =
      pre * (1 + j) > cap
        ? pre * (1 - j * (1 - u))
        : pre * (1 - j) < COMPUTED_MIN_S
          ? pre * (1 + j * u)
          : pre * (1 + j * (2 * u - 1));
    close(jittered, Math.min(cap, Math.max(COMPUTED_MIN_S, expected)), "jittered");
    // (A draw within 1e-9 of u = 0, or a jitter below 1e-6, can round onto the floor: measure zero, not a pile.)
    if (j >= 1e-6 && cap > COMPUTED_MIN_S && u > 1e-9 && pre * (1 + j) <= cap)
      expect(jittered, "no draw on the floor").toBeGreaterThan(COMPUTED_MIN_S);
    checkHeaders(d);
    expect(d.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(d.retryAfterS).toBeLessThanOrEqual(Math.ceil(cap));
    if (cap === COMPUTED_MAX_S) expect(d.retryAfterMs).toBeLessThanOrEqual(60_000);
    return;
  }
  const fallback = options.retryAfterS;
  if (fallback === undefined || Number.isNaN(fallback)) {
    expect(d).toEqual({
      rung: "none",
      preJitterS: undefined,
      jitteredS: undefined,
      retryAfterS: undefined,
      retryAfterMs: undefined,
    });
    return;
  }
  // Static rung: jittered like the computed value but not clamped (120 stays about 120), never negative.
  expect(d.rung).toBe("static_fallback");
  const pre = Math.max(0, fallback);
  expect(d.preJitterS).toBe(pre);
  close(d.jitteredS, Math.max(0, Math.min(pre, EMITTED_MAX_S) * (1 + j * (2 * u - 1))), "static jittered");
  checkHeaders(d);
}

describe("retry-after.ts and backoff.ts: the hint ladder", () => {
  it("the computed estimate is queue_depth / drain_rate * saturation_factor, with the factor in [1, 1 + w1 + w2]", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RETRY_AFTER_POLICIES),
        signalsArb,
        saturationArb,
        (policy, signals, saturation) => {
          const got = estimateRetryAfterS(policy, signals, saturation);
          const expected = modelEstimate(policy, signals, saturation);
          close(got, expected, "estimate");
          if (got !== undefined) expect(Number.isFinite(got) && got >= 0).toBe(true);
          const factor = modelFactor(signals, saturation);
          expect(factor).toBeGreaterThanOrEqual(1);
          expect(factor).toBeLessThanOrEqual(1 + saturation.occupancyWeight + saturation.backoffWeight);
        },
      ),
      RUN,
    );
  });

  it("rung, clamps, jitter and headers follow the spec for any signals, options, draw and horizon", () => {
    fc.assert(
      fc.property(signalsArb, optionsArb, uArb, fc.option(maxSArb, { nil: undefined }), (signals, options, u, maxS) => {
        let draws = 0;
        const random = () => {
          draws += 1;
          return u;
        };
        const d =
          maxS === undefined
            ? decideRetryAfter(signals, options, random)
            : decideRetryAfter(signals, options, random, undefined, maxS);
        checkDecision(d, modelEstimate(options.retryAfterPolicy, signals, options.saturation), options, u, maxS ?? 60);
        expect(draws).toBe(d.rung === "none" ? 0 : 1);
      }),
      RUN,
    );
  });

  it("any failure of the estimator (a throw, NaN, infinite or negative) drops to the static rung, then to none", () => {
    const estimateArb = fc.oneof(
      fc.constant<number | undefined | "throw">("throw"),
      fc.constantFrom(undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1e-9, -5, 0, -0),
      real(0, 1e6),
    );
    fc.assert(
      fc.property(signalsArb, optionsArb, uArb, maxSArb, estimateArb, (signals, options, u, maxS, value) => {
        const d = decideRetryAfter(
          signals,
          options,
          () => u,
          () => {
            if (value === "throw") throw new Error("estimator failed");
            return value;
          },
          maxS,
        );
        const computed = typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
        checkDecision(d, computed, options, u, maxS);
      }),
      RUN,
    );
  });

  it("near either bound the draw is spread, not piled: monotone in u, drawn away from the cap or the floor", () => {
    fc.assert(
      fc.property(
        real(0, 1e5),
        real(0.01, 1),
        uArb,
        uArb,
        fc.constantFrom(COMPUTED_MAX_S, 120),
        (value, jitter, u1, u2, cap) => {
          const [lo, hi] = u1 <= u2 ? [u1, u2] : [u2, u1];
          const a = jitterWithin(value, jitter, lo, COMPUTED_MIN_S, cap);
          const b = jitterWithin(value, jitter, hi, COMPUTED_MIN_S, cap);
          expect(a).toBeLessThanOrEqual(b);
          const base = Math.min(cap, Math.max(COMPUTED_MIN_S, value));
          if (base * (1 + jitter) > cap) {
            // Uniform over [base (1 - jitter), base): strictly increasing in u, never on the cap.
            if (hi - lo > 1e-9 && base * (1 - jitter * (1 - lo)) >= COMPUTED_MIN_S) expect(a).toBeLessThan(b);
            if (hi < 1 - 1e-9) expect(b).toBeLessThan(cap);
            expect(a).toBeGreaterThanOrEqual(Math.max(COMPUTED_MIN_S, base * (1 - jitter)) * (1 - 1e-12));
          } else if (base * (1 - jitter) < COMPUTED_MIN_S) {
            // Near the floor, the mirror: uniform over (base, base (1 + jitter)], strictly increasing, never on 1 s.
            if (hi - lo > 1e-9) expect(a).toBeLessThan(b);
            if (lo > 1e-9) expect(a).toBeGreaterThan(COMPUTED_MIN_S);
            expect(b).toBeLessThanOrEqual(base * (1 + jitter) * (1 + 1e-12));
          }
        },
      ),
      RUN,
    );
  });

  it("the ladder over a live estimator: computed exactly when it is warm with a rate > 0, else the static value", () => {
    fc.assert(
      fc.property(
        fc.array(drainOp, { maxLength: 80, size: "max" }),
        fc.integer({ min: 0, max: 500 }),
        fc.option(real(0, 300), { nil: undefined }),
        uArb,
        (ops, queueDepth, retryAfterS, u) => {
          let now = 0;
          let openedAt = 0;
          const est = new DrainRateEstimator(DEFAULT_DRAIN_RATE_OPTIONS, now);
          for (const op of ops) {
            const samples = est.samples;
            if (op.kind === "step") now += op.ms;
            else if (op.kind === "edge") now = Math.max(now, openedAt + 1_000 + op.delta);
            else if (op.kind === "drain") for (let i = 0; i < op.times; i++) est.recordDrain(now, op.depth);
            else est.advance(now, op.depth);
            if (est.samples !== samples) openedAt = now;
          }
          const signals: LoadSignals = {
            queueDepth,
            drainRate: est.rate,
            warm: est.warm,
            replicaQueueLengthSum: 0,
            numReplicas: 2,
            maxOngoingRequests: 4,
            backoffStreak: 0,
          };
          const options: RetryAfterOptions = {
            retryAfterPolicy: "router_queue_drain_rate",
            retryAfterS,
            jitter: 0.2,
            saturation: DEFAULT_SATURATION_OPTIONS,
          };
          const d = decideRetryAfter(signals, options, () => u);
          const rate = est.rate ?? 0;
          const computes = est.samples >= 3 && rate > 0;
          expect(d.rung).toBe(computes ? "computed" : retryAfterS === undefined ? "none" : "static_fallback");
          if (computes) close(d.preJitterS, Math.min(60, Math.max(1, queueDepth / rate)), "computed before jitter");
          checkDecision(d, computes ? queueDepth / rate : undefined, options, u, 60);
        },
      ),
      RUN,
    );
  });

  it("placement backoff and probe deadlines follow Ray's ladders: doubling from 25 / 100 ms, capped at 500 / 1000 ms", () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 2_000 }), fc.integer({ min: 0, max: 2_000 }), (streak, other) => {
        let delay = 0;
        for (let k = 1; k <= streak; k++) delay = k === 1 ? BACKOFF_INITIAL_MS : Math.min(2 * delay, BACKOFF_MAX_MS);
        expect(backoffDelayMs(streak)).toBe(delay);
        let deadline = PROBE_DEADLINE_INITIAL_MS;
        for (let k = 1; k <= streak; k++) deadline = Math.min(2 * deadline, PROBE_DEADLINE_MAX_MS);
        expect(probeDeadlineMs(streak)).toBe(deadline);
        // Never decreasing in the streak.
        const [lo, hi] = streak <= other ? [streak, other] : [other, streak];
        expect(backoffDelayMs(lo)).toBeLessThanOrEqual(backoffDelayMs(hi));
        expect(probeDeadlineMs(lo)).toBeLessThanOrEqual(probeDeadlineMs(hi));
      }),
      RUN,
    );
  });
});
