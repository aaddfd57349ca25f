import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

// The engine server held to OpenAI's API reference for chat completions and completions, through the official
// openai client: what it parses, what it refuses (400 naming the parameter) and what it accepts and ignores.
let server: RunningEngineServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startEngineServer({
    port: 0,
    maxTotalTokens: 4096,
    speed: 1000,
    createScheduler: fakeScheduler(),
    log: () => {},
  });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});

const MODEL = "demo-model";
const messages = [{ role: "user" as const, content: "hello there" }];
type Body = Record<string, unknown>;

const chat = (extra: Body) =>
  client.chat.completions.create({ model: MODEL, messages, ...extra } as OpenAI.ChatCompletionCreateParamsNonStreaming);
const completion = (extra: Body) =>
  client.completions.create({
    model: MODEL,
    prompt: "hello there",
    ...extra,
  } as OpenAI.CompletionCreateParamsNonStreaming);

/** The client's error for a call expected to fail. */
async function refusal(call: Promise<unknown>): Promise<APIError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

/** Reads a stream's raw chunks (as the client parsed them). */
async function chunksOf<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const chunks: T[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("OpenAI reference: streaming usage (stream_options.include_usage)", () => {
  it("chat: every chunk before the last has usage null; the last has empty choices and the usage", async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages,
      max_completion_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks = await chunksOf(stream);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ completion_tokens: 5 });
    expect(last?.usage?.total_tokens).toBe((last?.usage?.prompt_tokens ?? 0) + 5);
    const before = chunks.slice(0, -1);
    expect(before.length).toBeGreaterThan(0);
    for (const chunk of before) expect(chunk).toHaveProperty("usage", null);
    expect(before.at(-1)?.choices[0]?.finish_reason).toBe("length");
  });

  it("completions: the same, and no usage field at all when it is not asked for", async () => {
    const withUsage = await chunksOf(
      await client.completions.create({
        model: MODEL,
        prompt: "hello there",
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
        ignore_eos: true,
      } as OpenAI.CompletionCreateParamsStreaming),
    );
    expect(withUsage.at(-1)?.choices).toEqual([]);
    expect(withUsage.at(-1)?.usage).toMatchObject({ completion_tokens: 4 });
    for (const chunk of withUsage.slice(0, -1)) expect(chunk).toHaveProperty("usage", null);

    const without = await chunksOf(
      await client.completions.create({
        model: MODEL,
        prompt: "hello there",
        max_tokens: 4,
        stream: true,
        ignore_eos: true,
      } as OpenAI.CompletionCreateParamsStreaming),
    );
    for (const chunk of without) expect(chunk).not.toHaveProperty("usage");
    expect(without.map((c) => c.choices[0]?.text ?? "").join("")).toBe(
      withUsage.map((c) => c.choices[0]?.text ?? "").join(""),
    );
  });

  it("refuses stream_options on a request that does not stream", async () => {
    const error = await refusal(chat({ stream_options: { include_usage: true } }));
    expect(error.status).toBe(400);
    expect(error.param).toBe("stream_options");
  });
});

describe("OpenAI reference: documented parameters", () => {
  it("max_completion_tokens takes precedence over max_tokens and is named when out of range", async () => {
    const answer = await chat({ max_tokens: 3, max_completion_tokens: 6, ignore_eos: true });
    expect(answer.usage?.completion_tokens).toBe(6);
    expect(answer.choices[0]?.finish_reason).toBe("length");
    const tooMany = await refusal(chat({ max_completion_tokens: 1_000_000 }));
    expect([tooMany.status, tooMany.param]).toEqual([400, "max_completion_tokens"]);
  });

  it("a chat request that sets no limit runs with what its prompt leaves, not refused for a max_tokens it never sent", async () => {
    // OpenAI, vLLM and SGLang read no limit as the rest of the context; here it is also capped at 128.
    const long = [{ role: "user" as const, content: "word ".repeat(4000) }];
    const answer = await client.chat.completions.create({
      model: MODEL,
      messages: long,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const usage = answer.usage as OpenAI.CompletionUsage;
    expect(usage.completion_tokens).toBeLessThan(128);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    // Every token the pool holds for one request (max-total-tokens 4096, strictly less): nothing left over.
    expect(usage.prompt_tokens + usage.completion_tokens).toBe(4095);
    expect(answer.choices[0]?.finish_reason).toBe("length");
  });

  it("stop as a string or a list of up to 4; a fifth is refused naming stop", async () => {
    const free = await completion({ max_tokens: 12, ignore_eos: true });
    const text = free.choices[0]?.text ?? "";
    const cut = text.slice(3, 6);
    const expected = text.slice(0, text.indexOf(cut));
    for (const stop of [cut, ["never-seen-1", cut], ["a-1", "a-2", "a-3", cut]]) {
      const stopped = await completion({ max_tokens: 12, ignore_eos: true, stop });
      expect(stopped.choices[0]?.text).toBe(expected);
      expect(stopped.choices[0]?.finish_reason).toBe("stop");
    }
    const error = await refusal(completion({ stop: ["a", "b", "c", "d", "e"] }));
    expect([error.status, error.param]).toEqual([400, "stop"]);
    expect(error.message).toMatch(/at most 4/);
  });

  it("n = 1 is served, n > 1 refused naming n", async () => {
    expect((await chat({ n: 1, max_tokens: 2 })).choices).toHaveLength(1);
    const error = await refusal(chat({ n: 3 }));
    expect([error.status, error.param]).toEqual([400, "n"]);
  });

  it("accepts seed, user and sampling knobs in range and ignores them (the text is deterministic)", async () => {
    const plain = await chat({ max_tokens: 8, ignore_eos: true });
    const knobs = await chat({
      max_tokens: 8,
      ignore_eos: true,
      seed: 42,
      user: "user-1",
      temperature: 0.7,
      top_p: 0.9,
      presence_penalty: -1,
      frequency_penalty: 2,
      logprobs: false,
      top_logprobs: 0,
      response_format: { type: "text" },
      tools: [],
      tool_choice: "none",
    });
    expect(knobs.choices[0]?.message.content).toBe(plain.choices[0]?.message.content);
    const cmpl = await completion({ max_tokens: 4, echo: false, best_of: 1, suffix: "", temperature: 0 });
    expect(cmpl.choices).toHaveLength(1);
  });
});

describe("OpenAI reference: chat messages", () => {
  it("accepts a conversation holding every role of the client's ChatCompletionMessageParam", async () => {
    const history: OpenAI.ChatCompletionMessageParam[] = [
      { role: "developer", content: "be brief" },
      { role: "system", content: "you are a test" },
      { role: "user", content: [{ type: "text", text: "call f" }], name: "u1" },
      { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } },
      { role: "function", name: "f", content: "f says hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "g", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "g says hi" },
      { role: "user", content: "and now?" },
    ];
    const answer = await client.chat.completions.create({ model: MODEL, messages: history, max_tokens: 2 });
    expect(answer.choices[0]?.message.role).toBe("assistant");
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
  });
});

const unsupported: [string, "chat" | "completion", Body, string][] = [
  ["chat logprobs", "chat", { logprobs: true }, "logprobs"],
  ["chat top_logprobs", "chat", { top_logprobs: 3 }, "top_logprobs"],
  ["JSON mode", "chat", { response_format: { type: "json_object" } }, "response_format"],
  [
    "structured outputs",
    "chat",
    { response_format: { type: "json_schema", json_schema: { name: "x", schema: {} } } },
    "response_format",
  ],
  ["tools", "chat", { tools: [{ type: "function", function: { name: "f", parameters: {} } }] }, "tools"],
  ["a required tool call", "chat", { tool_choice: "required" }, "tool_choice"],
  [
    "an image content part",
    "chat",
    { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }] }] },
    "messages.0.content",
  ],
  ["completion logprobs", "completion", { logprobs: 2 }, "logprobs"],
  ["echo", "completion", { echo: true }, "echo"],
  ["best_of", "completion", { best_of: 2 }, "best_of"],
  ["suffix", "completion", { suffix: "end" }, "suffix"],
];

const outOfRange: [string, "chat" | "completion", Body, string][] = [
  ["temperature above 2", "chat", { temperature: 2.5 }, "temperature"],
  ["top_p above 1", "completion", { top_p: 1.5 }, "top_p"],
  ["presence_penalty below -2", "chat", { presence_penalty: -3 }, "presence_penalty"],
  ["frequency_penalty above 2", "completion", { frequency_penalty: 3 }, "frequency_penalty"],
  ["a fractional seed", "chat", { seed: 1.5 }, "seed"],
  ["a non-string user", "chat", { user: 7 }, "user"],
  ["max_tokens 0", "completion", { max_tokens: 0 }, "max_tokens"],
];

describe("OpenAI reference: refusals are 400s naming the parameter, in OpenAI's error shape", () => {
  it.each([...unsupported, ...outOfRange])("refuses %s", async (_name, endpoint, extra, param) => {
    const error = await refusal(endpoint === "chat" ? chat(extra) : completion(extra));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toContain(param);
    expect(Object.keys(error.error as object).sort()).toEqual(["code", "message", "param", "type"]);
  });

  it("names an unknown model with a 404 the client maps to NotFoundError", async () => {
    const error = await refusal(chat({ model: "gpt-none" }));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect([error.param, error.code]).toEqual(["model", "model_not_found"]);
  });
});

describe("OpenAI reference: request ids", () => {
  it("sends the answer's id as x-request-id, streamed and not, which the client reports as request_id", async () => {
    const whole = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 2 }).withResponse();
    expect(whole.request_id).toBe(whole.data.id);
    const streamed = await client.completions
      .create({ model: MODEL, prompt: "hi", max_tokens: 2, stream: true })
      .withResponse();
    const chunks = await chunksOf(streamed.data);
    expect(streamed.request_id).toBe(chunks[0]?.id);
  });
});

describe("OpenAI reference: /v1/models", () => {
  it("lists the served model in the list shape the client pages through", async () => {
    const models: OpenAI.Model[] = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models).toEqual([expect.objectContaining({ id: MODEL, object: "model", owned_by: expect.any(String) })]);
    expect(typeof models[0]?.created).toBe("number");
  });

  it("retrieves the served model by its id, as the list names it", async () => {
    const model = await client.models.retrieve(MODEL);
    expect(model).toMatchObject({ id: MODEL, object: "model", owned_by: expect.any(String) });
  });

  it("answers any other model id with OpenAI's 404 (the client's NotFoundError)", async () => {
    for (const id of ["other-model", "org/other-model", MODEL.toUpperCase()]) {
      const error = await refusal(client.models.retrieve(id));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.error).toMatchObject({ type: "invalid_request_error", param: "model", code: "model_not_found" });
      expect(error.message).toContain(id);
    }
  });
});

describe("OpenAI reference: error types", () => {
  it("uses OpenAI's invalid_request_error for an unknown model and an unknown URL, as the edge does", async () => {
    const unknownModel = await refusal(chat({ model: "other-model" }));
    expect(unknownModel.status).toBe(404);
    expect(unknownModel.error).toMatchObject({ type: "invalid_request_error", code: "model_not_found" });
    const unknownUrl = await refusal(client.get("/nothing/here"));
    expect(unknownUrl.status).toBe(404);
    expect(unknownUrl.error).toMatchObject({
      type: "invalid_request_error",
      message: "Invalid URL (GET /v1/nothing/here)",
    });
  });
});
