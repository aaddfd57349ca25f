import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ManagedProcess, startWorkerOnFreePort } from "../../../src/bench/stack";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

const SIGNING_SECRET = "e2e-signing-secret";

/**
 * The whole stack for real: `wrangler dev` running the ready Worker and its Durable Object, in front of two
 * engine servers on 127.0.0.1, driven by the official `openai` client with its default retry behaviour.
 */
describe("wrangler dev + two engine servers + the openai client", () => {
  let engines: RunningEngineServer[] = [];
  let worker: ManagedProcess | undefined;
  let baseURL = "";
  let persistTo = "";

  beforeAll(async () => {
    engines = await Promise.all(
      // The engines serve only requests signed by the edge, and guard /load too: the whole chain is signed.
      [0, 1].map(() =>
        startEngineServer({
          port: 0,
          speed: 20,
          maxTotalTokens: 8192,
          signingSecrets: [SIGNING_SECRET],
          protectLoadMetrics: true,
          log: () => {},
        }),
      ),
    );
    persistTo = mkdtempSync(join(tmpdir(), "spillway-e2e-"));
    const config = {
      logRejections: false,
      deployments: {
        "demo-model": {
          replicas: engines.map((e) => e.url),
          maxOngoingRequests: 1,
          maxQueuedRequests: 1,
          // Cold estimator: the static value is the hint, kept short so the test is quick.
          backpressure: { retryAfterS: 0.5 },
        },
      },
    };
    // A var here for the test; in production it is a wrangler secret.
    const vars = { SPILLWAY_CONFIG: JSON.stringify(config), SPILLWAY_SIGNING_SECRET: SIGNING_SECRET };
    const started = await startWorkerOnFreePort({ vars, persistTo, quiet: true });
    worker = started.worker;
    baseURL = `${started.base}/v1`;
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await Promise.all(engines.map((e) => e.close()));
    if (persistTo) rmSync(persistTo, { recursive: true, force: true });
    // Worst case: wrangler's 5 s SIGTERM grace before SIGKILL; the engines run in this process.
  }, 30_000);

  it("streams a chat completion through the edge", async () => {
    const client = new OpenAI({ baseURL, apiKey: "unused" });
    const stream = await client.chat.completions.create({
      model: "demo-model",
      messages: [{ role: "user", content: "hello" }],
      max_tokens: 8,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text.length).toBeGreaterThan(0);
  });

  it("the engines refuse a request that did not come through the edge", async () => {
    const res = await fetch(`${engines[0]?.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-model", prompt: "bypass", max_tokens: 2 }),
    });
    expect(res.status).toBe(401);
    // /load too: the engines were started with protectLoadMetrics, so only the edge's signed probes read it.
    const load = await fetch(`${engines[0]?.url}/load`);
    await load.arrayBuffer();
    expect(load.status).toBe(401);
  });

  it("under overload: 429 with Retry-After, and the SDK's retry succeeds", async () => {
    const seen: { status: number; retryAfter: string | null; retryAfterMs: string | null }[] = [];
    const countingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      seen.push({
        status: res.status,
        retryAfter: res.headers.get("retry-after"),
        retryAfterMs: res.headers.get("retry-after-ms"),
      });
      return res;
    };
    // Two replicas with one slot each and one queue place: 8 concurrent requests overload it.
    const client = new OpenAI({ baseURL, apiKey: "unused", fetch: countingFetch, maxRetries: 6 });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        client.completions.create({ model: "demo-model", prompt: `request ${i}`, max_tokens: 24 }),
      ),
    );
    const rejected = seen.filter((s) => s.status === 429);
    expect(rejected.length).toBeGreaterThan(0);
    for (const r of rejected) {
      // Both headers present as whole numbers (Number(null) is 0: `>= 0` passed without a Retry-After at all).
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(r.retryAfterMs).toMatch(/^\d+$/);
      expect(Number(r.retryAfterMs)).toBeGreaterThan(0);
    }
    // Every request ends served: the ones refused at first succeeded on a retry.
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(8);
    expect(seen.filter((s) => s.status === 200)).toHaveLength(8);
  });
});
