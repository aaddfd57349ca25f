import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBenchmark } from "../../../src/bench/run-benchmark";

// A stand-in for the edge: every request is refused twice with 429 + retry-after-ms (the second time with
// only Retry-After), then served as a short stream.
let server: Server;
let url: string;
const attempts = new Map<string, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const n = (attempts.get(body) ?? 0) + 1;
      attempts.set(body, n);
      if (n === 1) {
        res.writeHead(429, { "retry-after-ms": "5", "retry-after": "30", "content-type": "application/json" });
        res.end('{"error":{"message":"busy","type":"rate_limit_error","param":null,"code":null}}');
        return;
      }
      if (n === 2) {
        res.writeHead(503, { "retry-after": "0", "content-type": "application/json" });
        res.end('{"error":{"message":"busy","type":"server_error","param":null,"code":null}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (text: string) => `data: ${JSON.stringify({ choices: [{ index: 0, text }] })}\n\n`;
      res.end(
        `${chunk(" a")}${chunk(" b")}data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 } })}\n\ndata: [DONE]\n\n`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const options = (honorRetryAfter: boolean) => ({
  baseUrl: url,
  model: "m",
  numPrompts: 6,
  maxConcurrency: 3,
  requestRate: Number.POSITIVE_INFINITY,
  randomInputLen: 4,
  randomOutputLen: 2,
  randomRangeRatio: 1,
  ignoreEos: true,
  seed: 9,
  promptFormat: "ids" as const,
  honorRetryAfter,
  maxRetries: 5,
  warmupRequests: 0, // every body is refused first: a warm-up would eat prompt 0's refusals
});

describe("bench client --honor-retry-after", () => {
  it("waits out retry-after-ms, then Retry-After, and counts the retries", async () => {
    attempts.clear();
    const { result, outcomes } = await runBenchmark(options(true));
    expect(result.completed).toBe(6);
    expect(result.retries).toBe(12);
    expect(outcomes.every((o) => o.retries === 2 && o.outputLen === 2 && o.text === " a b")).toBe(true);
  });

  it("counts a refusal as a failure without the flag", async () => {
    attempts.clear();
    const { result, outcomes } = await runBenchmark(options(false));
    expect(result.completed).toBe(0);
    expect(result.failed).toBe(6);
    expect(outcomes[0]?.error).toMatch(/^HTTP 429/);
  });
});
