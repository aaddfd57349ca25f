import { describe, expect, it } from "vitest";
import { DEFAULT_DRAIN_RATE_OPTIONS, DrainRateEstimator } from "../../../src/core/drain-rate";

const fresh = () => new DrainRateEstimator(DEFAULT_DRAIN_RATE_OPTIONS, 0);

describe("DrainRateEstimator (spec vectors)", () => {
  it("takes the first sample as baseline, then alpha 0.3: samples 10 then 20 give 13", () => {
    const est = fresh();
    est.addSample(10, 1, true);
    expect(est.rate).toBe(10);
    est.addSample(20, 1, true);
    expect(est.rate).toBeCloseTo(13, 12);
  });

  it("is warm after 3 samples, not before", () => {
    const est = fresh();
    est.addSample(5, 1, true);
    est.addSample(5, 1, true);
    expect(est.warm).toBe(false);
    est.addSample(5, 1, true);
    expect(est.warm).toBe(true);
  });

  it("skips an idle interval (no drains, nothing queued): no sample, no decay", () => {
    const est = fresh();
    est.addSample(10, 1, true);
    est.addSample(0, 1, false);
    expect(est.rate).toBe(10);
    expect(est.samples).toBe(1);
  });

  it("takes a busy interval with zero drains as a sample of rate 0", () => {
    const est = fresh();
    est.addSample(10, 1, true);
    est.addSample(0, 1, true);
    expect(est.rate).toBeCloseTo(7, 12);
    expect(est.samples).toBe(2);
  });

  it("ignores zero or negative elapsed time", () => {
    const est = fresh();
    est.addSample(10, 0, true);
    est.addSample(10, -1, true);
    expect(est.rate).toBeUndefined();
    expect(est.samples).toBe(0);
  });

  it("closes intervals lazily from events on the clock", () => {
    const est = fresh();
    for (let i = 0; i < 5; i++) est.recordDrain(100 + i * 100, 3); // 5 drains in the first second, queue busy
    est.advance(1_000, 3);
    expect(est.rate).toBe(5);
    est.advance(2_000, 3); // a busy second with no drains
    expect(est.rate).toBeCloseTo(3.5, 12);
    est.advance(3_000, 0); // still counted busy: the queue was non-empty when the interval began
    expect(est.samples).toBe(3);
    est.advance(4_000, 0); // idle: skipped
    expect(est.samples).toBe(3);
    expect(est.drainCount).toBe(5);
  });

  it("divides by the real elapsed time when an interval is closed late", () => {
    const est = fresh();
    for (let i = 0; i < 4; i++) est.recordDrain(i * 100, 1);
    est.advance(2_000, 1);
    expect(est.rate).toBe(2);
  });
});
