import { seededRandom } from "../engine/rng";
import { type BenchResult, summarize } from "./bench-result";
import { type BenchPrompt, randomDataset } from "./dataset";
import type { RequestOutcome } from "./request-outcome";
import { sendRequest } from "./send-request";

/** Options of one benchmark run (bench_serving's, camel-cased). */
export interface BenchOptions {
  baseUrl: string;
  /** Model name; when absent the first entry of `GET /v1/models`. */
  model?: string;
  numPrompts: number;
  maxConcurrency: number | null;
  /** Requests per second, Poisson arrivals; Infinity sends all at once (bounded by maxConcurrency). */
  requestRate: number;
  randomInputLen: number;
  randomOutputLen: number;
  randomRangeRatio: number;
  ignoreEos: boolean;
  seed: number;
  promptFormat: "ids" | "text";
  honorRetryAfter: boolean;
  maxRetries: number;
  /**
   * bench_serving's `--warmup-requests` (default 1): before the run, this many copies of the first prompt with
   * `min(output_len, 32)` tokens are sent at once and awaited; they are not in the results (the server counts
   * them, and keeps the prompt's KV in its prefix cache). If none succeeds, the run stops, as bench_serving's does.
   */
  warmupRequests?: number;
}

/** A finished run: the summary, every request's outcome, and the prompts sent. */
export interface BenchRun {
  result: BenchResult;
  outcomes: RequestOutcome[];
  prompts: BenchPrompt[];
  model: string;
}

/**
 * Runs a bench_serving-style benchmark against an OpenAI-compatible server (an engine or the edge):
 * random dataset, Poisson or unbounded arrivals, a concurrency cap, streaming requests.
 *
 * @example
 * ```ts
 * const { result } = await runBenchmark({ ...defaultBenchOptions, baseUrl: "http://127.0.0.1:8001",
 *   numPrompts: 32, maxConcurrency: 16, randomInputLen: 256, randomOutputLen: 512 });
 * console.log(formatResult(result));
 * ```
 */
export async function runBenchmark(options: BenchOptions): Promise<BenchRun> {
  const model = options.model ?? (await firstModel(options.baseUrl));
  const prompts = randomDataset({
    numPrompts: options.numPrompts,
    inputLen: options.randomInputLen,
    outputLen: options.randomOutputLen,
    rangeRatio: options.randomRangeRatio,
    seed: options.seed,
    format: options.promptFormat,
  });
  const send = { ...options, model };
  await warmUp(prompts, send, options.warmupRequests ?? 1);
  const limit = options.maxConcurrency ?? Number.POSITIVE_INFINITY;
  const arrivals = seededRandom(options.seed + 1);
  let inFlight = 0;
  const waiters: (() => void)[] = [];
  const acquire = async () => {
    while (inFlight >= limit) await new Promise<void>((resolve) => waiters.push(resolve));
    inFlight += 1;
  };
  const release = () => {
    inFlight -= 1;
    waiters.shift()?.();
  };

  const start = performance.now();
  const tasks: Promise<RequestOutcome>[] = [];
  for (const prompt of prompts) {
    tasks.push(
      (async () => {
        await acquire();
        try {
          return await sendRequest(prompt, send);
        } finally {
          release();
        }
      })(),
    );
    if (Number.isFinite(options.requestRate)) {
      const gapS = -Math.log(1 - arrivals()) / options.requestRate;
      await new Promise((resolve) => setTimeout(resolve, gapS * 1000));
    }
  }
  const outcomes = await Promise.all(tasks);
  const duration = (performance.now() - start) / 1000;
  const result = summarize(outcomes, {
    backend: "sglang-oai",
    requestRate: options.requestRate,
    maxConcurrency: options.maxConcurrency,
    duration,
  });
  return { result, outcomes, prompts, model };
}

/** bench_serving's defaults. */
export const defaultBenchOptions: Omit<BenchOptions, "baseUrl"> = {
  numPrompts: 1000,
  maxConcurrency: null,
  requestRate: Number.POSITIVE_INFINITY,
  randomInputLen: 1024,
  randomOutputLen: 1024,
  randomRangeRatio: 0,
  ignoreEos: true,
  seed: 1,
  promptFormat: "ids",
  honorRetryAfter: false,
  maxRetries: 10,
  warmupRequests: 1,
};

/** bench_serving's warm-up: the first prompt, at most 32 output tokens, awaited; not counted. */
async function warmUp(prompts: BenchPrompt[], send: BenchOptions & { model: string }, count: number): Promise<void> {
  const first = prompts[0];
  if (count <= 0 || first === undefined) return;
  const test = { ...first, outputLen: Math.min(first.outputLen, 32) };
  const outcomes = await Promise.all(Array.from({ length: count }, () => sendRequest(test, send)));
  if (!outcomes.some((o) => o.success)) {
    throw new Error(
      `Warmup failed - please make sure the benchmark arguments are correct. Error: ${outcomes[0]?.error ?? ""}`,
    );
  }
}

async function firstModel(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl.replace(/\/$/, "")}/v1/models`);
  if (!res.ok) throw new Error(`GET /v1/models answered ${res.status}; pass --model`);
  const body = (await res.json()) as { data?: { id: string }[] };
  const id = body.data?.[0]?.id;
  if (!id) throw new Error("GET /v1/models listed no model; pass --model");
  return id;
}
