import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ManagedProcess, startWorkerOnFreePort } from "../../../src/bench/stack";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

/**
 * `logRejections` under `wrangler dev`: the router's structured rejection record reaches wrangler's output when
 * it is started at `logLevel: "log"` (what `npx tsx eval/e2e-openai.ts --log` asks for). At wrangler's `warn`,
 * which wrangler 4 applies to the Worker's own console.log too, `--log` printed no record at all.
 */
describe("wrangler dev at logLevel log prints the routers' rejection records", () => {
  let engine: RunningEngineServer | undefined;
  let worker: ManagedProcess | undefined;
  let base = "";
  let persistTo = "";
  const lines: string[] = [];

  beforeAll(async () => {
    engine = await startEngineServer({ port: 0, speed: 1, maxTotalTokens: 8192, log: () => {} });
    persistTo = mkdtempSync(join(tmpdir(), "spillway-rejection-log-"));
    const config = {
      logRejections: true,
      deployments: {
        "demo-model": {
          replicas: [engine.url],
          maxOngoingRequests: 1,
          maxQueuedRequests: 0,
          backpressure: { retryAfterPolicy: "static", retryAfterS: 5 },
        },
      },
    };
    const started = await startWorkerOnFreePort({
      vars: { SPILLWAY_CONFIG: JSON.stringify(config) },
      persistTo,
      quiet: true,
      logLevel: "log",
    });
    worker = started.worker;
    base = started.base;
    worker.child.stdout?.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n")));
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await engine?.close();
    if (persistTo) rmSync(persistTo, { recursive: true, force: true });
  }, 30_000);

  it("a refused request leaves one spillway.rejection line with its reason and hint", async () => {
    const body = JSON.stringify({
      model: "demo-model",
      messages: [{ role: "user", content: "hello" }],
      max_tokens: 32,
      ignore_eos: true,
    });
    const statuses = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const res = await fetch(`${base}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    const refused = statuses.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThan(0);
    // wrangler prints the Durable Object's output as it comes: wait for the records, not for a time.
    const records = () =>
      lines.filter((l) => l.includes('"event":"spillway.rejection"')).map((l) => JSON.parse(l.slice(l.indexOf("{"))));
    await expect.poll(() => records().length, { timeout: 20_000 }).toBe(refused);
    for (const record of records()) {
      expect(record).toMatchObject({ reason: "queue_full", status: 429, policy: "static", pre_jitter_s: 5 });
      // The static value, jittered by up to 20% either way.
      expect(record.retry_after_s).toBeGreaterThanOrEqual(4);
      expect(record.retry_after_s).toBeLessThanOrEqual(6);
    }
  });
});
