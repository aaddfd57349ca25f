import { describe, expect, it } from "vitest";
import {
  applyJitter,
  DEFAULT_SATURATION_OPTIONS,
  decideRetryAfter,
  estimateRetryAfterS,
  jitterWithin,
  type LoadSignals,
  saturationFactor,
} from "../../../src/core/retry-after";
import {
  idleSignals as idle,
  retryAfterOptions as opts,
  fixedDraw as u,
  warmSignals as warm,
} from "../../support/retry-after-signals";

describe("jitter and rounding (spec vectors, jitter 0.2)", () => {
  it.each([
    [0, 8],
    [0.5, 10],
    [0.75, 11],
  ])("computed base 10 at u=%s -> %s", (uValue, expected) => {
    const d = decideRetryAfter(warm(10, 1), opts({ retryAfterPolicy: "queue_drain_rate" }), u(uValue));
    expect(d.rung).toBe("computed");
    expect(d.retryAfterS).toBe(expected);
  });

  it.each([
    [5, 0, 4],
    [5, 0.999999, 6],
    [7.5, 0.5, 8],
    [0, 0.3, 0],
    [120, 0.5, 120],
  ])("static %s at u=%s -> %s (not clamped)", (value, uValue, expected) => {
    const d = decideRetryAfter(idle, opts({ retryAfterPolicy: "static", retryAfterS: value }), u(uValue));
    expect(d.rung).toBe("static_fallback");
    expect(d.retryAfterS).toBe(expected);
  });

  it("gives retry-after-ms as whole milliseconds of the jittered value before rounding to seconds", () => {
    const d = decideRetryAfter(warm(20, 4), opts({ retryAfterPolicy: "queue_drain_rate" }), u(0));
    expect(d.jitteredS).toBeCloseTo(4, 12);
    expect(d.retryAfterMs).toBe(4000);
    const s = decideRetryAfter(idle, opts({ retryAfterPolicy: "static", retryAfterS: 7.5 }), u(0.1));
    expect(s.retryAfterMs).toBe(6300); // 7.5 * 0.84
    expect(s.retryAfterS).toBe(7);
  });

  it("never emits a negative static value and survives a huge one", () => {
    expect(decideRetryAfter(idle, opts({ retryAfterPolicy: "static", retryAfterS: -3 }), u(0.5)).retryAfterS).toBe(0);
    const huge = decideRetryAfter(idle, opts({ retryAfterPolicy: "static", retryAfterS: 1.7e308 }), u(0.999));
    expect(Number.isSafeInteger(huge.retryAfterS)).toBe(true);
    expect(Number.isSafeInteger(huge.retryAfterMs)).toBe(true);
    expect(huge.retryAfterS).toBeGreaterThan(1e12);
  });

  it("applyJitter keeps values non-negative", () => {
    expect(applyJitter(10, 1.5, 0)).toBe(0);
  });
});

describe("computed estimate (saturation factor 1)", () => {
  const noSat = opts({ retryAfterPolicy: "queue_drain_rate" });
  it.each([
    [10, 5, 2],
    [1, 100, 2], // 1 s jittered upward only (no pile on the floor): 1.1 s, a Retry-After of 2
    [1000, 1, 54],
    [20, 4, 5],
  ])("%s queued at rate %s -> %s s at u=0.5", (depth, rate, expected) => {
    expect(decideRetryAfter(warm(depth, rate), noSat, u(0.5)).retryAfterS).toBe(expected);
  });

  it("clamps after jitter too: 1000 at rate 1 with u=0 -> 48, 20 at 4/s with u=0 -> 4", () => {
    expect(decideRetryAfter(warm(1000, 1), noSat, u(0)).retryAfterS).toBe(48);
    expect(decideRetryAfter(warm(20, 4), noSat, u(0)).retryAfterS).toBe(4);
    expect(decideRetryAfter(warm(1, 100), noSat, u(0)).retryAfterS).toBe(1);
  });

  it("spec correction: no pile-up at the 60 s cap - above it, jitter draws below the cap, uniformly", () => {
    // Clamping after jitter sent every draw above the cap to exactly 60 s (half the refusals of a long overload
    // on one second). Now 1000 queued at rate 1 spreads over [48, 60] s.
    const draws = Array.from({ length: 100 }, (_, i) => decideRetryAfter(warm(1000, 1), noSat, u(i / 100)));
    const at60 = draws.filter((d) => (d.retryAfterMs as number) >= 60_000).length;
    expect(at60).toBeLessThanOrEqual(1);
    const ms = draws.map((d) => d.retryAfterMs as number);
    expect(Math.min(...ms)).toBe(48_000);
    expect(Math.max(...ms)).toBeGreaterThan(59_000);
    expect(new Set(ms.map((v) => Math.floor(v / 1000))).size).toBeGreaterThanOrEqual(12);
  });

  it("no pile-up at the 1 s floor either - below it, jitter draws above the floor, uniformly", () => {
    // Clamping after jitter sent every draw below 1 s to exactly 1 s: a short queue's hints (1 queued at 100/s, 1 s
    // before jitter) came back on one millisecond, half of them. Now they spread over [1, 1.2] s.
    const draws = Array.from({ length: 100 }, (_, i) => decideRetryAfter(warm(1, 100), noSat, u(i / 100)));
    const ms = draws.map((d) => d.retryAfterMs as number);
    expect(ms.filter((v) => v === 1000).length).toBeLessThanOrEqual(1);
    expect(Math.min(...ms)).toBe(1000);
    expect(Math.max(...ms)).toBeGreaterThan(1190);
    expect(new Set(ms).size).toBeGreaterThanOrEqual(95);
  });

  it("jitterWithin keeps values inside [min, max] and is the plain jitter well below the cap", () => {
    expect(jitterWithin(10, 0.2, 0, 1, 60)).toBe(8);
    expect(jitterWithin(10, 0.2, 0.75, 1, 60)).toBeCloseTo(11);
    expect(jitterWithin(1000, 0.2, 0.5, 1, 60)).toBeCloseTo(54);
    expect(jitterWithin(0.1, 0.2, 0, 1, 60)).toBe(1);
    expect(jitterWithin(1, 0.2, 0.5, 1, 60)).toBeCloseTo(1.1);
    expect(jitterWithin(1.1, 0.2, 1, 1, 60)).toBeCloseTo(1.32);
    expect(jitterWithin(100, 0.2, 0.5, 1, 120)).toBe(100); // 100 * 1.2 fits under 120: plain jitter
  });

  it("router_queue_drain_rate on an idle fleet with no backoff equals queue_drain_rate", () => {
    expect(estimateRetryAfterS("router_queue_drain_rate", warm(10, 5), DEFAULT_SATURATION_OPTIONS)).toBe(2);
  });
});

describe("saturation factor", () => {
  it("lies in [1, 1.5] with the default weights", () => {
    expect(saturationFactor(idle, DEFAULT_SATURATION_OPTIONS)).toBe(1);
    const full = { ...idle, replicaQueueLengthSum: 100, backoffStreak: 50 };
    expect(saturationFactor(full, DEFAULT_SATURATION_OPTIONS)).toBe(1.5);
    const half = { ...idle, replicaQueueLengthSum: 4, backoffStreak: 0 }; // occupancy 4 / (2*4)
    expect(saturationFactor(half, DEFAULT_SATURATION_OPTIONS)).toBe(1.125);
    const streak = { ...idle, backoffStreak: 2 }; // 2 / B=5
    expect(saturationFactor(streak, DEFAULT_SATURATION_OPTIONS)).toBeCloseTo(1.1, 12);
  });

  it("scales the computed value and turns off with w1 = w2 = 0", () => {
    const busy = { ...warm(10, 5), replicaQueueLengthSum: 8, backoffStreak: 5 };
    expect(estimateRetryAfterS("router_queue_drain_rate", busy, DEFAULT_SATURATION_OPTIONS)).toBe(3);
    expect(
      estimateRetryAfterS("router_queue_drain_rate", busy, {
        ...DEFAULT_SATURATION_OPTIONS,
        occupancyWeight: 0,
        backoffWeight: 0,
      }),
    ).toBe(2);
    expect(estimateRetryAfterS("queue_drain_rate", busy, DEFAULT_SATURATION_OPTIONS)).toBe(2);
  });
});

describe("fallback ladder", () => {
  it("computed when warm with a finite positive rate", () => {
    expect(decideRetryAfter(warm(10, 5), opts({ retryAfterS: 7 }), u(0.5)).rung).toBe("computed");
  });

  it.each([
    ["cold", { ...warm(10, 5), warm: false }],
    ["rate 0", warm(10, 0)],
    ["rate NaN", warm(10, Number.NaN)],
    ["rate infinite", warm(10, Number.POSITIVE_INFINITY)],
    ["no rate", { ...idle, warm: true }],
  ])("falls back to static when %s", (_name, signals) => {
    const d = decideRetryAfter(signals as LoadSignals, opts({ retryAfterS: 7 }), u(0.5));
    expect(d).toMatchObject({ rung: "static_fallback", retryAfterS: 7 });
  });

  it("sends no header when there is no estimate and no static value", () => {
    expect(decideRetryAfter(idle, opts(), u(0.5))).toMatchObject({ rung: "none", retryAfterS: undefined });
  });

  it("drops to the next rung when the estimator throws", () => {
    const d = decideRetryAfter(warm(10, 5), opts({ retryAfterS: 3 }), u(0.5), () => {
      throw new Error("boom");
    });
    expect(d).toMatchObject({ rung: "static_fallback", retryAfterS: 3 });
  });

  it("the static policy never computes", () => {
    const d = decideRetryAfter(warm(10, 5), opts({ retryAfterPolicy: "static" }), u(0.5));
    expect(d.rung).toBe("none");
  });
});
