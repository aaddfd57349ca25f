import { describe, expect, it } from "vitest";
import { summarize } from "../../../src/bench/bench-result";
import { randomDataset } from "../../../src/bench/dataset";
import type { RequestOutcome } from "../../../src/bench/request-outcome";
import { createEngineLoop } from "../../../src/engine/engine-loop";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics } from "../../../src/engine/metrics";
import { defaultOutputLengthModel } from "../../../src/engine/output-length-model";
import { createSimulatedEngine } from "../../../src/engine/simulated-engine";
import { defaultTimingModel } from "../../../src/engine/timing-model";
import { tokenizer } from "../../../src/engine/tokenizer";

// SGLang's reference run (the scheduler spec): pool 4096, bench_serving with 32 prompts of 256 tokens, 512 output
// tokens, ignore_eos, concurrency 16, after its warm-up request. Its figures:
const REFERENCE = { medianTtftS: 27.9, medianTpotMs: 24.26, concurrency: 13.06 };

/**
 * The engine server's loop, scheduler and simulated GPU with the default timing model, in virtual time (the
 * engine's sleeps advance a clock instead of waiting), loaded the way bench_serving loads a server: one warm-up
 * request first (not counted), then up to 16 in flight. Deterministic, and independent of the machine's speed.
 */
async function referenceRun() {
  let clock = 0;
  const lines: string[] = [];
  const metrics = createEngineMetrics("reference");
  const core = createEngineLoop({
    scheduler: { maxTotalTokens: 4096 },
    engine: createSimulatedEngine({
      timing: defaultTimingModel,
      outputLength: defaultOutputLengthModel,
      eosTokenId: tokenizer.eosTokenId,
      sleep: async (s) => {
        clock += s;
      },
    }),
    tokenizer,
    metrics,
    logger: createLogger("info", (l) => lines.push(l)),
    now: () => clock,
  });
  const prompts = randomDataset({
    numPrompts: 32,
    inputLen: 256,
    outputLen: 512,
    rangeRatio: 1,
    seed: 1,
    format: "ids",
  });
  let sent = 0;
  /** The request counters when the benchmark's first token came out: 16 requests in flight, 1 ended. */
  let atFirstToken: Promise<number | undefined>[] | null = null;
  const counterValue = async (c: { get(): Promise<{ values: { value: number }[] }> }) =>
    (await c.get()).values[0]?.value;
  const send = (i: number, maxTokens: number) =>
    new Promise<RequestOutcome>((resolve) => {
      const start = clock;
      let ttft = -1;
      const prompt = prompts[i]?.prompt as number[];
      const done = (success: boolean, outputLen: number, error: string) =>
        resolve({
          success,
          promptLen: prompt.length,
          outputLen,
          ttft,
          itl: [],
          latency: clock - start,
          retries: 0,
          error,
          text: "",
        });
      core.submit(
        { id: `req-${sent++}`, promptTokens: prompt, maxTokens, ignoreEos: true, stop: [] },
        {
          onText: (text) => {
            if (ttft < 0 && text !== "") ttft = clock - start;
            // prom-client reads a counter synchronously when get() is called.
            if (sent > 1 && atFirstToken === null)
              atFirstToken = [metrics.numRequestsTotal, metrics.promptTokensTotal, metrics.generationTokensTotal].map(
                counterValue,
              );
          },
          onFinish: (_reason, usage) => done(true, usage.completionTokens, ""),
          onError: (message, usage) => done(false, usage.completionTokens, message),
        },
      );
    });

  // bench_serving's warm-up: the first prompt, min(output_len, 32) tokens, awaited, not in the results.
  const warmup = await send(0, Math.min(512, 32));
  const start = clock;
  let next = 0;
  const worker = async (outcomes: RequestOutcome[]) => {
    while (next < prompts.length) {
      const i = next++;
      outcomes[i] = await send(i, prompts[i]?.outputLen as number);
    }
  };
  const outcomes: RequestOutcome[] = [];
  await Promise.all(Array.from({ length: 16 }, () => worker(outcomes)));
  const result = summarize(outcomes, {
    backend: "sglang-oai",
    requestRate: Infinity,
    maxConcurrency: 16,
    duration: clock - start,
  });
  const counters = {
    atFirstToken: await Promise.all(atFirstToken ?? []),
    atEnd: await Promise.all(
      [metrics.numRequestsTotal, metrics.promptTokensTotal, metrics.generationTokensTotal].map(counterValue),
    ),
  };
  await core.close();
  return { warmup, result, lines, counters };
}

describe("the reference run, in virtual time", () => {
  it("lands within 10% of SGLang's median TTFT, TPOT and concurrency", async () => {
    const { warmup, result, lines, counters } = await referenceRun();
    expect(warmup.success && warmup.outputLen === 32).toBe(true);
    expect(result.completed).toBe(32);
    expect(result.totalOutputTokens).toBe(32 * 512);
    const near = (ours: number, theirs: number) => Math.abs(ours - theirs) / theirs;
    expect(near(result.medianTtftMs / 1000, REFERENCE.medianTtftS)).toBeLessThan(0.1);
    expect(near(result.medianTpotMs, REFERENCE.medianTpotMs)).toBeLessThan(0.1);
    expect(near(result.concurrency, REFERENCE.concurrency)).toBeLessThan(0.1);
    // The first request repeats the warm-up's prompt, as in SGLang's log: 255 of its tokens come from the cache
    // (here all 16 arrive at once, so it shares its batch with four more: 1 + 4 x 256 new tokens).
    const prefills = lines.filter((l) => l.includes("Prefill batch"));
    expect(prefills[1]).toContain("#new-seq: 5, #new-token: 1025, #cached-token: 255,");
    expect(lines.some((l) => l.includes("Retract"))).toBe(false);
    // Request and token counters count a request when it ends (the server counts the warm-up; the client does not):
    // at the benchmark's first token, 16 requests are in flight and only the warm-up has ended.
    expect(counters.atFirstToken).toEqual([1, 256, 32]);
    expect(counters.atEnd).toEqual([33, 33 * 256, 32 + 32 * 512]);
    console.log(
      `reference run: median TTFT ${(result.medianTtftMs / 1000).toFixed(2)} s, median TPOT ${result.medianTpotMs.toFixed(2)} ms, concurrency ${result.concurrency.toFixed(2)}`,
    );
  });
});
