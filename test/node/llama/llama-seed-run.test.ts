import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { seededRandom } from "../../../src/engine/rng";
import { type AccountingLog, accountingScheduler, describeLlama, runningReqs, writeTempModel } from "./llama-support";

// The seed's run, scaled to the tiny model: pool 520, 16 concurrent requests of 32 prompt tokens and 64
// output tokens with ignore_eos. Each reserves 96; five reserve 480, a sixth would need 576 > 520, so
// exactly five run at once, in waves, and nothing is retracted (the forecast is exact with ignore_eos).
describeLlama("llama engine: the seed's run structure with a small pool", () => {
  let model: ReturnType<typeof writeTempModel>;
  const lines: string[] = [];
  const accounting: AccountingLog = { steps: 0, mismatches: [] };
  let server: RunningEngineServer | undefined;

  beforeAll(async () => {
    model = writeTempModel();
    server = await startEngineServer({
      port: 0,
      engine: "llama",
      modelPath: model.path,
      maxTotalTokens: 520,
      threads: 1,
      decodeLogInterval: 1,
      accessLog: false,
      log: (l) => lines.push(l),
      createScheduler: accountingScheduler(() => server, accounting),
    });
  });
  afterAll(async () => {
    await server?.close();
    model?.remove();
  });

  it("runs exactly as many at once as the token budget allows, every request completes, none is retracted", async () => {
    const client = new OpenAI({ baseURL: `${server?.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const random = seededRandom(7);
    // Token-id prompts of exactly 32 tokens from the printable part of the test vocabulary (ids 260..353).
    const prompts = Array.from({ length: 16 }, () => Array.from({ length: 32 }, () => 260 + Math.floor(random() * 94)));
    const results = await Promise.all(
      prompts.map((prompt) =>
        client.completions.create({
          model: "demo-model",
          prompt,
          max_tokens: 64,
          ignore_eos: true,
        } as OpenAI.CompletionCreateParamsNonStreaming),
      ),
    );
    for (const r of results) expect(r.usage).toMatchObject({ prompt_tokens: 32, completion_tokens: 64 });

    const decodes = lines.flatMap((l) => {
      const m = /Decode batch, #running-req: (\d+).* #queue-req: (\d+)/.exec(l);
      return m ? [{ running: Number(m[1]), queued: Number(m[2]) }] : [];
    });
    expect(Math.max(...runningReqs(lines))).toBe(5);
    const whileQueued = decodes.filter((d) => d.queued > 0);
    expect(whileQueued.length).toBeGreaterThan(50);
    expect(whileQueued.every((d) => d.running === 5)).toBe(true);
    expect(lines.some((l) => l.includes("Retract requests"))).toBe(false);
    const admitted = lines.flatMap((l) => {
      const m = /Prefill batch, #new-seq: (\d+)/.exec(l);
      return m ? [Number(m[1])] : [];
    });
    expect(admitted.reduce((a, b) => a + b, 0)).toBe(16);

    expect(accounting.mismatches).toEqual([]);
    expect(accounting.steps).toBeGreaterThan((16 * 64) / 5);
  });
});
