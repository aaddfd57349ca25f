import { describe, expect, it } from "vitest";
import type { EngineCore } from "../../../src/engine/generation";
import { createEngineApp, startEngineServer } from "../../../src/engine/index";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics } from "../../../src/engine/metrics";
import { tokenizer } from "../../../src/engine/tokenizer";

/** A core that finishes every request at once with no text. */
const instantCore: EngineCore = {
  submit(request, sink) {
    queueMicrotask(() =>
      sink.onFinish("stop", { promptTokens: request.promptTokens.length, completionTokens: 0, cachedTokens: 0 }),
    );
    return () => {};
  },
  load: () => ({ queueLength: 0, running: 0, waiting: 0, accepting: true, tokenUsage: 0, maxRunningRequests: 1 }),
  close: async () => {},
};

function appAt(clock: { ms: number }) {
  return createEngineApp({
    name: "pinned",
    core: instantCore,
    tokenizer,
    limits: { servedModelName: "demo-model", maxTotalTokens: 4096, contextLength: 4096, pageSize: 1 },
    metrics: createEngineMetrics("demo-model"),
    logger: createLogger("error", () => {}),
    maxBodyBytes: 1 << 20,
    accessLog: false,
    now: () => clock.ms,
  });
}

describe("/v1/models' created", () => {
  it("is the server's start in unix seconds (it was 0), while each answer's created is its own time", async () => {
    const clock = { ms: 1_767_225_600_900 }; // 2026-01-01T00:00:00.900Z
    const app = appAt(clock);
    clock.ms += 3_600_000; // an hour later

    const list = (await (await app.request("/v1/models")).json()) as { data: { id: string; created: number }[] };
    expect(list.data).toEqual([expect.objectContaining({ id: "demo-model", created: 1_767_225_600 })]);
    const one = (await (await app.request("/v1/models/demo-model")).json()) as { created: number };
    expect(one.created).toBe(1_767_225_600);

    const answer = await app.request("/v1/completions", {
      method: "POST",
      body: JSON.stringify({ model: "demo-model", prompt: "hi", max_tokens: 1 }),
    });
    expect(((await answer.json()) as { created: number }).created).toBe(1_767_229_200);
  });

  it("is a unix time in seconds from startEngineServer's clock", async () => {
    const before = Math.floor(Date.now() / 1000);
    const server = await startEngineServer({ port: 0, log: () => {} });
    const after = Math.floor(Date.now() / 1000);
    try {
      const list = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { created: number }[] };
      const created = list.data[0]?.created as number;
      expect(Number.isInteger(created)).toBe(true);
      expect(created).toBeGreaterThanOrEqual(before);
      expect(created).toBeLessThanOrEqual(after);
    } finally {
      await server.close();
    }
  });
});
