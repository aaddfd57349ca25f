import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

let server: RunningEngineServer;
beforeAll(async () => {
  server = await startEngineServer({ port: 0, maxTotalTokens: 4096, speed: 1000, log: () => {} });
});
afterAll(() => server.close());

const post = (path: string, body: string) =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });

interface OpenAIError {
  error: { message: string; type: string; param: string | null; code: string | null };
}

describe("a max_tokens the server cannot hold is refused naming the field the client sent", () => {
  const messages = [{ role: "user", content: "hi" }];
  it.each([
    ["max_completion_tokens", { max_completion_tokens: 100_000 }],
    ["max_completion_tokens", { max_tokens: 2, max_completion_tokens: 100_000 }],
    ["max_tokens", { max_tokens: 100_000 }],
  ])("%s (%j)", async (field, limits) => {
    const res = await post("/v1/chat/completions", JSON.stringify({ model: "demo-model", messages, ...limits }));
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as OpenAIError;
    expect([error.param, error.code]).toEqual([field, "context_length_exceeded"]);
    expect(error.message).toMatch(new RegExp(`^${field}: 100000 plus the prompt's \\d+ tokens exceeds`));
  });
});

// Bodies tried against the server that the fuzz test (fuzz.test.ts) does not generate: nesting deeper than a
// recursive parser survives, keys that name Object.prototype's properties, content and format values of the wrong
// shape. Each is a 4xx in OpenAI's error shape or an answer, never a 500.
describe("unusual bodies are answered, never with a 500", () => {
  const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  const chat = (extra: string) => `{"model":"demo-model","messages":[{"role":"user","content":"hi"}],${extra}}`;
  it.each([
    [
      "nesting 50 000 deep in an ignored field",
      "/v1/completions",
      `{"model":"demo-model","prompt":"x","max_tokens":2,"extra":${deep(50_000)}}`,
      200,
    ],
    ["nesting 50 000 deep as the prompt", "/v1/completions", `{"model":"demo-model","prompt":${deep(50_000)}}`, 400],
    [
      "a __proto__ key",
      "/v1/completions",
      '{"__proto__":{"stream":true},"model":"demo-model","prompt":"x","max_tokens":2}',
      200,
    ],
    [
      "a constructor key",
      "/v1/completions",
      '{"constructor":{"prototype":{}},"model":"demo-model","prompt":"x","max_tokens":2}',
      200,
    ],
    ["a prompt list holding an empty string", "/v1/completions", '{"model":"demo-model","prompt":[""]}', 400],
    [
      "a lone surrogate in the prompt",
      "/v1/completions",
      '{"model":"demo-model","prompt":"\\ud800 lone surrogate","max_tokens":2}',
      200,
    ],
    ["response_format as a list", "/v1/chat/completions", chat('"max_tokens":2,"response_format":[]'), 400],
    [
      "response_format as a string",
      "/v1/chat/completions",
      chat('"max_tokens":2,"response_format":"json_object"'),
      400,
    ],
    [
      "tool_choice naming a function",
      "/v1/chat/completions",
      chat('"max_tokens":2,"tool_choice":{"type":"function"}'),
      400,
    ],
    ["a temperature that parses to Infinity", "/v1/chat/completions", chat('"temperature":1e999'), 400],
    [
      "content as an empty list of parts",
      "/v1/chat/completions",
      '{"model":"demo-model","messages":[{"role":"user","content":[]}],"max_tokens":2}',
      200,
    ],
    ["a null message", "/v1/chat/completions", '{"model":"demo-model","messages":[null]}', 400],
  ])("%s (%s) -> %i", async (_label, path, body, status) => {
    const res = await post(path, body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as Partial<OpenAIError>;
    if (status === 400) {
      expect(json.error?.type).toBe("invalid_request_error");
      expect(typeof json.error?.message).toBe("string");
    } else expect(json.error).toBeUndefined();
  });
});
