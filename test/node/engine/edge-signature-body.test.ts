import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signRequest } from "../../../src/core/request-signature";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

/**
 * The edge signature covers the body, so the engine reads the body to check it; the body limit
 * (`--max-body-bytes`) must still hold for that read. Anyone can send the signature header, so a request that
 * merely claims a signature must not make the engine buffer a body past the limit, and a signed body sent without
 * Content-Length (chunked) must reach the handler as it does without a secret.
 */

const MAX_BODY = 1024;
const PATH = "/v1/completions";

interface Answer {
  status: number;
  text: string;
}

/** Reads a response to its end. */
function answerOf(res: http.IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (d: string) => {
      text += d;
    });
    res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    res.on("error", reject);
  });
}

describe("engine server: the body limit holds before the edge signature reads the body", () => {
  let server: RunningEngineServer;

  beforeAll(async () => {
    server = await startEngineServer({
      port: 0,
      speed: 1000,
      maxBodyBytes: MAX_BODY,
      signingSecrets: ["s3cret"],
      log: () => {},
    });
  });
  afterAll(() => server.close());

  const sign = (body: string) =>
    signRequest("s3cret", {
      method: "POST",
      path: PATH,
      body,
      deployment: "demo-model",
      timestampMs: Date.now(),
      nonce: crypto.randomUUID(),
    });

  /** POSTs `body` in small chunks without Content-Length (`transfer-encoding: chunked`) and reads the answer. */
  function postChunked(body: string, headers: Record<string, string>): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${server.url}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked", ...headers },
      });
      req.on("response", (res) => answerOf(res).then(resolve, reject));
      req.on("error", reject);
      for (let i = 0; i < body.length; i += 16) req.write(body.slice(i, i + 16));
      req.end();
    });
  }

  /**
   * Sends the head and `sent` bytes of a body, never ends it, and resolves with the answer: an engine that waited
   * for the whole body before answering would never answer (the test then fails on its timeout).
   */
  function answerBeforeTheBodyEnds(headers: Record<string, string>, sent: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${server.url}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
      });
      req.on("response", (res) =>
        answerOf(res).then((answer) => {
          req.destroy();
          resolve(answer);
        }, reject),
      );
      req.on("error", reject);
      req.write(sent);
    });
  }

  it("serves a validly signed body sent without Content-Length (chunked)", async () => {
    const body = JSON.stringify({ model: "demo-model", prompt: "hi", max_tokens: 2 });
    const answer = await postChunked(body, await sign(body));
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ object: "text_completion" });
  });

  it("refuses a validly signed chunked body past the limit with 413, as an unsigned engine does", async () => {
    const body = JSON.stringify({ model: "demo-model", prompt: "x".repeat(4 * MAX_BODY), max_tokens: 2 });
    const answer = await postChunked(body, await sign(body));
    expect(answer.status, answer.text).toBe(413);
  });

  it("answers 413 to a claimed signature whose chunked body passes the limit, without waiting for the body's end", async () => {
    const answer = await answerBeforeTheBodyEnds(
      { "transfer-encoding": "chunked", "x-spillway-signature": "anything" },
      "x".repeat(4 * MAX_BODY),
    );
    expect(answer.status, answer.text).toBe(413);
  });

  it("answers 413 to a claimed signature whose Content-Length passes the limit, without reading the body", async () => {
    const answer = await answerBeforeTheBodyEnds(
      { "content-length": String(1 << 30), "x-spillway-signature": "anything" },
      "x".repeat(16),
    );
    expect(answer.status, answer.text).toBe(413);
  });
});
