import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import type { LlamaEngine } from "../../../src/engine/llama/llama-engine";
import { type AccountingLog, accountingScheduler, describeLlama, runningReqs, writeTempModel } from "./llama-support";

// The engine server with the real llama.cpp engine (CPU, the generated tiny model) behind the real scheduler.
// Pool 340: three requests of 20 + 100 tokens are admitted on the new-token ratio's forecast (0.7: two at once,
// the third one step later when 340 - 40 - 2 x 100 x 0.7 = 160 > 120), but the tiny model never samples EOS, so
// together they need 360 slots and the scheduler must retract one.
describeLlama("llama engine server (CPU, tiny generated model)", () => {
  let model: ReturnType<typeof writeTempModel>;
  const lines: string[] = [];
  const accounting: AccountingLog = { steps: 0, mismatches: [] };
  let server: RunningEngineServer | undefined;
  let client: OpenAI;

  beforeAll(async () => {
    model = writeTempModel();
    server = await startEngineServer({
      port: 0,
      engine: "llama",
      modelPath: model.path,
      maxTotalTokens: 340,
      chunkedPrefillSize: 16, // prompts of 20-21 tokens prefill in two chunks: both evaluation paths run
      threads: 1,
      decodeLogInterval: 1,
      accessLog: false,
      log: (l) => lines.push(l),
      createScheduler: accountingScheduler(() => server, accounting),
    });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(async () => {
    await server?.close();
    model?.remove();
  });

  it("fits the scheduler to the engine: model tokenizer, no prefix cache, sequences = max running requests", () => {
    const o = server?.options;
    expect(o).toMatchObject({ engine: "llama", disableRadixCache: true, maxRunningRequests: 8, contextLength: 340 });
    expect(lines.some((l) => l.includes("engine: llama.cpp cpu, 8 sequences x 340 cells"))).toBe(true);
  });

  it("streams real tokens to the official openai client (completions and chat)", async () => {
    const stream = await client.completions.create({
      model: "demo-model",
      prompt: "The quick brown fox",
      max_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
    } as OpenAI.CompletionCreateParamsStreaming);
    let text = "";
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const t = chunk.choices[0]?.text ?? "";
      if (t !== "") chunks++;
      text += t;
    }
    expect(chunks).toBeGreaterThan(1);
    expect(text.length).toBeGreaterThan(0);
    // The model's own tokenizer: BOS + "▁The▁quick▁brown▁fox" spelled in single characters = 1 + 20 tokens.
    expect(usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 16 });
    expect(lines.some((l) => l.includes("Prefill batch, #new-seq: 1, #new-token: 16,"))).toBe(true); // first chunk

    // Greedy sampling: the same prompt gets the same text, streamed or not.
    const again = await client.completions.create({
      model: "demo-model",
      prompt: "The quick brown fox",
      max_tokens: 16,
    });
    expect(again.choices[0]?.text).toBe(text);

    const chat = await client.chat.completions.create({
      model: "demo-model",
      messages: [{ role: "user", content: "hello" }],
      max_tokens: 8,
      stream: true,
    });
    let reply = "";
    for await (const chunk of chat) reply += chunk.choices[0]?.delta.content ?? "";
    expect(reply.length).toBeGreaterThan(0);
  });

  it("runs concurrent requests in one decode batch", async () => {
    lines.length = 0;
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        client.completions.create({ model: "demo-model", prompt: `request number ${i}`, max_tokens: 24 }),
      ),
    );
    for (const r of results) expect(r.usage?.completion_tokens).toBe(24);
    expect(Math.max(...runningReqs(lines))).toBeGreaterThan(1);
  });

  it("retracts under a constructed overload; the retracted request later completes with every token it asked for", async () => {
    lines.length = 0;
    const prompts = ["a".repeat(18), "b".repeat(18), "c".repeat(18)]; // BOS + "▁" + 18 = 20 tokens each
    const results = await Promise.all(
      prompts.map((prompt) => client.completions.create({ model: "demo-model", prompt, max_tokens: 100 })),
    );
    const retraction = lines.find((l) => l.includes("KV cache pool is full. Retract requests."));
    expect(retraction).toBeDefined();
    for (const r of results) {
      expect(r.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 100 });
      expect(r.choices[0]?.finish_reason).toBe("length");
    }
    const metrics = await (await fetch(`${server?.url}/metrics`)).text();
    expect(metrics).toMatch(/sglang:num_retracted_requests_total\{[^}]*\} [1-9]/);
  });

  it("a client that disconnects mid-stream frees its sequence; the next requests run normally", async () => {
    const controller = new AbortController();
    const stream = await client.completions.create(
      { model: "demo-model", prompt: "going away", max_tokens: 300, stream: true },
      { signal: controller.signal },
    );
    let chunks = 0;
    try {
      for await (const _ of stream) if (++chunks === 5) controller.abort();
    } catch {
      // the SDK may end the iteration quietly or throw an abort error: either way the socket is gone
    }
    // The server notices the closed socket and aborts the request (bounded wait, no timing assertion).
    for (let i = 0; i < 1000 && server?.core.load().running !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server?.core.load().running).toBe(0);
    const metrics = await (await fetch(`${server?.url}/metrics`)).text();
    expect(metrics).toMatch(/sglang:num_aborted_requests_total\{[^}]*\} 1\n/);
    const after = await client.completions.create({ model: "demo-model", prompt: "still here", max_tokens: 8 });
    expect(after.usage?.completion_tokens).toBe(8);
  });

  it("kept the pool's used slots equal to the engine's cells before every completed step", async () => {
    expect(accounting.steps).toBeGreaterThan(150);
    expect(accounting.mismatches).toEqual([]);
    const engine = server?.engine as LlamaEngine;
    await engine.settle();
    expect(engine.kvCells()).toBe(0);
    expect(engine.freeSequences()).toBe(8);
  });
});
