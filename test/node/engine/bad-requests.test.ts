import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

let server: RunningEngineServer;

beforeAll(async () => {
  server = await startEngineServer({
    port: 0,
    maxTotalTokens: 1024,
    maxBodyBytes: 64 * 1024,
    speed: 1000,
    createScheduler: fakeScheduler(),
    log: () => {},
  });
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: string) =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });

const cases: [string, string, string, number, string | null][] = [
  ["malformed JSON", "/v1/completions", "{nope", 400, null],
  ["a non-object body", "/v1/completions", "[1,2]", 400, null],
  ["a missing model", "/v1/completions", JSON.stringify({ prompt: "x" }), 400, "model"],
  ["a wrong-typed prompt", "/v1/completions", JSON.stringify({ model: "demo-model", prompt: 5 }), 400, "prompt"],
  ["a batch of prompts", "/v1/completions", JSON.stringify({ model: "demo-model", prompt: ["a", "b"] }), 400, "prompt"],
  [
    "a token id outside the vocabulary",
    "/v1/completions",
    JSON.stringify({ model: "demo-model", prompt: [1, 10_000_000] }),
    400,
    "prompt",
  ],
  [
    "a negative max_tokens",
    "/v1/completions",
    JSON.stringify({ model: "demo-model", prompt: "x", max_tokens: -1 }),
    400,
    "max_tokens",
  ],
  [
    "a fractional max_tokens",
    "/v1/completions",
    JSON.stringify({ model: "demo-model", prompt: "x", max_tokens: 1.5 }),
    400,
    "max_tokens",
  ],
  [
    "an absurd max_tokens",
    "/v1/completions",
    JSON.stringify({ model: "demo-model", prompt: "x", max_tokens: 1e9 }),
    400,
    "max_tokens",
  ],
  [
    "a prompt longer than the pool",
    "/v1/completions",
    JSON.stringify({ model: "demo-model", prompt: Array(2000).fill(7) }),
    400,
    "prompt",
  ],
  ["an unknown model", "/v1/completions", JSON.stringify({ model: "gpt-x", prompt: "x" }), 404, "model"],
  [
    "chat without messages",
    "/v1/chat/completions",
    JSON.stringify({ model: "demo-model", messages: [] }),
    400,
    "messages",
  ],
  [
    "chat with a bad role",
    "/v1/chat/completions",
    JSON.stringify({ model: "demo-model", messages: [{ role: "bot", content: "x" }] }),
    400,
    "messages.0.role",
  ],
  [
    "a wrong-typed stream flag",
    "/v1/chat/completions",
    JSON.stringify({ model: "demo-model", messages: [{ role: "user", content: "x" }], stream: "yes" }),
    400,
    "stream",
  ],
  [
    "n > 1",
    "/v1/chat/completions",
    JSON.stringify({ model: "demo-model", messages: [{ role: "user", content: "x" }], n: 2 }),
    400,
    "n",
  ],
  [
    "an oversized body",
    "/v1/completions",
    JSON.stringify({ model: "demo-model", prompt: "x".repeat(100_000) }),
    413,
    null,
  ],
];

describe("engine server, bad input", () => {
  it.each(cases)("answers %s with an OpenAI error and changes nothing", async (_name, path, body, status, param) => {
    const before = await (await fetch(`${server.url}/load`)).json();
    const res = await post(path, body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as { error: Record<string, unknown> };
    expect(Object.keys(json.error).sort()).toEqual(["code", "message", "param", "type"]);
    expect(typeof json.error.message).toBe("string");
    expect(json.error.param).toBe(param);
    expect(await (await fetch(`${server.url}/load`)).json()).toEqual(before);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('sglang:num_requests_total{model_name="demo-model"} 0');
  });

  it("answers unknown routes with a 404 error body", async () => {
    const res = await fetch(`${server.url}/v2/nothing`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
  });
});
