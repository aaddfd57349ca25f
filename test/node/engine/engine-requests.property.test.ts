import fc from "fast-check";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { type ChatMessage, renderChatPrompt } from "../../../src/engine/chat-template";
import type {
  EngineCore,
  FinishReason,
  GenerationRequest,
  GenerationSink,
  GenerationUsage,
} from "../../../src/engine/generation";
import type { Logger } from "../../../src/engine/log-line";
import type { EngineMetrics } from "../../../src/engine/metrics";
import { eosAfterTokens, type OutputLengthModel } from "../../../src/engine/output-length-model";
import { createPacer } from "../../../src/engine/pacer";
import { DEFAULT_MAX_TOKENS, type RequestLimits } from "../../../src/engine/prepare-generation";
import { createEngineApp } from "../../../src/engine/server";
import { tokenizer } from "../../../src/engine/tokenizer";
import { propertyRuns } from "../../support/property-runs";

/**
 * The engine server's request path (README "Engine server", the JSDoc of prepare-generation, openai-response,
 * chat-template, output-length-model and pacer), driven in-process through the Hono app with an engine core double
 * that records what reaches the scheduler and plays a scripted generation back. Held, for arbitrary inputs:
 *
 * - any body (garbage JSON, wrong types, odd numbers) gets a 200 or an OpenAI error body
 *   `{"error":{"message","type","param","code"}}` with a 4xx, never a 500; a JSON object refused with 400 names the
 *   parameter; a refused request never reaches the core; what does reach it has a non-empty prompt of vocabulary
 *   ids and a finite integer max_tokens >= 1;
 * - for well-formed requests with at most one fault, the outcome the documentation gives: the faulty parameter's
 *   400, 404 for another model, else the limits: accepted only if pages(prompt) + max_tokens < max-total-tokens and
 *   prompt + max_tokens <= context length, and accepted whenever that holds (the context length counts the prompt's
 *   tokens, not its pages, as SGLang's check does), refused naming
 *   `prompt` when no max_tokens would fit and `max_tokens` / `max_completion_tokens` (whichever was given) otherwise;
 *   the prompt is the text's tokens, the token ids given, or the chat messages rendered as `<role>: <content>` lines
 *   and `assistant:`; defaults 16 (completions) and 128 (chat); max_completion_tokens over max_tokens;
 * - the limits an error states are honest: "ask for at most N" is accepted and N + 1 is not; "at most N prompt
 *   tokens" accepts a prompt of N tokens with max_tokens 1;
 * - the answer for a generation: streamed, valid SSE (each event `data: <JSON>\n\n`, `data: [DONE]` last and once),
 *   chunks sharing the id, text joining to the non-streamed answer's, chat's first chunk carrying the assistant
 *   role, finish_reason once on the last choice chunk as the engine reported it, a usage chunk (empty choices) after
 *   it exactly when `stream_options.include_usage` is true, usage = prompt and completion counts with total their
 *   sum; an engine error is a 500 error body, or an SSE error event before [DONE] and no finish_reason;
 * - the chat template renders any messages deterministically, as documented;
 * - the output-length model gives null or an integer in [1, max_tokens) for any valid options, key and max_tokens,
 *   the same for the same inputs, within the uniform fractions' bounds;
 * - the pacer, under any monotonic clock, sleeps only for finite durations of at least 1 ms, never more than asked
 *   plus the sub-millisecond carry, and, when only its sleeps move the clock, sleeps in all what was asked less a
 *   carry in [0, 1) ms.
 */

const RUN = propertyRuns(200, 20261205);

// The pacer's sleeps, recorded instead of waited (no real time).
const slept: number[] = [];
vi.mock("node:timers/promises", () => ({
  setTimeout: async (ms: number) => {
    slept.push(ms);
  },
  setImmediate: async () => {},
}));

const MODEL = "demo-model";

/** How the core double answers a generation. */
interface Script {
  pieces: string[];
  end: { kind: "finish"; reason: FinishReason } | { kind: "error"; message: string };
  completionTokens: number;
  cachedTokens: number;
}

const script: fc.Arbitrary<Script> = fc.record({
  pieces: fc.array(fc.oneof(fc.constant(""), fc.string({ unit: "grapheme", maxLength: 6 })), { maxLength: 8 }),
  end: fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("finish" as const),
        reason: fc.constantFrom("stop", "length") as fc.Arbitrary<FinishReason>,
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("error" as const), message: fc.string({ maxLength: 20 }) }) },
  ),
  completionTokens: fc.nat(50),
  cachedTokens: fc.nat(10),
});

function makeApp(limits: RequestLimits, play: Script) {
  const submitted: GenerationRequest[] = [];
  const core: EngineCore = {
    submit(request: GenerationRequest, sink: GenerationSink) {
      submitted.push(request);
      const usage: GenerationUsage = {
        promptTokens: request.promptTokens.length,
        completionTokens: play.completionTokens,
        cachedTokens: Math.min(play.cachedTokens, request.promptTokens.length),
      };
      // As the engine loop does: later, never inside submit.
      void (async () => {
        for (const p of play.pieces) {
          await Promise.resolve();
          sink.onText(p);
        }
        await Promise.resolve();
        if (play.end.kind === "finish") sink.onFinish(play.end.reason, usage);
        else sink.onError(play.end.message, usage);
      })();
      return () => {};
    },
    load: () => ({ queueLength: 0, running: 0, waiting: 0, accepting: true, tokenUsage: 0, maxRunningRequests: 1 }),
    close: async () => {},
  };
  const logger = { debug() {}, info() {}, warning() {}, error() {}, critical() {} } as unknown as Logger;
  const app = createEngineApp({
    name: "engine-test",
    core,
    tokenizer,
    limits,
    metrics: {} as EngineMetrics,
    logger,
    maxBodyBytes: 1 << 20,
    accessLog: false,
  });
  return { app, submitted };
}

const pathOf = (kind: "completion" | "chat") => (kind === "chat" ? "/v1/chat/completions" : "/v1/completions");

async function post(app: ReturnType<typeof makeApp>["app"], kind: "completion" | "chat", body: string) {
  const res = await app.request(pathOf(kind), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return { status: res.status, text: await res.text(), type: res.headers.get("content-type") ?? "" };
}

interface ErrorJson {
  error: { message: unknown; type: unknown; param: unknown; code: unknown };
}

function expectErrorBody(text: string): ErrorJson["error"] {
  const json = JSON.parse(text) as ErrorJson;
  expect(Object.keys(json)).toEqual(["error"]);
  expect(Object.keys(json.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(typeof json.error.message).toBe("string");
  expect(typeof json.error.type).toBe("string");
  expect(json.error.param === null || typeof json.error.param === "string").toBe(true);
  return json.error;
}

function expectSaneGeneration(g: GenerationRequest) {
  expect(g.promptTokens.length).toBeGreaterThan(0);
  for (const id of g.promptTokens) {
    expect(Number.isInteger(id)).toBe(true);
    expect(id).toBeGreaterThanOrEqual(0);
    expect(id).toBeLessThan(tokenizer.vocabSize);
  }
  expect(Number.isSafeInteger(g.maxTokens)).toBe(true);
  expect(g.maxTokens).toBeGreaterThanOrEqual(1);
  expect(Array.isArray(g.stop)).toBe(true);
  expect(typeof g.ignoreEos).toBe("boolean");
}

const limitsArb: fc.Arbitrary<RequestLimits> = fc
  .record({
    maxTotalTokens: fc.integer({ min: 4, max: 300 }),
    context: fc.option(fc.integer({ min: 2, max: 400 }), { nil: undefined }),
    pageSize: fc.constantFrom(1, 1, 4, 16),
  })
  .map(({ maxTotalTokens, context, pageSize }) => ({
    servedModelName: MODEL,
    maxTotalTokens,
    contextLength: context ?? maxTotalTokens,
    pageSize,
  }));

// ---------------------------------------------------------------------------------------------------------------
// Garbage in.

const oddNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.5, -1, 0, 1, 1e9, 3),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
);
const field = fc.oneof(fc.jsonValue({ maxDepth: 2 }), oddNumber, fc.string({ unit: "binary", maxLength: 20 }));
const garbage = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          model: fc.oneof(fc.constant(MODEL), field),
          messages: fc.oneof(
            fc.array(
              fc.record(
                {
                  role: fc.oneof(fc.constantFrom("system", "developer", "user", "assistant", "tool"), field),
                  content: fc.oneof(fc.string({ unit: "grapheme", maxLength: 10 }), field),
                  name: field,
                },
                { requiredKeys: [] },
              ),
              { maxLength: 3 },
            ),
            field,
          ),
          prompt: fc.oneof(
            fc.string({ unit: "grapheme", maxLength: 30 }),
            fc.array(oddNumber, { maxLength: 5 }),
            field,
          ),
          max_tokens: fc.oneof(fc.integer({ min: -2, max: 400 }), oddNumber, field),
          max_completion_tokens: fc.oneof(fc.integer({ min: -2, max: 400 }), oddNumber, field),
          stream: fc.oneof(fc.boolean(), field),
          stream_options: fc.oneof(fc.record({ include_usage: fc.oneof(fc.boolean(), field) }), field),
          stop: fc.oneof(fc.array(fc.string({ maxLength: 3 }), { maxLength: 6 }), field),
          ignore_eos: fc.oneof(fc.boolean(), field),
          n: fc.oneof(fc.constant(1), field),
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 60 }) },
);

describe("engine requests: any body", () => {
  it("gets a 200 or a clean 4xx naming the parameter; only sane generations reach the core", async () => {
    await fc.assert(
      fc.asyncProperty(
        limitsArb,
        fc.constantFrom("completion" as const, "chat" as const),
        garbage,
        script,
        async (limits, kind, body, play) => {
          const { app, submitted } = makeApp(limits, play);
          const res = await post(app, kind, body);
          let parsed: unknown;
          try {
            parsed = JSON.parse(body);
          } catch {
            parsed = undefined;
          }
          const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
          if (res.status === 200) {
            expect(submitted).toHaveLength(1);
            expectSaneGeneration(submitted[0] as GenerationRequest);
            return;
          }
          if (res.status === 500) {
            // Only the engine's own error, after acceptance.
            expect(play.end.kind).toBe("error");
            expect(submitted).toHaveLength(1);
            expectSaneGeneration(submitted[0] as GenerationRequest);
            return;
          }
          expect([400, 404], `${body} -> ${res.status} ${res.text}`).toContain(res.status);
          expect(submitted).toHaveLength(0);
          const error = expectErrorBody(res.text);
          if (res.status === 404) expect(error.param).toBe("model");
          if (res.status === 400 && isObject) {
            expect(typeof error.param, `${body} -> ${res.text}`).toBe("string");
            const top = String(error.param).split(".")[0];
            const keys = ["model", "prompt", "messages", "max_tokens", "max_completion_tokens", "stream"];
            expect([...keys, "stream_options", "stop", "ignore_eos", "n"]).toContain(top);
          }
        },
      ),
      RUN,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Well-formed requests with at most one fault, against the documented outcome.

type Kind = "completion" | "chat";

interface Drawn {
  kind: Kind;
  model: string;
  prompt: { text: string } | { ids: number[] };
  messages: ChatMessage[];
  maxTokens: number | null | undefined;
  maxCompletionTokens: number | null | undefined;
  stop: string | string[] | null | undefined;
  ignoreEos: boolean | undefined;
  n: 1 | null | undefined;
  stream: boolean | undefined;
  includeUsage: boolean | null | undefined | "no-options";
  fault: { param: string; set: (body: Record<string, unknown>) => void } | null;
}

const roles = ["system", "developer", "user", "assistant", "tool"] as const;
const messageArb: fc.Arbitrary<ChatMessage> = fc.record(
  {
    role: fc.constantFrom(...roles),
    content: fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.constant(null),
      fc.array(
        fc.record(
          { type: fc.constant("text"), text: fc.string({ unit: "grapheme", maxLength: 6 }) },
          { requiredKeys: ["type", "text"] },
        ),
        { maxLength: 3 },
      ),
    ),
    name: fc.string({ maxLength: 4 }),
  },
  { requiredKeys: ["role", "content"] },
);

const faults: { kinds: Kind[]; param: string; set: (b: Record<string, unknown>) => void }[] = [
  { kinds: ["completion", "chat"], param: "model", set: (b) => delete b.model },
  { kinds: ["completion", "chat"], param: "model", set: (b) => (b.model = 7) },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = 5) },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = ["a", "b"]) },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = [1, 2.5]) },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = []) },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = "") },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = [3, tokenizer.vocabSize]) },
  { kinds: ["completion"], param: "prompt", set: (b) => (b.prompt = [-1]) },
  { kinds: ["chat"], param: "messages", set: (b) => (b.messages = []) },
  { kinds: ["chat"], param: "messages", set: (b) => delete b.messages },
  {
    kinds: ["chat"],
    param: "messages.0.role",
    set: (b) => ((b.messages as ChatMessage[])[0] = { role: "bot", content: "x" }),
  },
  {
    kinds: ["chat"],
    param: "messages.0.content",
    set: (b) => ((b.messages as unknown[])[0] = { role: "user", content: 3 }),
  },
  { kinds: ["completion", "chat"], param: "max_tokens", set: (b) => (b.max_tokens = 0) },
  { kinds: ["completion", "chat"], param: "max_tokens", set: (b) => (b.max_tokens = -3) },
  { kinds: ["completion", "chat"], param: "max_tokens", set: (b) => (b.max_tokens = 1.5) },
  { kinds: ["completion", "chat"], param: "max_tokens", set: (b) => (b.max_tokens = "5") },
  { kinds: ["completion", "chat"], param: "max_tokens", set: (b) => (b.max_tokens = 2 ** 53 + 2) },
  { kinds: ["chat"], param: "max_completion_tokens", set: (b) => (b.max_completion_tokens = 0) },
  { kinds: ["chat"], param: "max_completion_tokens", set: (b) => (b.max_completion_tokens = 1e300) },
  { kinds: ["completion", "chat"], param: "stream", set: (b) => (b.stream = "yes") },
  { kinds: ["completion", "chat"], param: "stream_options", set: (b) => (b.stream_options = "on") },
  {
    kinds: ["completion", "chat"],
    param: "stream_options.include_usage",
    set: (b) => (b.stream_options = { include_usage: 1 }),
  },
  {
    kinds: ["completion", "chat"],
    param: "stream_options",
    set: (b) => {
      b.stream = false;
      b.stream_options = { include_usage: true };
    },
  },
  {
    kinds: ["chat"],
    param: "messages.0.content",
    set: (b) => ((b.messages as unknown[])[0] = { role: "user", content: [{ type: "image_url", text: "x" }] }),
  },
  { kinds: ["completion", "chat"], param: "logprobs", set: (b) => (b.logprobs = b.prompt === undefined ? true : 1) },
  { kinds: ["completion", "chat"], param: "temperature", set: (b) => (b.temperature = 3) },
  { kinds: ["completion", "chat"], param: "stop", set: (b) => (b.stop = ["a", "b", "c", "d", "e"]) },
  { kinds: ["completion", "chat"], param: "stop", set: (b) => (b.stop = 4) },
  { kinds: ["completion", "chat"], param: "ignore_eos", set: (b) => (b.ignore_eos = "true") },
  { kinds: ["completion", "chat"], param: "n", set: (b) => (b.n = 2) },
];

const tokenId = fc.oneof(fc.nat(300), fc.integer({ min: 0, max: tokenizer.vocabSize - 1 }));
const maxTokensArb = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer({ min: 1, max: 40 }),
  fc.integer({ min: 1, max: 500 }),
);

const drawnArb: fc.Arbitrary<Drawn> = fc
  .record({
    kind: fc.constantFrom("completion" as const, "chat" as const),
    otherModel: fc.boolean(),
    prompt: fc.oneof(
      fc.record({ text: fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }) }),
      fc.record({ ids: fc.array(tokenId, { minLength: 1, maxLength: 80 }) }),
    ),
    messages: fc.array(messageArb, { minLength: 1, maxLength: 4 }),
    maxTokens: maxTokensArb,
    maxCompletionTokens: maxTokensArb,
    stop: fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string({ maxLength: 3 }),
      fc.array(fc.string({ maxLength: 3 }), { maxLength: 4 }),
    ),
    ignoreEos: fc.option(fc.boolean(), { nil: undefined }),
    n: fc.constantFrom(1 as const, null, undefined),
    stream: fc.option(fc.boolean(), { nil: undefined }),
    includeUsage: fc.constantFrom(true, false, null, undefined, "no-options" as const),
    fault: fc.option(fc.nat(faults.length * 4), { nil: null }),
  })
  .map((d) => {
    const applicable = faults.filter((f) => f.kinds.includes(d.kind));
    const fault = d.fault === null || d.fault >= applicable.length ? null : (applicable[d.fault] ?? null);
    return {
      ...d,
      model: d.otherModel && d.fault === null ? "gpt-x" : MODEL,
      maxCompletionTokens: d.kind === "chat" ? d.maxCompletionTokens : undefined,
      fault,
    };
  });

function bodyOf(d: Drawn, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const b: Record<string, unknown> = { model: d.model };
  if (d.kind === "completion") b.prompt = "text" in d.prompt ? d.prompt.text : d.prompt.ids;
  else b.messages = d.messages.map((m) => ({ ...m }));
  if (d.maxTokens !== undefined) b.max_tokens = d.maxTokens;
  if (d.maxCompletionTokens !== undefined) b.max_completion_tokens = d.maxCompletionTokens;
  if (d.stop !== undefined) b.stop = d.stop;
  if (d.ignoreEos !== undefined) b.ignore_eos = d.ignoreEos;
  if (d.n !== undefined) b.n = d.n;
  if (d.stream !== undefined) b.stream = d.stream;
  Object.assign(b, overrides);
  // OpenAI refuses stream_options on a request that does not stream (one of the faults checks it).
  if (d.includeUsage !== "no-options" && b.stream === true)
    b.stream_options = d.includeUsage === undefined ? {} : { include_usage: d.includeUsage };
  d.fault?.set(b);
  return b;
}

/** The chat template as the README states it: `<role>: <content>` lines, then `assistant:`. */
function templateModel(messages: readonly ChatMessage[]): string {
  const text = (c: ChatMessage["content"]) =>
    c === null ? "" : typeof c === "string" ? c : c.map((p) => p.text ?? "").join("");
  return [...messages.map((m) => `${m.role}: ${text(m.content)}`), "assistant:"].join("\n");
}

function promptTokensOf(d: Drawn): number[] {
  if (d.kind === "chat") return tokenizer.encode(templateModel(d.messages));
  return "text" in d.prompt ? tokenizer.encode(d.prompt.text) : d.prompt.ids;
}

/** The documented limit check: true, must be accepted; false, must be refused. */
function fits(prompt: number, maxTokens: number, l: RequestLimits): boolean {
  const pages = Math.ceil(prompt / l.pageSize) * l.pageSize;
  // Exactly the documented check: the prompt's pages against the pool, its tokens against the context length.
  return pages + maxTokens < l.maxTotalTokens && prompt + maxTokens <= l.contextLength;
}

/** The largest max_tokens up to `cap` that {@link fits} the prompt; `cap` when none does (the prompt is refused). */
function largestFitting(prompt: number, cap: number, l: RequestLimits): number {
  for (let m = cap; m >= 1; m--) if (fits(prompt, m, l)) return m;
  return cap;
}

function parseSse(text: string): unknown[] {
  expect(text.endsWith("\n\n"), text).toBe(true);
  const events = text.slice(0, -2).split("\n\n");
  const out: unknown[] = [];
  events.forEach((e, i) => {
    expect(e.startsWith("data: "), e).toBe(true);
    const data = e.slice("data: ".length);
    expect(data.includes("\n")).toBe(false);
    if (i === events.length - 1) expect(data).toBe("[DONE]");
    else out.push(JSON.parse(data));
  });
  return out;
}

interface Choice {
  text?: string;
  delta?: { role?: string; content?: string };
  message?: { role: string; content: string };
  finish_reason: string | null;
}
interface Chunk {
  id: string;
  object: string;
  choices: Choice[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  error?: unknown;
}

describe("engine requests: well-formed, with at most one fault", () => {
  it("becomes the documented generation or the documented error; the answer streams as it is sent whole", async () => {
    await fc.assert(
      fc.asyncProperty(limitsArb, drawnArb, script, async (limits, d, play) => {
        const { app, submitted } = makeApp(limits, play);
        const body = bodyOf(d);
        const res = await post(app, d.kind, JSON.stringify(body));
        const ctx = `${JSON.stringify(body)} ${JSON.stringify(limits)} -> ${res.status} ${res.text.slice(0, 300)}`;
        if (d.fault) {
          expect(res.status, ctx).toBe(400);
          expect(expectErrorBody(res.text).param, ctx).toBe(d.fault.param);
          expect(submitted).toHaveLength(0);
          return;
        }
        if (d.model !== MODEL) {
          expect(res.status, ctx).toBe(404);
          expect(expectErrorBody(res.text).param).toBe("model");
          expect(submitted).toHaveLength(0);
          return;
        }
        const tokens = promptTokensOf(d);
        const asked = d.kind === "chat" ? (d.maxCompletionTokens ?? d.maxTokens) : d.maxTokens;
        // A chat request that sets no limit gets the default, or what its prompt leaves if less (never refused for
        // it); a completion gets OpenAI's 16.
        const maxTokens =
          asked ??
          (d.kind === "chat"
            ? largestFitting(tokens.length, DEFAULT_MAX_TOKENS.chat, limits)
            : DEFAULT_MAX_TOKENS.completion);
        expect(DEFAULT_MAX_TOKENS).toEqual({ completion: 16, chat: 128 });
        const verdict = fits(tokens.length, maxTokens, limits);
        if (res.status !== 200 && res.status !== 500) {
          expect(res.status, ctx).toBe(400);
          expect(verdict, ctx).toBe(false);
          expect(submitted).toHaveLength(0);
          const error = expectErrorBody(res.text);
          const promptParam = d.kind === "chat" ? "messages" : "prompt";
          const maxParam = d.kind === "chat" && d.maxCompletionTokens != null ? "max_completion_tokens" : "max_tokens";
          const withOne = fits(tokens.length, 1, limits);
          expect(error.param, ctx).toBe(withOne ? maxParam : promptParam);
          await honestLimits(limits, d, String(error.message), tokens.length);
          return;
        }
        expect(verdict, ctx).toBe(true);
        expect(submitted).toHaveLength(1);
        const g = submitted[0] as GenerationRequest;
        expectSaneGeneration(g);
        expect(g.promptTokens).toEqual(tokens);
        expect(g.maxTokens).toBe(maxTokens);
        expect(g.promptTokens.length + g.maxTokens).toBeLessThanOrEqual(limits.contextLength);
        expect(g.ignoreEos).toBe(d.ignoreEos ?? false);
        expect(g.stop).toEqual(d.stop == null ? [] : typeof d.stop === "string" ? [d.stop] : d.stop);
        expect(g.id.startsWith(d.kind === "chat" ? "chatcmpl-" : "cmpl-")).toBe(true);
        await checkAnswers(app, submitted, d, play, tokens.length);
      }),
      RUN,
    );
  });
});

/** "ask for at most N" is accepted and N + 1 refused; "at most N prompt tokens" holds a prompt of N tokens. */
async function honestLimits(limits: RequestLimits, d: Drawn, message: string, promptLength: number) {
  const ask = /ask for at most (-?\d+)/.exec(message);
  const base: Drawn = { ...d, fault: null, stream: false, maxCompletionTokens: undefined };
  const ok: Script = { pieces: [], end: { kind: "finish", reason: "length" }, completionTokens: 0, cachedTokens: 0 };
  if (ask) {
    const n = Number(ask[1]);
    expect(n, message).toBeGreaterThanOrEqual(1);
    const yes = await post(makeApp(limits, ok).app, d.kind, JSON.stringify(bodyOf({ ...base, maxTokens: n })));
    expect(yes.status, `${message} -> max_tokens ${n}: ${yes.text}`).toBe(200);
    const no = await post(makeApp(limits, ok).app, d.kind, JSON.stringify(bodyOf({ ...base, maxTokens: n + 1 })));
    expect(no.status, `${message} -> max_tokens ${n + 1}`).toBe(400);
  }
  const most = /holds at most (-?\d+) prompt tokens/.exec(message);
  if (most && d.kind === "completion") {
    const n = Number(most[1]);
    expect(n, message).toBeLessThan(promptLength);
    if (n >= 1) {
      const ids = Array.from({ length: n }, (_, i) => i % 100);
      const yes = await post(
        makeApp(limits, ok).app,
        "completion",
        JSON.stringify(bodyOf({ ...base, prompt: { ids }, maxTokens: 1 })),
      );
      expect(
        yes.status,
        `${message} -> a prompt of ${n} tokens, max_tokens 1 (${JSON.stringify(limits)}): ${yes.text}`,
      ).toBe(200);
    }
  }
}

async function checkAnswers(
  app: ReturnType<typeof makeApp>["app"],
  submitted: GenerationRequest[],
  d: Drawn,
  play: Script,
  promptLength: number,
) {
  const whole = await post(app, d.kind, JSON.stringify(bodyOf(d, { stream: false })));
  const streamed = await post(app, d.kind, JSON.stringify(bodyOf(d, { stream: true })));
  const wantUsage = {
    prompt_tokens: promptLength,
    completion_tokens: play.completionTokens,
    total_tokens: promptLength + play.completionTokens,
  };
  const expectedText = play.pieces.join("");
  const object = d.kind === "chat" ? "chat.completion" : "text_completion";
  const gWhole = submitted.at(-2) as GenerationRequest;
  const gStream = submitted.at(-1) as GenerationRequest;

  if (play.end.kind === "error") {
    expect(whole.status).toBe(500);
    expect(expectErrorBody(whole.text).message).toBe(play.end.message);
  } else {
    expect(whole.status).toBe(200);
    const json = JSON.parse(whole.text) as Chunk;
    expect(json.id).toBe(gWhole.id);
    expect(json.object).toBe(object);
    expect(json.choices).toHaveLength(1);
    const choice = json.choices[0] as Choice;
    expect(choice.finish_reason).toBe(play.end.reason);
    expect(d.kind === "chat" ? choice.message?.content : choice.text).toBe(expectedText);
    if (d.kind === "chat") expect(choice.message?.role).toBe("assistant");
    expect(json.usage).toMatchObject(wantUsage);
  }

  expect(streamed.status).toBe(200);
  expect(streamed.type).toContain("text/event-stream");
  const events = parseSse(streamed.text) as Chunk[];
  const chunkObject = d.kind === "chat" ? "chat.completion.chunk" : "text_completion";
  const errorEvents = events.filter((e) => e.error !== undefined);
  const choiceChunks = events.filter((e) => e.error === undefined && e.choices.length > 0);
  const usageChunks = events.filter((e) => e.error === undefined && e.choices.length === 0);
  for (const e of [...choiceChunks, ...usageChunks]) {
    expect(e.id).toBe(gStream.id);
    expect(e.object).toBe(chunkObject);
  }
  const text = choiceChunks
    .map((c) => {
      const ch = c.choices[0] as Choice;
      return d.kind === "chat" ? (ch.delta?.content ?? "") : (ch.text ?? "");
    })
    .join("");
  expect(text).toBe(expectedText);
  if (d.kind === "chat" && choiceChunks.length > 0)
    expect(((choiceChunks[0] as Chunk).choices[0] as Choice).delta?.role).toBe("assistant");
  const finishes = choiceChunks.map((c) => (c.choices[0] as Choice).finish_reason).filter((f) => f !== null);
  if (play.end.kind === "error") {
    expect(errorEvents).toHaveLength(1);
    expect(events.at(-1)).toBe(errorEvents[0]);
    expect(finishes).toHaveLength(0);
    expect(usageChunks).toHaveLength(0);
    return;
  }
  expect(errorEvents).toHaveLength(0);
  expect(finishes).toEqual([play.end.reason]);
  expect(((choiceChunks.at(-1) as Chunk).choices[0] as Choice).finish_reason).toBe(play.end.reason);
  const includeUsage = d.includeUsage === true;
  expect(usageChunks).toHaveLength(includeUsage ? 1 : 0);
  if (includeUsage) {
    expect(events.at(-1)).toBe(usageChunks[0]);
    expect(usageChunks[0]?.usage).toMatchObject(wantUsage);
  } else {
    expect(events.some((e) => e.usage !== undefined)).toBe(false);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The chat template.

describe("chat template", () => {
  it("renders any messages deterministically as `<role>: <content>` lines and `assistant:`", () => {
    const anyMessage: fc.Arbitrary<ChatMessage> = fc.record({
      role: fc.oneof(fc.constantFrom(...roles), fc.string({ unit: "binary", maxLength: 5 })),
      content: fc.oneof(
        fc.string({ unit: "binary", maxLength: 20 }),
        fc.constant(""),
        fc.constant(null),
        fc.array(
          fc.record(
            { type: fc.string({ maxLength: 5 }), text: fc.string({ unit: "grapheme", maxLength: 8 }) },
            { requiredKeys: ["type"] },
          ),
          { maxLength: 3 },
        ),
      ),
    });
    fc.assert(
      fc.property(fc.array(anyMessage, { maxLength: 6 }), (messages) => {
        const copy = structuredClone(messages);
        const out = renderChatPrompt(messages);
        expect(out).toBe(templateModel(messages));
        expect(renderChatPrompt(copy)).toBe(out);
        expect(messages).toEqual(copy);
        expect(out.endsWith("assistant:")).toBe(true);
      }),
      RUN,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The output-length model.

describe("output-length model", () => {
  const modelArb: fc.Arbitrary<OutputLengthModel> = fc.oneof(
    fc
      .record({
        a: fc.double({ min: 0, max: 1, noNaN: true }),
        b: fc.double({ min: 0, max: 1, noNaN: true }),
        seed: fc.integer(),
      })
      .map(({ a, b, seed }) => ({
        kind: "uniform" as const,
        minFraction: Math.min(a, b),
        maxFraction: Math.max(a, b),
        seed,
      })),
    fc.record({
      kind: fc.constant("exponential" as const),
      meanTokens: fc.oneof(fc.double({ min: Number.MIN_VALUE, max: 1e6, noNaN: true }), fc.constantFrom(0.5, 1, 128)),
      seed: fc.integer(),
    }),
    fc.record({ kind: fc.constant("never" as const), seed: fc.integer() }),
  );

  it("gives null or an integer in [1, max_tokens), the same for the same inputs, within the fractions", () => {
    fc.assert(
      fc.property(
        modelArb,
        fc.integer(),
        fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 1_000_000 })),
        (model, requestKey, maxTokens) => {
          const n = eosAfterTokens(model, { requestKey, maxTokens });
          expect(eosAfterTokens(structuredClone(model), { requestKey, maxTokens })).toBe(n);
          if (model.kind === "never") expect(n).toBeNull();
          if (n === null) return;
          expect(Number.isInteger(n)).toBe(true);
          expect(n).toBeGreaterThanOrEqual(1);
          expect(n).toBeLessThan(maxTokens);
          if (model.kind === "uniform") {
            expect(n).toBeGreaterThanOrEqual(Math.max(1, Math.round(maxTokens * model.minFraction)));
            expect(n).toBeLessThanOrEqual(Math.max(1, Math.round(maxTokens * model.maxFraction)));
          }
        },
      ),
      RUN,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The pacer.

describe("pacer", () => {
  beforeEach(() => {
    slept.length = 0;
  });

  const stepArb = fc.oneof(
    fc.record({
      kind: fc.constant("sleep" as const),
      seconds: fc.oneof(
        fc.constant(0),
        fc.double({ min: 0, max: 0.002, noNaN: true }),
        fc.double({ min: 0, max: 5, noNaN: true }),
      ),
      overshootMs: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 100, noNaN: true })),
    }),
    fc.record({ kind: fc.constant("work" as const), ms: fc.double({ min: 0, max: 200, noNaN: true }) }),
    fc.record({ kind: fc.constant("reset" as const) }),
  );

  it("sleeps only for at least 1 ms and never more than asked plus the carry, under any monotonic clock", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.array(stepArb, { maxLength: 30, size: "max" }),
        async (t0, steps) => {
          slept.length = 0;
          let now = t0;
          const pacer = createPacer(() => now);
          for (const s of steps) {
            if (s.kind === "work") now += s.ms;
            else if (s.kind === "reset") pacer.reset();
            else {
              const before = slept.length;
              await pacer.sleep(s.seconds);
              if (slept.length > before) {
                const ms = slept.at(-1) as number;
                expect(Number.isFinite(ms)).toBe(true);
                expect(ms).toBeGreaterThanOrEqual(1);
                expect(ms).toBeLessThan(s.seconds * 1000 + 1 + 1e-6);
                now += ms + s.overshootMs; // a real sleep ends no earlier than asked
              }
            }
          }
        },
      ),
      RUN,
    );
  });

  it("when only its sleeps move the clock, sleeps in all what was asked less a carry in [0, 1) ms", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.array(fc.oneof(fc.double({ min: 0, max: 0.003, noNaN: true }), fc.double({ min: 0, max: 2, noNaN: true })), {
          maxLength: 40,
        }),
        async (t0, seconds) => {
          slept.length = 0;
          let now = t0;
          const pacer = createPacer(() => now);
          for (const s of seconds) {
            const before = slept.length;
            await pacer.sleep(s);
            if (slept.length > before) now += slept.at(-1) as number;
          }
          const asked = seconds.reduce((a, s) => a + s * 1000, 0);
          const total = slept.reduce((a, b) => a + b, 0);
          const carry = asked - total;
          expect(carry).toBeGreaterThanOrEqual(-1e-6);
          expect(carry).toBeLessThan(1 + 1e-6);
        },
      ),
      RUN,
    );
  });
});

describe("engine requests: the refusal's stated prompt limit (minimal counterexample)", () => {
  it("with page size 16 and max-total-tokens 64, a prompt within the stated 'at most N prompt tokens' is served", async () => {
    const limits: RequestLimits = { servedModelName: MODEL, maxTotalTokens: 64, contextLength: 64, pageSize: 16 };
    const ok: Script = { pieces: [], end: { kind: "finish", reason: "length" }, completionTokens: 0, cachedTokens: 0 };
    const ask = (n: number) =>
      post(
        makeApp(limits, ok).app,
        "completion",
        JSON.stringify({ model: MODEL, prompt: Array.from({ length: n }, () => 7), max_tokens: 1 }),
      );
    const refused = await ask(50);
    expect(refused.status).toBe(400);
    const stated = Number(/holds at most (\d+) prompt tokens/.exec(refused.text)?.[1]);
    expect(stated).toBeLessThan(50);
    expect((await ask(stated)).status).toBe(200);
  });
});
