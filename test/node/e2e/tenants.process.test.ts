import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { RateLimitError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ManagedProcess, startWorkerOnFreePort } from "../../../src/bench/stack";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

const sha256 = (key: string) => createHash("sha256").update(key).digest("hex");

/**
 * Tenants for real: `wrangler dev` with the demo's three keys in front of two engine servers, driven by the
 * `openai` client (retries off, so a refusal is seen, not retried away).
 */
describe("tenants end to end: wrangler dev + two engines + the openai client with the demo keys", () => {
  let engines: RunningEngineServer[] = [];
  let worker: ManagedProcess | undefined;
  let base = "";
  let persistTo = "";

  beforeAll(async () => {
    engines = await Promise.all([0, 1].map(() => startEngineServer({ port: 0, speed: 2, log: () => {} })));
    persistTo = mkdtempSync(join(tmpdir(), "spillway-tenants-"));
    const config = {
      logRejections: false,
      deployments: {
        "demo-model": {
          replicas: engines.map((e) => e.url),
          maxOngoingRequests: 2,
          maxQueuedRequests: 4,
          queueTimeoutS: 30,
          backpressure: { retryAfterS: 1 },
        },
      },
      tenants: {
        keys: {
          [sha256("sk-demo-alpha")]: { name: "alpha" },
          [sha256("sk-demo-beta")]: { name: "beta" },
          [sha256("sk-demo-small")]: { name: "small", requestsPerMinute: 30 },
        },
      },
    };
    const started = await startWorkerOnFreePort({
      vars: { SPILLWAY_CONFIG: JSON.stringify(config) },
      persistTo,
      quiet: true,
    });
    worker = started.worker;
    base = started.base;
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await Promise.all(engines.map((e) => e.close()));
    if (persistTo) rmSync(persistTo, { recursive: true, force: true });
  });

  it("while sk-demo-alpha floods, sk-demo-beta's requests succeed on their first attempt", async () => {
    // alpha keeps 20 requests in flight (against 4 slots and 4 queue places) until beta is done.
    let betaDone = false;
    const statuses: number[] = [];
    const flooder = async (i: number) => {
      for (let n = 0; !betaDone; n++) {
        const res = await fetch(`${base}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk-demo-alpha" },
          body: JSON.stringify({ model: "demo-model", prompt: `flood ${i}.${n}`, max_tokens: 32, ignore_eos: true }),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    };
    const alpha = Promise.all(Array.from({ length: 20 }, (_, i) => flooder(i)));
    await new Promise((r) => setTimeout(r, 300));
    const beta = new OpenAI({ baseURL: `${base}/v1`, apiKey: "sk-demo-beta", maxRetries: 0 });
    try {
      for (let i = 0; i < 5; i++) {
        const answer = await beta.completions.create({ model: "demo-model", prompt: `beta ${i}`, max_tokens: 8 });
        expect(answer.choices[0]?.finish_reason).toBeDefined();
      }
    } finally {
      betaDone = true;
      await alpha;
    }
    // The flood was refused in part (so beta really met a full queue), and never with a server error.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
  }, 60_000);

  it("sk-demo-small's 31st request within a minute is a 429 with remaining 0 and a Retry-After within the reset", async () => {
    const small = new OpenAI({ baseURL: `${base}/v1`, apiKey: "sk-demo-small", maxRetries: 0 });
    for (let i = 0; i < 30; i++) {
      const { response } = await small.completions
        .create({ model: "demo-model", prompt: `small ${i}`, max_tokens: 1 })
        .withResponse();
      expect(response.headers.get("x-ratelimit-limit-requests")).toBe("30");
    }
    const refused = await small.completions
      .create({ model: "demo-model", prompt: "small 31", max_tokens: 1 })
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitError);
    const error = refused as RateLimitError;
    expect(error.status).toBe(429);
    expect(error.code).toBe("tenant_quota_exceeded");
    const headers = error.headers as Headers;
    expect(headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const retryAfterS = Number(headers.get("retry-after"));
    expect(retryAfterS).toBeGreaterThan(0);
    // The reset (Go duration, under a minute here: "59.5s" or "1m0s") is never earlier than the Retry-After.
    const reset = /^(?:(\d+)m)?(\d+(?:\.\d+)?)s$/.exec(headers.get("x-ratelimit-reset-requests") as string);
    expect(reset).not.toBeNull();
    const resetS = Number(reset?.[1] ?? 0) * 60 + Number(reset?.[2]);
    expect(Number(headers.get("retry-after-ms")) / 1000).toBeLessThanOrEqual(resetS);
    expect(retryAfterS).toBeLessThanOrEqual(Math.ceil(resetS));
  }, 60_000);
});
