import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

let server: RunningEngineServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const loadOf = async (s: RunningEngineServer) =>
  (await (await fetch(`${s.url}/load`)).json()) as { running: number; waiting: number };

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("condition not reached");
}

describe("engine server, aborts", () => {
  it("frees a streaming request's slots when its client disconnects", async () => {
    const lines: string[] = [];
    server = await startEngineServer({
      port: 0,
      speed: 20,
      createScheduler: fakeScheduler(),
      log: (l) => lines.push(l),
    });
    const s = server;
    const controller = new AbortController();
    const res = await fetch(`${s.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "demo-model",
        prompt: "long one",
        max_tokens: 5000,
        ignore_eos: true,
        stream: true,
      }),
      signal: controller.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect((await loadOf(s)).running).toBe(1);
    controller.abort();
    await until(async () => (await loadOf(s)).running === 0);
    expect(lines.some((l) => l.includes("status: 499, message: Client disconnected."))).toBe(true);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toContain('sglang:num_aborted_requests_total{model_name="demo-model"} 1');
  });

  it("frees a non-streaming request's slots when its client disconnects, and logs its 499 with its address", async () => {
    const lines: string[] = [];
    server = await startEngineServer({
      port: 0,
      speed: 20,
      createScheduler: fakeScheduler(),
      log: (l) => lines.push(l),
    });
    const s = server;
    const controller = new AbortController();
    const pending = fetch(`${s.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "demo-model", prompt: "long one", max_tokens: 5000, ignore_eos: true }),
      signal: controller.signal,
    }).catch(() => "aborted");
    await until(async () => (await loadOf(s)).running === 1);
    controller.abort();
    expect(await pending).toBe("aborted");
    await until(async () => (await loadOf(s)).running === 0);
    // The access line names the client, as every other one (it said undefined:undefined once the socket was gone).
    const access = (status: number) => lines.filter((l) => l.includes(`"POST /v1/completions HTTP/1.1" ${status}`));
    await until(async () => access(499).length === 1);
    expect(access(499)[0]).toMatch(/ 127\.0\.0\.1:\d+ - "POST \/v1\/completions HTTP\/1\.1" 499$/);
  });

  it("ends an out-of-memory abort with 500, or an SSE error event when streaming", async () => {
    server = await startEngineServer({
      port: 0,
      speed: 1000,
      createScheduler: fakeScheduler({ oomAbortAtStep: 3 }),
      log: () => {},
    });
    const res = await fetch(`${server.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "demo-model", prompt: "x", max_tokens: 50, ignore_eos: true }),
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.message).toMatch(/^Out of memory even after retracting/);
    await server.close();

    server = await startEngineServer({
      port: 0,
      speed: 1000,
      createScheduler: fakeScheduler({ oomAbortAtStep: 3 }),
      log: () => {},
    });
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const stream = await client.completions.create({
      model: "demo-model",
      prompt: "x",
      max_tokens: 50,
      stream: true,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    let chunks = 0;
    await expect(
      (async () => {
        for await (const _ of stream) chunks++;
      })(),
    ).rejects.toThrow(/Out of memory/);
    expect(chunks).toBeGreaterThan(0);
  });
});
