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

  it("an interval closed late is still 1 s long: a burst, then a quiet spell with nothing queued, reads the rate it drained at", () => {
    const est = fresh();
    for (let i = 0; i < 4; i++) est.recordDrain(i * 100, i < 3 ? 1 : 0); // the last drain empties the queue
    est.advance(2_000, 1); // the next event, a second after the interval's edge
    // Before: 4 drains / 2 s = 2, half the rate the queue drained at (and hints twice as long).
    expect(est.rate).toBe(4);
    expect(est.samples).toBe(1);
  });

  it("an interval closed late while the queue held requests: the whole seconds after it are busy with no drain, each a 0", () => {
    const est = fresh();
    for (let i = 0; i < 4; i++) est.recordDrain(i * 100, 1); // still one waiting after the last drain
    est.advance(3_500, 1);
    // Samples 4, 0, 0 (the seconds [1 s, 2 s) and [2 s, 3 s)); the second now open began at 3 s, busy.
    expect(est.rate).toBeCloseTo(4 * 0.7 * 0.7, 12);
    expect(est.samples).toBe(3);
    est.recordDrain(3_600, 0);
    est.advance(4_000, 0);
    expect(est.rate).toBeCloseTo(0.3 * 1 + 0.7 * 4 * 0.7 * 0.7, 12);
  });

  it("rounds of a burst every 2 s, drained in 0.6 s: the router reads the fleet's rate, not the rounds' average", () => {
    // helper-78's trial: 40 requests at once every second or two in front of two slots that take 300 ms each (about
    // 6.7 a second); the router read 1.1-1.4 a second and told clients 13-60 s.
    const est = fresh();
    for (let round = 0; round < 5; round++) {
      const t0 = round * 2_000;
      est.advance(t0, 6); // the round's six arrivals: two placed at once, then two every 300 ms
      for (const [at, left] of [
        [0, 5],
        [0, 4],
        [300, 3],
        [300, 2],
        [600, 1],
        [600, 0],
      ] as const) {
        est.recordDrain(t0 + at, left);
      }
    }
    est.advance(10_000, 0);
    // Before: 6 drains over each 2 s, 3 a second.
    expect(est.rate).toBeCloseTo(6, 12);
  });
});
