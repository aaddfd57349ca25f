import type { RequestOutcome } from "./request-outcome";
import { mean, percentile } from "./stats";

/** bench_serving's summary of a run (latencies in ms, throughputs per second). */
export interface BenchResult {
  backend: string;
  requestRate: number;
  maxConcurrency: number | null;
  completed: number;
  failed: number;
  retries: number;
  duration: number;
  totalInputTokens: number;
  totalOutputTokens: number;
  requestThroughput: number;
  inputThroughput: number;
  outputThroughput: number;
  totalThroughput: number;
  concurrency: number;
  meanE2eLatencyMs: number;
  medianE2eLatencyMs: number;
  p99E2eLatencyMs: number;
  meanTtftMs: number;
  medianTtftMs: number;
  p99TtftMs: number;
  meanTpotMs: number;
  medianTpotMs: number;
  p99TpotMs: number;
  meanItlMs: number;
  medianItlMs: number;
  p95ItlMs: number;
  p99ItlMs: number;
  maxItlMs: number;
}

/**
 * Summarises request outcomes as bench_serving does: only successful requests count toward tokens and
 * latencies; `Concurrency = sum(e2e latencies) / duration`; `TPOT = (latency - ttft) / (output_len - 1)`
 * for requests with more than one output token.
 *
 * @example
 * ```ts
 * const result = summarize(outcomes, { backend: "sglang-oai", requestRate: Infinity, maxConcurrency: 16,
 *   duration: 12.3 });
 * ```
 */
export function summarize(
  outcomes: readonly RequestOutcome[],
  run: { backend: string; requestRate: number; maxConcurrency: number | null; duration: number },
): BenchResult {
  const ok = outcomes.filter((o) => o.success);
  const ms = (xs: number[]) => xs.map((x) => x * 1000);
  const e2e = ms(ok.map((o) => o.latency));
  const ttft = ms(ok.map((o) => o.ttft));
  const tpot = ms(ok.filter((o) => o.outputLen > 1).map((o) => (o.latency - o.ttft) / (o.outputLen - 1)));
  const itl = ms(ok.flatMap((o) => o.itl));
  const totalInput = ok.reduce((s, o) => s + o.promptLen, 0);
  const totalOutput = ok.reduce((s, o) => s + o.outputLen, 0);
  const d = run.duration > 0 ? run.duration : Number.MIN_VALUE;
  return {
    backend: run.backend,
    requestRate: run.requestRate,
    maxConcurrency: run.maxConcurrency,
    completed: ok.length,
    failed: outcomes.length - ok.length,
    retries: outcomes.reduce((s, o) => s + o.retries, 0),
    duration: run.duration,
    totalInputTokens: totalInput,
    totalOutputTokens: totalOutput,
    requestThroughput: ok.length / d,
    inputThroughput: totalInput / d,
    outputThroughput: totalOutput / d,
    totalThroughput: (totalInput + totalOutput) / d,
    concurrency: e2e.reduce((s, x) => s + x, 0) / 1000 / d,
    meanE2eLatencyMs: mean(e2e),
    medianE2eLatencyMs: percentile(e2e, 50),
    p99E2eLatencyMs: percentile(e2e, 99),
    meanTtftMs: mean(ttft),
    medianTtftMs: percentile(ttft, 50),
    p99TtftMs: percentile(ttft, 99),
    meanTpotMs: mean(tpot),
    medianTpotMs: percentile(tpot, 50),
    p99TpotMs: percentile(tpot, 99),
    meanItlMs: mean(itl),
    medianItlMs: percentile(itl, 50),
    p95ItlMs: percentile(itl, 95),
    p99ItlMs: percentile(itl, 99),
    // A loop, not Math.max(...itl): a long run has more gaps than the call stack has room for arguments.
    maxItlMs: itl.reduce((m, x) => Math.max(m, x), 0),
  };
}

const row = (label: string, value: string | number) =>
  `${label.padEnd(40)} ${(typeof value === "number" ? value.toFixed(2) : value).padEnd(10)}`;
const intRow = (label: string, value: number | string) => `${label.padEnd(40)} ${String(value).padEnd(10)}`;
// bench_serving centres " Serving Benchmark Result " (with spaces) and the section titles without.
const section = (padded: string, fill: string) => {
  const left = Math.floor((50 - padded.length) / 2);
  return `${fill.repeat(left)}${padded}${fill.repeat(50 - padded.length - left)}`;
};

/**
 * The result block exactly as bench_serving prints it (`{:<40} {:<10.2f}` rows, 50-wide rules;
 * Python's centring puts an odd extra fill character on the right).
 *
 * @example
 * ```ts
 * console.log(formatResult(result));
 * ```
 */
export function formatResult(r: BenchResult): string {
  // bench_serving's rate is a Python float: 4 prints as "4.0".
  const rate =
    r.requestRate === Number.POSITIVE_INFINITY
      ? "inf"
      : Number.isInteger(r.requestRate)
        ? r.requestRate.toFixed(1)
        : String(r.requestRate);
  const lines = [
    section(" Serving Benchmark Result ", "="),
    intRow("Backend:", r.backend),
    intRow("Traffic request rate:", rate),
    intRow("Max request concurrency:", r.maxConcurrency ?? "not set"),
    intRow("Successful requests:", r.completed),
    row("Benchmark duration (s):", r.duration),
    intRow("Total input tokens:", r.totalInputTokens),
    intRow("Total generated tokens:", r.totalOutputTokens),
    row("Request throughput (req/s):", r.requestThroughput),
    row("Input token throughput (tok/s):", r.inputThroughput),
    row("Output token throughput (tok/s):", r.outputThroughput),
    row("Total token throughput (tok/s):", r.totalThroughput),
    row("Concurrency:", r.concurrency),
    section("End-to-End Latency", "-"),
    row("Mean E2E Latency (ms):", r.meanE2eLatencyMs),
    row("Median E2E Latency (ms):", r.medianE2eLatencyMs),
    row("P99 E2E Latency (ms):", r.p99E2eLatencyMs),
    section("Time to First Token", "-"),
    row("Mean TTFT (ms):", r.meanTtftMs),
    row("Median TTFT (ms):", r.medianTtftMs),
    row("P99 TTFT (ms):", r.p99TtftMs),
    section("Time per Output Token (excl. 1st token)", "-"),
    row("Mean TPOT (ms):", r.meanTpotMs),
    row("Median TPOT (ms):", r.medianTpotMs),
    row("P99 TPOT (ms):", r.p99TpotMs),
    section("Inter-Token Latency", "-"),
    row("Mean ITL (ms):", r.meanItlMs),
    row("Median ITL (ms):", r.medianItlMs),
    row("P95 ITL (ms):", r.p95ItlMs),
    row("P99 ITL (ms):", r.p99ItlMs),
    row("Max ITL (ms):", r.maxItlMs),
    "=".repeat(50),
  ];
  return lines.join("\n");
}
