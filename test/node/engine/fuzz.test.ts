import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { propertyRuns } from "../../support/property-runs";

const oddNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.5, -1, 1e9),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
);
const field = fc.oneof(fc.jsonValue({ maxDepth: 2 }), oddNumber, fc.string({ unit: "binary", maxLength: 40 }));
const body = fc.oneof(
  fc
    .record(
      {
        model: fc.oneof(fc.constant("demo-model"), field),
        messages: fc.oneof(
          fc.array(fc.record({ role: field, content: field }, { requiredKeys: [] }), { maxLength: 3 }),
          field,
        ),
        prompt: fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.array(oddNumber, { maxLength: 5 }), field),
        max_tokens: fc.oneof(fc.integer({ min: 0, max: 8 }), oddNumber, field),
        stream: fc.oneof(fc.boolean(), field),
        stop: field,
        ignore_eos: field,
        stream_options: field,
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ unit: "binary", maxLength: 200 }),
);

async function requestsTotal(server: RunningEngineServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("sglang:num_requests_total"));
  return Number(line?.split(" ").at(-1) ?? "0");
}

describe("bad input, fuzzed against the engine server", () => {
  let server: RunningEngineServer;
  beforeAll(async () => {
    server = await startEngineServer({
      port: 0,
      speed: Number.POSITIVE_INFINITY,
      maxTotalTokens: 4096,
      maxBodyBytes: 16 * 1024,
      accessLog: false,
      log: () => {},
    });
  });
  afterAll(() => server.close());

  it("answers every request with a well-formed 2xx or 4xx; refused ones change nothing", async () => {
    const before = await requestsTotal(server);
    let served = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("/v1/chat/completions", "/v1/completions"), body, async (path, b) => {
        const res = await fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: b,
        });
        const text = await res.text();
        expect(res.status, `${b} -> ${text}`).toBeLessThan(500);
        if (res.status >= 400) {
          const error = (JSON.parse(text) as { error: { message: unknown } }).error;
          expect(typeof error.message).toBe("string");
        } else {
          served += 1;
        }
      }),
      propertyRuns(200, 20261129),
    );
    // Served requests have all finished; refused ones never entered the scheduler.
    expect((await requestsTotal(server)) - before).toBe(served);
    expect(server.core.load()).toMatchObject({ running: 0, waiting: 0 });
  });

  it("refuses an oversized body with 413", async () => {
    const res = await fetch(`${server.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-model", prompt: "x".repeat(40_000) }),
    });
    expect(res.status).toBe(413);
  });
});
