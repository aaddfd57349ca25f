import { describe, expect, it } from "vitest";
import { formatResult, summarize } from "../../../src/bench/bench-result";
import type { RequestOutcome } from "../../../src/bench/request-outcome";
import { percentile } from "../../../src/bench/stats";

const outcome = (o: Partial<RequestOutcome>): RequestOutcome => ({
  success: true,
  promptLen: 10,
  outputLen: 5,
  ttft: 1,
  itl: [0.25, 0.25, 0.25, 0.25],
  latency: 2,
  retries: 0,
  error: "",
  text: "",
  ...o,
});

describe("bench result", () => {
  it("computes percentiles like numpy (linear interpolation)", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([3, 1, 2], 99)).toBeCloseTo(2.98);
    expect(percentile([], 50)).toBe(0);
  });

  it("summarises as bench_serving: Concurrency = sum(e2e) / duration, TPOT = (latency - ttft) / (out - 1)", () => {
    const r = summarize([outcome({}), outcome({ latency: 4, ttft: 2 }), outcome({ success: false, error: "x" })], {
      backend: "sglang-oai",
      requestRate: Number.POSITIVE_INFINITY,
      maxConcurrency: 16,
      duration: 4,
    });
    expect(r.completed).toBe(2);
    expect(r.failed).toBe(1);
    expect(r.concurrency).toBeCloseTo(1.5);
    expect(r.meanTpotMs).toBeCloseTo(375);
    expect(r.medianTtftMs).toBeCloseTo(1500);
    expect(r.totalOutputTokens).toBe(10);
    expect(r.outputThroughput).toBeCloseTo(2.5);
  });

  it("prints the result block in the {:<40} {:<10.2f} layout", () => {
    const r = summarize([outcome({})], {
      backend: "sglang-oai",
      requestRate: Number.POSITIVE_INFINITY,
      maxConcurrency: 16,
      duration: 2,
    });
    const lines = formatResult(r).split("\n");
    expect(lines[0]).toBe("============ Serving Benchmark Result ============");
    expect(lines[1]).toBe(`${"Backend:".padEnd(40)} sglang-oai`);
    expect(lines[2]).toBe(`${"Traffic request rate:".padEnd(40)} inf       `);
    expect(lines).toContain(`${"Benchmark duration (s):".padEnd(40)} 2.00      `);
    expect(lines).toContain(`${"Concurrency:".padEnd(40)} 1.00      `);
    expect(lines).toContain("---------------Time to First Token----------------");
    expect(lines).toContain("-----Time per Output Token (excl. 1st token)------");
    expect(lines.at(-1)).toBe("=".repeat(50));
    for (const label of [
      "Median TTFT (ms):",
      "P99 TPOT (ms):",
      "P95 ITL (ms):",
      "Max ITL (ms):",
      "P99 E2E Latency (ms):",
    ])
      expect(lines.some((l) => l.startsWith(label))).toBe(true);
    for (const l of lines) expect(l.length).toBeGreaterThanOrEqual(50);
  });
});
