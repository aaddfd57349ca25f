import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { summarize } from "../../../src/bench/bench-result";
import type { RequestOutcome } from "../../../src/bench/request-outcome";
import { mean, percentile } from "../../../src/bench/stats";
import { propertyRuns } from "../../support/property-runs";

// References written from SGLang's bench_serving.py (`calculate_metrics`) and numpy's default percentile, not
// from our code: a metric that drifts from its definition fails here with the outcomes that show it.

/** numpy.percentile(values, p), method "linear": index p/100 * (n - 1) into the sorted list, interpolated. */
function numpyPercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = (p / 100) * (sorted.length - 1);
  const below = Math.floor(index);
  const above = Math.min(below + 1, sorted.length - 1);
  const t = index - below;
  const a = sorted[below] as number;
  const b = sorted[above] as number;
  return a + (b - a) * t;
}

/** `np.mean(xs or 0)` etc.: an empty list stands for [0]. */
const orZero = (xs: number[]) => (xs.length === 0 ? [0] : xs);
const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/** bench_serving's calculate_metrics over outputs, in the units it prints (ms, per second). */
function referenceMetrics(outputs: readonly RequestOutcome[], durS: number) {
  const outputLens: number[] = [];
  const itls: number[] = [];
  const tpots: number[] = [];
  const ttfts: number[] = [];
  const e2e: number[] = [];
  let totalInput = 0;
  let completed = 0;
  for (const o of outputs) {
    if (!o.success) {
      outputLens.push(0); // a failed request counts no tokens
      continue;
    }
    outputLens.push(o.outputLen);
    totalInput += o.promptLen;
    if (o.outputLen > 1) tpots.push((o.latency - o.ttft) / (o.outputLen - 1));
    itls.push(...o.itl);
    ttfts.push(o.ttft);
    e2e.push(o.latency);
    completed += 1;
  }
  const totalOutput = outputLens.reduce((s, x) => s + x, 0);
  const ms = (x: number) => x * 1000;
  return {
    completed,
    failed: outputs.length - completed,
    totalInputTokens: totalInput,
    totalOutputTokens: totalOutput,
    requestThroughput: completed / durS,
    inputThroughput: totalInput / durS,
    outputThroughput: totalOutput / durS,
    totalThroughput: (totalInput + totalOutput) / durS,
    concurrency: e2e.reduce((s, x) => s + x, 0) / durS,
    meanTtftMs: ms(avg(orZero(ttfts))),
    medianTtftMs: ms(numpyPercentile(orZero(ttfts), 50)),
    p99TtftMs: ms(numpyPercentile(orZero(ttfts), 99)),
    meanTpotMs: ms(avg(orZero(tpots))),
    medianTpotMs: ms(numpyPercentile(orZero(tpots), 50)),
    p99TpotMs: ms(numpyPercentile(orZero(tpots), 99)),
    meanItlMs: ms(avg(orZero(itls))),
    medianItlMs: ms(numpyPercentile(orZero(itls), 50)),
    p95ItlMs: ms(numpyPercentile(orZero(itls), 95)),
    p99ItlMs: ms(numpyPercentile(orZero(itls), 99)),
    maxItlMs: ms(Math.max(...orZero(itls))),
    // bench_serving's E2E figures are NaN for an empty list; ours are 0, so they are compared only when defined.
    ...(e2e.length > 0
      ? {
          meanE2eLatencyMs: ms(avg(e2e)),
          medianE2eLatencyMs: ms(numpyPercentile(e2e, 50)),
          p99E2eLatencyMs: ms(numpyPercentile(e2e, 99)),
        }
      : {}),
  };
}

const seconds = fc.double({ min: 0, max: 100, noNaN: true, noDefaultInfinity: true });

/** One request as the client could record it: a success (TTFT before its end, gaps between chunks) or a failure. */
const outcomeArb: fc.Arbitrary<RequestOutcome> = fc
  .record({
    success: fc.boolean(),
    promptLen: fc.integer({ min: 0, max: 4096 }),
    // 0 and 1 are the edge cases: no gap to divide by in TPOT.
    outputLen: fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: 0, max: 2048 })),
    ttft: seconds,
    decode: seconds,
    itl: fc.array(fc.double({ min: 0, max: 5, noNaN: true, noDefaultInfinity: true }), { maxLength: 12 }),
    retries: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ decode, ...o }) => ({
    ...o,
    latency: o.ttft + decode,
    error: o.success ? "" : "HTTP 429: busy",
    text: "",
  }));

const close = (actual: number, expected: number) =>
  Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));

describe("bench metrics against bench_serving's definitions", () => {
  it("percentile is numpy's linear interpolation between closest ranks, for any list and p", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (values, p) => {
          const got = percentile(values, p);
          expect(close(got, numpyPercentile(values, p))).toBe(true);
          // Within the data, and the order the values come in does not matter.
          expect(got).toBeGreaterThanOrEqual(Math.min(...values));
          expect(got).toBeLessThanOrEqual(Math.max(...values));
          expect(percentile([...values].reverse(), p)).toBe(got);
        },
      ),
      propertyRuns(300, 20261206),
    );
    // numpy's own examples: np.percentile([10, 7, 4, 3, 2, 1], 50) == 3.5; np.median([1, 2, 3, 4]) == 2.5.
    expect(percentile([10, 7, 4, 3, 2, 1], 50)).toBe(3.5);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
  });

  it("mean is the arithmetic mean (0 for none, as np.mean([] or 0))", () => {
    fc.assert(
      fc.property(fc.array(seconds, { maxLength: 30 }), (xs) => {
        expect(close(mean(xs), avg(orZero(xs)))).toBe(true);
      }),
      propertyRuns(200, 20261206),
    );
  });

  it("summarize computes every figure as calculate_metrics does: failures count nothing, one token has no TPOT", () => {
    fc.assert(
      fc.property(
        fc.array(outcomeArb, { maxLength: 25 }),
        fc.double({ min: 0.001, max: 1000, noNaN: true }),
        (outcomes, duration) => {
          const got = summarize(outcomes, { backend: "sglang-oai", requestRate: 4, maxConcurrency: 8, duration });
          const expected = referenceMetrics(outcomes, duration);
          for (const [key, value] of Object.entries(expected)) {
            const actual = got[key as keyof typeof got] as number;
            if (!close(actual, value)) throw new Error(`${key}: got ${actual}, bench_serving's definition ${value}`);
          }
          expect(got.retries).toBe(outcomes.reduce((s, o) => s + o.retries, 0));
          expect(got.duration).toBe(duration);
        },
      ),
      propertyRuns(300, 20261206),
    );
  });

  it("a request with one output token counts its token, TTFT and E2E, but no TPOT; a failed one counts nothing", () => {
    const one: RequestOutcome = {
      success: true,
      promptLen: 7,
      outputLen: 1,
      ttft: 0.5,
      itl: [],
      latency: 0.5,
      retries: 0,
      error: "",
      text: "x",
    };
    const failed: RequestOutcome = { ...one, success: false, outputLen: 3, itl: [9], latency: 9, error: "HTTP 503: x" };
    const r = summarize([one, failed], { backend: "sglang-oai", requestRate: 1, maxConcurrency: null, duration: 2 });
    expect(r).toMatchObject({ completed: 1, failed: 1, totalInputTokens: 7, totalOutputTokens: 1 });
    expect(r).toMatchObject({ meanTpotMs: 0, medianTpotMs: 0, maxItlMs: 0, meanTtftMs: 500, meanE2eLatencyMs: 500 });
    expect(r.concurrency).toBeCloseTo(0.25, 12);
  });
});
