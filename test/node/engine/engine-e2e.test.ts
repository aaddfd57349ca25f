import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { runBenchmark } from "../../../src/bench/run-benchmark";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

// End to end with the real scheduler: an engine server on 127.0.0.1 with a fast timing model, loaded by
// the bench client. Assertions are structural (counts, running/waiting, counters), never durations.

let server: RunningEngineServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const metric = async (s: RunningEngineServer, name: string) => {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`sglang:${name}{`));
  return Number(line?.split(" ").at(-1));
};
const field = (line: string, name: string) => Number(line.match(new RegExp(`${name}: ([\\d.]+)`))?.[1]);

const bench = (
  s: RunningEngineServer,
  o: { numPrompts: number; maxConcurrency: number; input: number; output: number; ignoreEos: boolean },
) =>
  runBenchmark({
    baseUrl: s.url,
    numPrompts: o.numPrompts,
    maxConcurrency: o.maxConcurrency,
    requestRate: Number.POSITIVE_INFINITY,
    randomInputLen: o.input,
    randomOutputLen: o.output,
    randomRangeRatio: 1,
    ignoreEos: o.ignoreEos,
    seed: 1,
    promptFormat: "ids",
    honorRetryAfter: false,
    maxRetries: 0,
  });

describe("engine server end to end (real scheduler)", () => {
  it("reproduces the seed's run: five at a time in waves, all succeed, no retraction", async () => {
    const lines: string[] = [];
    server = await startEngineServer({
      port: 0,
      maxTotalTokens: 4096,
      speed: 200,
      accessLog: false,
      log: (l) => lines.push(l),
    });
    const s = server;
    const loads: { queueLength: number; running: number; waiting: number; accepting: boolean }[] = [];
    const poll = setInterval(() => loads.push(s.core.load()), 5);
    const { result, outcomes } = await bench(s, {
      numPrompts: 32,
      maxConcurrency: 16,
      input: 256,
      output: 512,
      ignoreEos: true,
    });
    clearInterval(poll);
    expect(result.completed).toBe(32);
    // /load: queueLength = running + waiting, never more than five run, and a replica with a queue is not accepting.
    expect(loads.every((l) => l.queueLength === l.running + l.waiting && l.running <= 5)).toBe(true);
    expect(loads.some((l) => l.waiting > 0)).toBe(true);
    expect(loads.filter((l) => l.waiting > 0).every((l) => !l.accepting)).toBe(true);
    expect(outcomes.every((o) => o.success && o.outputLen === 512)).toBe(true);
    const decode = lines.filter((l) => l.includes("Decode batch"));
    const prefill = lines.filter((l) => l.includes("Prefill batch"));
    expect(decode.length).toBeGreaterThan(0);
    expect(Math.max(...decode.map((l) => field(l, "#running-req")))).toBe(5);
    expect(Math.max(...prefill.map((l) => field(l, "#running-req") + field(l, "#new-seq")))).toBeLessThanOrEqual(5);
    // The waves: five run while eleven wait.
    expect(decode.some((l) => field(l, "#running-req") === 5 && field(l, "#queue-req") === 11)).toBe(true);
    expect(lines.some((l) => l.includes("Retract"))).toBe(false);
    expect(await metric(server, "num_retracted_requests_total")).toBe(0);
    // The server also counts the bench client's warm-up request (the first prompt, 32 tokens).
    expect(await metric(server, "num_requests_total")).toBe(33);
    expect(await metric(server, "generation_tokens_total")).toBe(32 + 32 * 512);
    // Most requests wait for earlier waves, so the client keeps most of its 16 slots busy.
    expect(result.concurrency).toBeGreaterThan(8);
    expect(result.medianTtftMs).toBeGreaterThan(result.medianTpotMs * 512);
  });

  it("without ignore_eos the ratio decays and more than five run at once", async () => {
    const lines: string[] = [];
    server = await startEngineServer({
      port: 0,
      maxTotalTokens: 4096,
      speed: 200,
      accessLog: false,
      log: (l) => lines.push(l),
    });
    const s = server;
    let minRatio = 1;
    const poll = setInterval(async () => {
      const v = (await s.metrics.newTokenRatio.get()).values[0]?.value ?? 1;
      minRatio = Math.min(minRatio, v);
    }, 5);
    const { result } = await bench(s, {
      numPrompts: 32,
      maxConcurrency: 16,
      input: 256,
      output: 512,
      ignoreEos: false,
    });
    clearInterval(poll);
    expect(result.completed).toBe(32);
    expect(minRatio).toBeLessThan(0.7);
    const running = lines.filter((l) => l.includes("Decode batch")).map((l) => field(l, "#running-req"));
    expect(Math.max(...running)).toBeGreaterThan(5);
    expect(await metric(s, "num_requests_total")).toBe(33); // and the warm-up
  });

  it("retracts when the forecast was too bold, and every request still ends exactly once", async () => {
    const lines: string[] = [];
    server = await startEngineServer({
      port: 0,
      maxTotalTokens: 2048,
      speed: 200,
      eosDistribution: "never",
      accessLog: false,
      log: (l) => lines.push(l),
    });
    const { result, outcomes } = await bench(server, {
      numPrompts: 40,
      maxConcurrency: 40,
      input: 32,
      output: 256,
      ignoreEos: false,
    });
    expect(
      lines.some((l) =>
        /KV cache pool is full\. Retract requests\. #retracted_reqs: \d+, #new_token_ratio: [\d.]+ -> [\d.]+$/.test(l),
      ),
    ).toBe(true);
    expect(await metric(server, "num_retracted_requests_total")).toBeGreaterThan(0);
    expect(await metric(server, "num_retracted_output_tokens_total")).toBeGreaterThan(0);
    expect(result.completed).toBe(40);
    expect(outcomes.every((o) => o.success && o.outputLen === 256)).toBe(true);
    expect(await metric(server, "num_requests_total")).toBe(41); // and the warm-up
    expect(await metric(server, "num_aborted_requests_total")).toBe(0);
    expect(await (await fetch(`${server.url}/load`)).json()).toMatchObject({ running: 0, waiting: 0, queueLength: 0 });
  });

  it("serves the openai client: completions and chat, streaming and not", async () => {
    server = await startEngineServer({ port: 0, speed: 200, accessLog: false, log: () => {} });
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const c = await client.completions.create({ model: "demo-model", prompt: "Say hi", max_tokens: 8 });
    expect(c.usage?.completion_tokens).toBeLessThanOrEqual(8);
    expect(["stop", "length"]).toContain(c.choices[0]?.finish_reason);
    const cs = await client.completions.create({
      model: "demo-model",
      prompt: "Say hi",
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    let completionUsage: OpenAI.CompletionUsage | undefined;
    let streamed = "";
    for await (const chunk of cs) {
      streamed += chunk.choices[0]?.text ?? "";
      completionUsage ??= chunk.usage ?? undefined;
    }
    expect(streamed).toBe(c.choices[0]?.text);
    expect(completionUsage?.completion_tokens).toBe(c.usage?.completion_tokens);
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "hello" }];
    const chat = await client.chat.completions.create({ model: "demo-model", messages, max_tokens: 16 });
    expect(chat.choices[0]?.message.role).toBe("assistant");
    const chatStream = await client.chat.completions.create({
      model: "demo-model",
      messages,
      max_tokens: 16,
      stream: true,
    });
    let chatText = "";
    for await (const chunk of chatStream) chatText += chunk.choices[0]?.delta.content ?? "";
    expect(chatText).toBe(chat.choices[0]?.message.content);
  });
});
