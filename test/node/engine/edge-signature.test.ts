import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signRequest } from "../../../src/core/request-signature";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

const body = JSON.stringify({ model: "demo-model", prompt: "hi", max_tokens: 2 });

async function signed(secret: string, method: string, path: string, payload: string, nonce = crypto.randomUUID()) {
  return signRequest(secret, { method, path, body: payload, deployment: "demo-model", timestampMs: Date.now(), nonce });
}

describe("engine server: trust between edge and engine", () => {
  let server: RunningEngineServer;
  const lines: string[] = [];

  beforeAll(async () => {
    server = await startEngineServer({
      port: 0,
      speed: 1000,
      protectLoadMetrics: true,
      signingSecrets: ["current", "previous"],
      log: (line) => lines.push(line),
    });
  });
  afterAll(() => server.close());

  const post = (headers: Record<string, string>, payload = body) =>
    fetch(`${server.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: payload,
    });

  it("refuses unsigned inference with 401 and says why only in its log", async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain("missing");
    expect(lines.some((l) => l.includes("edge signature missing"))).toBe(true);
  });

  it("logs a refused path as the request line had it: a percent-encoded newline writes no line of the caller's", async () => {
    const from = lines.length;
    const forged = "[2026-01-01 00:00:00] Decode batch, forged";
    const res = await fetch(`${server.url}/v1/x%0A${encodeURIComponent(forged)}`, { method: "POST", body: "{}" });
    expect(res.status).toBe(401);
    const written = lines.slice(from);
    // The refusal and the access line, each one line naming the path still encoded.
    expect(written.filter((l) => l.includes("/v1/x%0A")).length).toBe(2);
    for (const line of written) expect(line).not.toMatch(/[\r\n]/);
  });

  it("serves a signed request, and accepts the previous secret during a rotation", async () => {
    expect((await post(await signed("current", "POST", "/v1/completions", body))).status).toBe(200);
    expect((await post(await signed("previous", "POST", "/v1/completions", body))).status).toBe(200);
  });

  it("refuses a wrong secret, a tampered body and a replay", async () => {
    expect((await post(await signed("guess", "POST", "/v1/completions", body))).status).toBe(401);
    const headers = await signed("current", "POST", "/v1/completions", body);
    expect((await post(headers, body.replace("hi", "ho"))).status).toBe(401);
    expect((await post(headers)).status).toBe(200);
    expect((await post(headers)).status).toBe(401);
  });

  it("keeps /health, /v1/models and /v1/models/{id} open, and guards /load and /metrics when asked", async () => {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/models/demo-model`)).status).toBe(200);
    expect((await fetch(`${server.url}/load`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const load = await fetch(`${server.url}/load`, { headers: await signed("current", "GET", "/load", "") });
    expect(load.status).toBe(200);
    expect(typeof ((await load.json()) as { queueLength: number }).queueLength).toBe("number");
  });
});
