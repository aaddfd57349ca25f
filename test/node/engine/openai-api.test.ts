import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

// The HTTP layer against the official openai client; the scheduler is a tiny double here so these tests
// exercise the API alone (engine-e2e.test.ts runs the real scheduler).
let server: RunningEngineServer;
let client: OpenAI;
const lines: string[] = [];

beforeAll(async () => {
  server = await startEngineServer({
    port: 0,
    maxTotalTokens: 4096,
    speed: 1000,
    createScheduler: fakeScheduler(),
    log: (l) => lines.push(l),
  });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});

describe("engine server, OpenAI API", () => {
  it("serves a non-streaming completion with usage and deterministic text", async () => {
    const a = await client.completions.create({
      model: "demo-model",
      prompt: "hello world",
      max_tokens: 12,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    const b = await client.completions.create({
      model: "demo-model",
      prompt: "hello world",
      max_tokens: 12,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(a.object).toBe("text_completion");
    expect(a.choices[0]?.finish_reason).toBe("length");
    expect(a.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 12, total_tokens: 14 });
    expect(a.choices[0]?.text.length).toBeGreaterThan(0);
    expect(b.choices[0]?.text).toBe(a.choices[0]?.text);
  });

  it("streams a completion with a final usage chunk", async () => {
    const stream = await client.completions.create({
      model: "demo-model",
      prompt: [1, 2, 3, 4],
      max_tokens: 9,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    let text = "";
    let contentChunks = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.text) {
        text += choice.text;
        contentChunks++;
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(contentChunks).toBe(9);
    expect(finish).toBe("length");
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 9 });
    const whole = await client.completions.create({
      model: "demo-model",
      prompt: [1, 2, 3, 4],
      max_tokens: 9,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(whole.choices[0]?.text).toBe(text);
  });

  it("serves chat completions, streaming and not", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: "be brief" },
      { role: "user", content: "ping" },
    ];
    const whole = await client.chat.completions.create({
      model: "demo-model",
      messages,
      max_completion_tokens: 7,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(whole.object).toBe("chat.completion");
    expect(whole.choices[0]?.message.role).toBe("assistant");
    expect(whole.usage?.completion_tokens).toBe(7);
    const stream = await client.chat.completions.create({
      model: "demo-model",
      messages,
      max_tokens: 7,
      stream: true,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = "";
    let role: string | undefined;
    for await (const chunk of stream) {
      role ??= chunk.choices[0]?.delta.role;
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(role).toBe("assistant");
    expect(text).toBe(whole.choices[0]?.message.content);
  });

  it("ends at a stop string, excluding it", async () => {
    const probe = await client.completions.create({
      model: "demo-model",
      prompt: "stop test",
      max_tokens: 20,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    const full = probe.choices[0]?.text ?? "";
    const words = full.split(" ").filter(Boolean);
    const stop = ` ${words[3]}`;
    const cut = full.slice(0, full.indexOf(stop));
    const res = await client.completions.create({
      model: "demo-model",
      prompt: "stop test",
      max_tokens: 20,
      ignore_eos: true,
      stop: [stop],
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(res.choices[0]?.finish_reason).toBe("stop");
    expect(res.choices[0]?.text).toBe(cut);
  });

  it("lists the model and answers /health and /load in the router's shape", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["demo-model"]);
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ ok: true });
    const load = (await (await fetch(`${server.url}/load`)).json()) as Record<string, unknown>;
    expect(Object.keys(load).sort()).toEqual([
      "accepting",
      "maxRunningRequests",
      "queueLength",
      "running",
      "tokenUsage",
      "waiting",
    ]);
    expect(load).toMatchObject({ queueLength: 0, running: 0, waiting: 0, accepting: true, maxRunningRequests: 2048 });
  });

  it("exposes SGLang-named metrics", async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const name of [
      "sglang:num_running_reqs",
      "sglang:token_usage",
      "sglang:num_requests_total",
      "sglang:time_to_first_token_seconds_bucket",
      "sglang:num_retracted_requests_total",
    ])
      expect(text).toContain(name);
    expect(text).toContain(
      'sglang:max_total_num_tokens{engine_type="unified",model_name="demo-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 4096',
    );
    expect(text).toContain('sglang:num_requests_total{model_name="demo-model"}');
  });

  it("prints one access line per request", () => {
    expect(
      lines.some((l) =>
        /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] 127\.0\.0\.1:\d+ - "POST \/v1\/completions HTTP\/1\.1" 200$/.test(l),
      ),
    ).toBe(true);
  });
});
