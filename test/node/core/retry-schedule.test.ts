import { describe, expect, it } from "vitest";
import { DEFAULT_DRAIN_RATE_OPTIONS } from "../../../src/core/drain-rate";
import { DEFAULT_SATURATION_OPTIONS, RETRY_AFTER_POLICIES } from "../../../src/core/retry-after";
import {
  DEFAULT_RETRY_SCHEDULE_OPTIONS as RETRY_SCHEDULE_OPTIONS_FOR_TESTS,
  RetrySchedule,
} from "../../../src/core/retry-schedule";
import { RouterCore, type RouterOptions } from "../../../src/core/router-core";

describe("RetrySchedule", () => {
  it("a burst of refusals at one instant is spread over time, one slot's capacity at a time", () => {
    const schedule = new RetrySchedule(RETRY_SCHEDULE_OPTIONS_FOR_TESTS, 0);
    const hints: number[] = [];
    for (let i = 0; i < 50; i++) {
      const s = schedule.estimate(0, { queueDepth: 20, drainRate: 10 }) as number;
      hints.push(s);
      schedule.book(0, s);
    }
    // No fresh arrivals seen: 10 retries per second fit, after the queue's 2 s.
    expect(hints.slice(0, 10).every((s) => s === 2.5)).toBe(true);
    expect(hints.slice(10, 20).every((s) => s === 3.5)).toBe(true);
    expect(hints.at(-1)).toBe(6.5);
    expect(new Set(hints).size).toBe(5);
  });

  it("fresh arrivals shrink the room left for retries", () => {
    const schedule = new RetrySchedule(RETRY_SCHEDULE_OPTIONS_FOR_TESTS, 0);
    for (let t = 0; t < 10; t++) for (let i = 0; i < 6; i++) schedule.onArrival(t * 1000 + i);
    schedule.onArrival(10_000);
    expect(schedule.freshRate).toBeCloseTo(6, 5);
    const hints: number[] = [];
    for (let i = 0; i < 8; i++) {
      const s = schedule.estimate(10_000, { queueDepth: 0, drainRate: 10 }) as number;
      hints.push(s);
      schedule.book(10_000, s);
    }
    // 10 drains/s minus 6 fresh/s: 4 retries per one-second slot.
    expect(hints).toEqual([1.5, 1.5, 1.5, 1.5, 2.5, 2.5, 2.5, 2.5]);
  });

  it("promises that fall due are not counted as fresh arrivals", () => {
    const schedule = new RetrySchedule(RETRY_SCHEDULE_OPTIONS_FOR_TESTS, 0);
    for (let i = 0; i < 5; i++) schedule.book(0, 1.5); // five retries due in second 1
    for (let i = 0; i < 5; i++) schedule.onArrival(1_200); // ...and they arrive
    schedule.onArrival(2_000);
    expect(schedule.freshRate).toBe(0);
  });

  it("when every slot up to 60 s is full, it picks the least loaded one instead of stacking at the clamp", () => {
    const schedule = new RetrySchedule(RETRY_SCHEDULE_OPTIONS_FOR_TESTS, 0);
    const hints: number[] = [];
    for (let i = 0; i < 200; i++) {
      const s = schedule.estimate(0, { queueDepth: 0, drainRate: 1 }) as number;
      hints.push(s);
      schedule.book(0, s);
    }
    expect(Math.max(...hints)).toBeLessThanOrEqual(60);
    const at59 = hints.filter((s) => s === 59.5).length;
    expect(at59).toBeLessThanOrEqual(4);
  });

  it("no usable drain rate: no estimate (the ladder falls back)", () => {
    const schedule = new RetrySchedule(RETRY_SCHEDULE_OPTIONS_FOR_TESTS, 0);
    expect(schedule.estimate(0, { queueDepth: 5, drainRate: undefined })).toBeUndefined();
    expect(schedule.estimate(0, { queueDepth: 5, drainRate: 0 })).toBeUndefined();
  });
});

describe("RouterCore with retry_schedule", () => {
  function setup() {
    let now = 0;
    const options: RouterOptions = {
      replicas: ["a"],
      maxOngoingRequests: 1,
      maxQueuedRequests: 5,
      queueTimeoutMs: 600_000,
      leaseTimeoutMs: 600_000,
      statusCode: 429,
      retryAfter: {
        retryAfterPolicy: "retry_schedule",
        retryAfterS: undefined,
        jitter: 0,
        saturation: DEFAULT_SATURATION_OPTIONS,
      },
      drainRate: DEFAULT_DRAIN_RATE_OPTIONS,
    };
    const core = new RouterCore(options, { now: () => now }, () => 0.5);
    return { core, tick: (ms: number) => (now += ms) };
  }

  it("is a configurable policy name", () => {
    expect(RETRY_AFTER_POLICIES).toContain("retry_schedule");
  });

  it("cold: no header (the ladder's last rung); warm: a burst's hints spread instead of stacking", () => {
    const { core, tick } = setup();
    for (let i = 0; i < 5; i++) core.submit(`q${i}`);
    const cold = core.submit("cold");
    expect(cold.kind === "rejected" && cold.rejection.decision.rung).toBe("none");
    // Warm the estimator: two drains per second for 4 s.
    let n = 0;
    for (let s = 0; s < 4; s++) {
      for (let k = 0; k < 2; k++) {
        tick(500);
        const plan = core.beginRound();
        if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
        if (plan) core.finishRound(plan);
        core.release(core.head ?? "");
        for (const t of [...Array(6)].map(() => `w${n++}`)) core.submit(t);
      }
    }
    expect(core.stats().estimatorWarm).toBe(true);
    const hints: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = core.submit(`burst${i}`);
      if (r.kind === "rejected") hints.push(r.rejection.decision.retryAfterMs as number);
    }
    expect(hints).toHaveLength(20);
    expect(new Set(hints).size).toBeGreaterThan(5);
    expect(Math.max(...hints) - Math.min(...hints)).toBeGreaterThan(5_000);
    expect(Math.max(...hints)).toBeLessThanOrEqual(60_000);
  });
});
