import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBenchmark } from "../../../src/bench/run-benchmark";

// A stand-in server that records every request body in arrival order and answers with a two-chunk stream
// (or 500 while `failing`).
let server: Server;
let url: string;
const bodies: { prompt: unknown; max_tokens: number }[] = [];
let failing = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      bodies.push(JSON.parse(body));
      if (failing) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end('{"error":{"message":"down","type":"server_error","param":null,"code":null}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (text: string) => `data: ${JSON.stringify({ choices: [{ index: 0, text }] })}\n\n`;
      res.end(`${chunk(" a")}${chunk(" b")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const options = {
  model: "m",
  numPrompts: 5,
  maxConcurrency: 2,
  requestRate: Number.POSITIVE_INFINITY,
  randomInputLen: 8,
  randomOutputLen: 100,
  randomRangeRatio: 1,
  ignoreEos: true,
  seed: 4,
  promptFormat: "ids" as const,
  honorRetryAfter: false,
  maxRetries: 0,
};

describe("bench client warm-up (bench_serving's --warmup-requests)", () => {
  it("sends the first prompt with min(output_len, 32) tokens first, and leaves it out of the results", async () => {
    bodies.length = 0;
    failing = false;
    const { result, outcomes, prompts } = await runBenchmark({ ...options, baseUrl: url });
    expect(bodies).toHaveLength(6);
    expect(bodies[0]).toMatchObject({ prompt: prompts[0]?.prompt, max_tokens: 32 });
    expect(bodies.slice(1).map((b) => b.max_tokens)).toEqual([100, 100, 100, 100, 100]);
    expect(outcomes).toHaveLength(5);
    expect(result.completed).toBe(5);
  });

  it("sends none with --warmup-requests 0, and several at once when asked", async () => {
    bodies.length = 0;
    await runBenchmark({ ...options, baseUrl: url, warmupRequests: 0 });
    expect(bodies.map((b) => b.max_tokens)).toEqual([100, 100, 100, 100, 100]);
    bodies.length = 0;
    await runBenchmark({ ...options, baseUrl: url, warmupRequests: 3 });
    expect(bodies.slice(0, 3).map((b) => b.max_tokens)).toEqual([32, 32, 32]);
    expect(bodies).toHaveLength(8);
  });

  it("stops before the run when no warm-up request succeeds", async () => {
    bodies.length = 0;
    failing = true;
    await expect(runBenchmark({ ...options, baseUrl: url })).rejects.toThrow(/Warmup failed.*HTTP 500/);
    expect(bodies).toHaveLength(1);
    failing = false;
  });
});
