import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_DRAIN_RATE_OPTIONS, DrainRateEstimator } from "../../../src/core/drain-rate";
import { propertyRuns } from "../../support/property-runs";

/**
 * The drain-rate EWMA against /work/shared/spec/retry-after.md ("Estimation"): alpha 0.3, 1 s intervals, warm after 3
 * samples, the first sample the baseline, `rate_k = 0.3 * drains_k / 1 s + 0.7 * rate_{k-1}`; an idle interval (no
 * drains, nothing queued) skipped - no sample, no decay; a busy interval with no drain a sample of 0. Driven through
 * the router's calls (`recordDrain`, `advance`) on a clock the test moves, each interval closed on its 1 s edge by an
 * event there (the estimator closes intervals lazily, on the next event; late closes are
 * load-estimators.property.test.ts's). Besides the recurrence itself: metamorphic properties that need no model -
 * idle seconds inserted anywhere change nothing, busy empty seconds decay by 0.7 each, more drains never read
 * slower, and scaling every interval's drains scales the rate.
 */

const RUN = propertyRuns(300, 20261206);

/** One 1 s interval of the router's life: how many requests left the queue, and whether it held any. */
interface Second {
  drains: number;
  queued: boolean;
}

const secondArb: fc.Arbitrary<Second> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ drains: fc.constant(0), queued: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ drains: fc.integer({ min: 1, max: 40 }), queued: fc.boolean() }) },
);
const secondsArb = fc.array(secondArb, { maxLength: 40, size: "max" });
const idle: Second = { drains: 0, queued: false };

/**
 * Feeds `seconds` to a fresh estimator: second k spans [start + k s, start + (k + 1) s); its drains at spread instants
 * inside it, a queue seen at its start when it held one; every edge marked by an event with an empty queue (so the
 * edge's own depth says nothing of either side).
 */
function feed(seconds: readonly Second[], start = 1_700_000_000_000): DrainRateEstimator {
  const est = new DrainRateEstimator(DEFAULT_DRAIN_RATE_OPTIONS, start);
  seconds.forEach((second, k) => {
    const t0 = start + k * 1000;
    est.advance(t0, 0);
    if (second.queued) est.advance(t0 + 1, 3);
    for (let i = 0; i < second.drains; i++) est.recordDrain(t0 + 1 + Math.floor((i * 998) / second.drains), 0);
  });
  est.advance(start + seconds.length * 1000, 0);
  return est;
}

/** The spec's recurrence over the samples (one per non-idle second). */
function specRate(seconds: readonly Second[]): { rate: number | undefined; samples: number } {
  let rate: number | undefined;
  let samples = 0;
  for (const { drains, queued } of seconds) {
    if (drains === 0 && !queued) continue; // idle: no sample, no decay
    const sample = drains / 1; // drains_in_interval / interval_s
    rate = rate === undefined ? sample : 0.3 * sample + 0.7 * rate;
    samples += 1;
  }
  return { rate, samples };
}

function close(actual: number | undefined, expected: number | undefined, what: string): void {
  if (expected === undefined || actual === undefined) {
    expect(actual, what).toBe(expected);
    return;
  }
  const tol = 1e-9 * Math.max(1, Math.abs(expected));
  if (!(Math.abs(actual - expected) <= tol)) expect.fail(`${what}: ${actual} != ${expected}`);
}

describe("DrainRateEstimator: the spec's EWMA over 1 s intervals", () => {
  it("follows the recurrence: first sample the baseline, alpha 0.3, idle seconds skipped, busy empty seconds a 0; warm from the 3rd sample", () => {
    fc.assert(
      fc.property(secondsArb, (seconds) => {
        const est = feed(seconds);
        const spec = specRate(seconds);
        close(est.rate, spec.rate, `rate after ${JSON.stringify(seconds)}`);
        expect(est.samples).toBe(spec.samples);
        expect(est.warm).toBe(spec.samples >= 3);
        expect(est.drainCount).toBe(seconds.reduce((n, s) => n + s.drains, 0));
        if (est.rate !== undefined) {
          expect(Number.isFinite(est.rate) && est.rate >= 0).toBe(true);
        }
      }),
      RUN,
    );
  });

  it("idle seconds inserted anywhere (any number) change neither the rate, the samples nor the warm-up", () => {
    fc.assert(
      fc.property(
        secondsArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 30 })), { maxLength: 5 }),
        (seconds, gaps) => {
          const withGaps = [...seconds];
          for (const [at, n] of gaps) withGaps.splice(at % (withGaps.length + 1), 0, ...Array<Second>(n).fill(idle));
          const a = feed(seconds);
          const b = feed(withGaps);
          close(b.rate, a.rate, "rate");
          expect(b.samples).toBe(a.samples);
          expect(b.warm).toBe(a.warm);
        },
      ),
      RUN,
    );
  });

  it("each busy second with no drain multiplies the rate by 0.7 (a sample of 0), and counts towards the warm-up", () => {
    fc.assert(
      fc.property(secondsArb, fc.integer({ min: 1, max: 20 }), (seconds, k) => {
        const before = feed(seconds);
        const after = feed([...seconds, ...Array<Second>(k).fill({ drains: 0, queued: true })]);
        expect(after.samples).toBe(before.samples + k);
        if (before.rate === undefined) expect(after.rate).toBe(0);
        else close(after.rate, before.rate * 0.7 ** k, `rate after ${k} busy empty seconds`);
      }),
      RUN,
    );
  });

  it("more drains in any second never read slower; c times the drains in every second read c times the rate", () => {
    fc.assert(
      fc.property(
        secondsArb,
        fc.array(fc.integer({ min: 0, max: 10 }), { maxLength: 40, size: "max" }),
        fc.integer({ min: 2, max: 5 }),
        (seconds, extra, c) => {
          // Extra drains only in seconds that are samples already (an idle second given a drain would add a sample).
          const more = seconds.map((s, i) =>
            s.drains > 0 || s.queued ? { ...s, drains: s.drains + (extra[i] ?? 0) } : s,
          );
          const base = feed(seconds);
          const bigger = feed(more);
          expect(bigger.samples).toBe(base.samples);
          if (base.rate !== undefined)
            expect(bigger.rate as number).toBeGreaterThanOrEqual((base.rate as number) * (1 - 1e-12));
          const scaled = feed(seconds.map((s) => ({ ...s, drains: s.drains * c })));
          expect(scaled.samples).toBe(base.samples);
          if (base.rate === undefined) expect(scaled.rate).toBeUndefined();
          else close(scaled.rate, base.rate * c, `rate x ${c}`);
        },
      ),
      RUN,
    );
  });
});
