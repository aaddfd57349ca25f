import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendRequest } from "../../../src/bench/send-request";
import { propertyRuns } from "../../support/property-runs";

// A loopback server that answers each request with the scripted status, headers and body pieces (each its own
// write), so the client's counting is checked against what was actually sent.
interface Script {
  status: number;
  headers: Record<string, string>;
  pieces: string[];
}
let script: Script = { status: 200, headers: {}, pieces: [] };
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(script.status, { "content-type": "text/event-stream", ...script.headers });
      for (const piece of script.pieces) res.write(piece);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const send = (honorRetryAfter = false) =>
  sendRequest(
    { prompt: [1, 2, 3], promptLen: 3, outputLen: 16 },
    { baseUrl, model: "m", ignoreEos: true, honorRetryAfter, maxRetries: 2 },
  );

const chunk = (text: string) => `data: ${JSON.stringify({ choices: [{ index: 0, text }], usage: null })}\n\n`;
const usage = (completion: number) =>
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: completion } })}\n\n`;

/** Cuts a body into pieces at the given fractions of its length (writes, not characters, decide the reads). */
function pieces(body: string, at: number[]): string[] {
  const cuts = [...new Set(at.map((f) => Math.floor(f * body.length)))].sort((a, b) => a - b);
  const out: string[] = [];
  let start = 0;
  for (const end of [...cuts, body.length]) {
    out.push(body.slice(start, end));
    start = end;
  }
  return out.filter((p) => p !== "");
}

describe("sendRequest against bench_serving's per-request definitions", () => {
  it("counts content chunks, their gaps and the usage's tokens; stops at [DONE]", async () => {
    await fc.assert(
      fc.asyncProperty(
        // Chunk texts; "" is a chunk with no content (a role or finish chunk), which is no token arrival.
        fc.array(fc.oneof(fc.constant(""), fc.string({ unit: "grapheme", minLength: 1, maxLength: 4 })), {
          maxLength: 10,
        }),
        fc.option(fc.integer({ min: 0, max: 20 })),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 6 }),
        async (texts, usageTokens, at) => {
          const body = `${texts.map(chunk).join("")}${usageTokens === null ? "" : usage(usageTokens)}data: [DONE]\n\n${chunk("after done")}`;
          script = { status: 200, headers: {}, pieces: pieces(body, at) };
          const o = await send();
          const content = texts.filter((t) => t !== "");
          expect(o.success).toBe(true);
          expect(o.error).toBe("");
          expect(o.text).toBe(content.join(""));
          // One gap per content chunk after the first (bench_serving's ITL), none for a one-chunk answer.
          expect(o.itl).toHaveLength(Math.max(0, content.length - 1));
          // Tokens: the server's usage when it reports it, else one per content chunk.
          expect(o.outputLen).toBe(usageTokens ?? content.length);
          // On one monotonic clock: first token, then the gaps, all inside the request's latency.
          expect(o.ttft).toBeLessThanOrEqual(o.latency);
          if (content.length === 0) expect(o.ttft).toBe(0);
          const gaps = o.itl.reduce((s, x) => s + x, 0);
          expect(o.ttft + gaps).toBeLessThanOrEqual(o.latency + 1e-9);
        },
      ),
      propertyRuns(60, 20261206),
    );
  });

  it("records an error event in the stream as a failure with its message", async () => {
    script = {
      status: 200,
      headers: {},
      pieces: [chunk("a"), `data: ${JSON.stringify({ error: { message: "aborted" } })}\n\n`, "data: [DONE]\n\n"],
    };
    const o = await send();
    expect(o).toMatchObject({ success: false, error: "aborted", text: "a" });
    // An error event is a failure even when its message is empty (success is read as "no error recorded").
    script = { status: 200, headers: {}, pieces: [chunk("a"), 'data: {"error":{"message":""}}\n\n'] };
    expect(await send()).toMatchObject({ success: false, error: "stream error" });
  });

  it("records a refusal as 'HTTP <status>' (what the evaluation counts as refused), retried only with the flag", async () => {
    for (const status of [429, 503]) {
      script = { status, headers: { "retry-after": "0" }, pieces: ['{"error":{"message":"busy"}}'] };
      const plain = await send(false);
      expect(plain).toMatchObject({ success: false, retries: 0, outputLen: 0 });
      expect(plain.error).toMatch(new RegExp(`^HTTP ${status}: `));
      const honoured = await send(true);
      expect(honoured.retries).toBe(2);
      expect(honoured.error).toMatch(new RegExp(`^HTTP ${status}: `));
    }
    // No hint, no retry: the refusal is final at once.
    script = { status: 429, headers: {}, pieces: ["busy"] };
    expect(await send(true)).toMatchObject({ success: false, retries: 0, error: "HTTP 429: busy" });
  });
});
