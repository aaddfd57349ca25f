import fc from "fast-check";
import cl100k from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it } from "vitest";
import { createEngineLoop } from "../../../src/engine/engine-loop";
import type { EngineCore } from "../../../src/engine/generation";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics } from "../../../src/engine/metrics";
import { createEngineApp } from "../../../src/engine/server";
import { StopMatcher } from "../../../src/engine/stop-matcher";
import { tokenizer } from "../../../src/engine/tokenizer";
import type { DecodeBatch, PrefillBatch } from "../../../src/scheduler/index";
import { propertyRuns } from "../../support/property-runs";

/**
 * Stop strings, from the documentation rather than the code: OpenAI's `stop` ("up to 4 sequences where the API will
 * stop generating further tokens; the returned text will not contain the stop sequence"), `GenerationRequest.stop`
 * ("the output ends before the first occurrence (excluded from the text)"), `FinishReason` ("`stop` (EOS or a stop
 * string) or `length` (max_tokens)") and the StopMatcher JSDoc ("holds back the tail that could still become a stop
 * string, so a stream never emits text that the final answer would cut off"; `flush` releases the held-back text
 * when the request ends for another reason).
 *
 * The model: generation halts as soon as the text so far contains a stop string (empty strings are no stop); the
 * answer is that text up to the earliest occurrence of any stop in it. With one stop (or stops of one length) this
 * is the earliest occurrence in the whole text, however the text was split. With stops of different lengths, where
 * the text was split matters, as it does for a model that generates token by token: with stops "abcd" and "bc", "abc"
 * then "d" halts after "abc" (answer "a"), while "abcd" at once holds both (answer "").
 *
 * Held, StopMatcher alone (text of a small alphabet with multi-byte and astral characters, stops of up to 4 code
 * points drawn from it or cut out of the text, including "" and repeats, the text split at any code points, "" pieces
 * included):
 * - complete: the pushes (and the flush, when no stop came) join to the model's answer, and `stopped` first turns
 *   true at the piece where the model halts, stays true, and nothing comes out after it;
 * - never retracted: after every push the text out so far is a prefix of the answer (so no stop is ever streamed);
 * - prompt: after every push that did not stop, what is held back is exactly the longest tail of the text that is
 *   the beginning (a proper prefix) of some stop - nothing that cannot become a stop waits;
 * - one stop, or stops of one length: the answer is the text before the earliest occurrence in the whole text,
 *   for every split; the whole text in one push gives that for any stops; no stops: every push passes through.
 *
 * Held, end to end (the engine loop with the real scheduler, a scripted GPU playing a token sequence, the HTTP app
 * on /v1/completions and /v1/chat/completions, streamed and not, the two requests in the same batches): tokens of
 * valid text as cl100k encodes it or one byte per token (so characters split over tokens, where the incremental
 * decoder holds a cut character back), end-of-text tokens with and without ignore_eos, any max_tokens. Both answers
 * equal the model run over what the decoder can release after each token: the text, `finish_reason` ("stop" for a
 * stop string or EOS, "length" for max_tokens) and `completion_tokens`; the stream's chunks join to the JSON answer.
 * (A stop completed by a token that ends inside a character is seen once the character is whole, one token later,
 * or in the held-back text at the end - where it still cuts the text and makes the finish reason "stop".)
 */

const runs = propertyRuns(300, 20261206);

// ---------------------------------------------------------------------------------------------------------------
// The model.

/** Where the earliest occurrence of any (non-empty) stop starts in `text`, or -1. */
function earliestStop(text: string, stops: readonly string[]): number {
  let cut = -1;
  for (const stop of stops) {
    if (stop === "") continue;
    const at = text.indexOf(stop);
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  return cut;
}

/** The answer for text that arrives in `pieces`: halt at the first piece after which the text holds a stop. */
function model(pieces: readonly string[], stops: readonly string[]): { text: string; haltedAt: number | null } {
  let text = "";
  for (let i = 0; i < pieces.length; i++) {
    text += pieces[i];
    const cut = earliestStop(text, stops);
    if (cut >= 0) return { text: text.slice(0, cut), haltedAt: i };
  }
  return { text, haltedAt: null };
}

/** The longest tail of `text` that is a proper prefix of some stop (what may still become a stop). */
function possibleStopTail(text: string, stops: readonly string[]): string {
  let best = "";
  for (const stop of stops)
    for (let k = 1; k < stop.length && k <= text.length; k++)
      if (k > best.length && text.endsWith(stop.slice(0, k))) best = stop.slice(0, k);
  return best;
}

// ---------------------------------------------------------------------------------------------------------------
// StopMatcher alone.

const unit = fc.constantFrom("a", "b", "a", "b", "c", "\n", "é", "日", "🎉");
const join = (cs: readonly string[]) => cs.join("");

interface Case {
  text: string;
  pieces: string[];
  stops: string[];
}

/** Stops of up to 4 code points: from the alphabet, or cut out of the text (so they occur). */
const stopsFor = (chars: readonly string[]) =>
  fc.array(
    fc.oneof(
      fc.array(unit, { maxLength: 4 }).map(join),
      fc
        .tuple(fc.nat(Math.max(0, chars.length - 1)), fc.integer({ min: 1, max: 4 }))
        .map(([from, n]) => join(chars.slice(from, from + n))),
    ),
    { maxLength: 4 },
  );

const splitAt = (chars: readonly string[], cuts: readonly number[]) => {
  const at = [0, ...[...cuts].sort((a, b) => a - b), chars.length];
  return at.slice(1).map((end, i) => join(chars.slice(at[i], end)));
};

const caseWith = (stops: (chars: readonly string[]) => fc.Arbitrary<string[]>): fc.Arbitrary<Case> =>
  fc
    .array(unit, { maxLength: 20 })
    .chain((chars) =>
      fc
        .record({ stops: stops(chars), cuts: fc.array(fc.nat(chars.length), { maxLength: 8 }) })
        .map(({ stops, cuts }) => ({ text: join(chars), pieces: splitAt(chars, cuts), stops })),
    );

const anyCase = caseWith(stopsFor);

interface Pushed {
  outs: { text: string; stopped: boolean }[];
  flushed: string;
  /** Everything the matcher let out, flush included. */
  all: string;
  violations: string[];
}

/** Feeds the pieces in order, checking after every push what must hold there. */
function feed({ pieces, stops }: Case): Pushed {
  const expected = model(pieces, stops);
  const m = new StopMatcher(stops);
  const outs: Pushed["outs"] = [];
  const violations: string[] = [];
  let text = "";
  let out = "";
  pieces.forEach((piece, i) => {
    text += piece;
    const r = m.push(piece);
    outs.push(r);
    out += r.text;
    const where = `after piece ${i} (${JSON.stringify(piece)})`;
    if (!expected.text.startsWith(out))
      violations.push(`${where}: out ${JSON.stringify(out)} is not a prefix of ${JSON.stringify(expected.text)}`);
    const halted = expected.haltedAt !== null && i >= expected.haltedAt;
    if (r.stopped !== halted) violations.push(`${where}: stopped ${r.stopped}, the model ${halted}`);
    if (expected.haltedAt !== null && i > expected.haltedAt && r.text !== "")
      violations.push(`${where}: ${JSON.stringify(r.text)} after the stop`);
    if (!r.stopped) {
      const held = possibleStopTail(text, stops);
      if (out + held !== text)
        violations.push(
          `${where}: out ${JSON.stringify(out)} of ${JSON.stringify(text)}, should hold only ${JSON.stringify(held)}`,
        );
    }
  });
  const flushed = m.flush();
  if (expected.haltedAt !== null && flushed !== "") violations.push(`flush after the stop: ${JSON.stringify(flushed)}`);
  return { outs, flushed, all: out + flushed, violations };
}

describe("StopMatcher against the model", () => {
  it("emits the model's answer, never text it would cut, and holds back only what may become a stop", () => {
    fc.assert(
      fc.property(anyCase, (c) => {
        const r = feed(c);
        expect(r.violations).toEqual([]);
        expect(r.all).toBe(model(c.pieces, c.stops).text);
      }),
      runs,
    );
  });

  it("one stop, or stops of one length: the text before the earliest occurrence, for every split", () => {
    const sameLength = (chars: readonly string[]) =>
      fc
        .tuple(fc.integer({ min: 1, max: 4 }), fc.array(fc.nat(Math.max(0, chars.length - 1)), { maxLength: 4 }))
        .chain(([n, froms]) =>
          fc
            .array(fc.array(unit, { minLength: n, maxLength: n }).map(join), { maxLength: 4 - froms.length })
            .map((drawn) => [
              ...froms.map((from) => join(chars.slice(from, from + n))).filter((s) => [...s].length === n),
              ...drawn,
            ]),
        );
    fc.assert(
      fc.property(caseWith(sameLength), (c) => {
        const cut = earliestStop(c.text, c.stops);
        expect(feed(c).all).toBe(cut < 0 ? c.text : c.text.slice(0, cut));
      }),
      runs,
    );
  });

  it("the whole text in one push: the text before the earliest occurrence of any stop", () => {
    fc.assert(
      fc.property(anyCase, ({ text, stops }) => {
        const cut = earliestStop(text, stops);
        const r = feed({ text, pieces: [text], stops });
        expect(r.violations).toEqual([]);
        expect(r.all).toBe(cut < 0 ? text : text.slice(0, cut));
        expect(r.outs[0]?.stopped).toBe(cut >= 0);
      }),
      runs,
    );
  });

  it("no stops (none, or only empty strings): every push comes straight out", () => {
    fc.assert(
      fc.property(anyCase, fc.array(fc.constant(""), { maxLength: 4 }), ({ pieces }, stops) => {
        const m = new StopMatcher(stops);
        for (const piece of pieces) expect(m.push(piece)).toEqual({ text: piece, stopped: false });
        expect(m.flush()).toBe("");
      }),
      runs,
    );
  });

  it("examples: overlapping stops, a stop at the start or the end, a stop split over pieces", () => {
    const pushAll = (stops: string[], pieces: string[]) => feed({ text: pieces.join(""), pieces, stops }).all;
    expect(pushAll(["abcd", "bc"], ["abc", "d"])).toBe("a"); // "bc" came first: the generation halted there
    expect(pushAll(["abcd", "bc"], ["abcd"])).toBe(""); // both at once: the earliest occurrence
    expect(pushAll(["ab"], ["a", "b", "c"])).toBe("");
    expect(pushAll(["c"], ["a", "b", "c"])).toBe("ab");
    expect(pushAll(["🎉"], ["x\uD83C", "\uDF89y"])).toBe("x"); // a pair cut by the pieces (the decoder never does)
    expect(pushAll(["aa"], ["a", "a", "a"])).toBe("");
    expect(pushAll(["ab", "b"], ["a", "b"])).toBe(""); // both complete with "b": the earliest occurrence
    expect(pushAll(["b", "ab"], ["a", "b"])).toBe(""); // whatever their order in the list
    expect(pushAll(["x"], ["a", "b"])).toBe("ab");
  });
});

// ---------------------------------------------------------------------------------------------------------------
// End to end: engine loop, scheduler, decoder, HTTP app.

const EOS = tokenizer.eosTokenId;
const utf8 = new TextEncoder();
/** Each token's bytes, read as the engine's tokenizer reads them (a lone byte decodes to U+FFFD, so not via decode). */
const bpe = (
  cl100k as unknown as {
    bytePairEncodingCoreProcessor: { tryDecodeToken(token: number): string | Uint8Array | undefined };
  }
).bytePairEncodingCoreProcessor;
/** The id of each single-byte token, by byte. */
const byteToken = new Map<number, number>();
for (let id = 0; id < tokenizer.vocabSize && byteToken.size < 256; id++) {
  let piece: string | Uint8Array | undefined;
  try {
    piece = bpe.tryDecodeToken(id);
  } catch {
    piece = undefined;
  }
  if (piece === undefined) continue;
  const bytes = typeof piece === "string" ? utf8.encode(piece) : piece;
  if (bytes.length === 1 && !byteToken.has(bytes[0] as number)) byteToken.set(bytes[0] as number, id);
}
const byteTokens = (s: string): number[] => [...utf8.encode(s)].map((b) => byteToken.get(b) as number);

/** Valid text: cl100k puts " 🎉" and " 日" in tokens that end inside the character. */
const word = fc.constantFrom("a", "b", " ", "\n", ".", "é", "日", "本", "🎉", " 🎉", " 日", "x 日", "ab ");
const segment: fc.Arbitrary<number[]> = fc.oneof(
  { weight: 4, arbitrary: fc.array(word, { minLength: 1, maxLength: 4 }).map((ws) => tokenizer.encode(join(ws))) },
  { weight: 2, arbitrary: fc.array(word, { minLength: 1, maxLength: 3 }).map((ws) => byteTokens(join(ws))) },
  { weight: 1, arbitrary: fc.constant(EOS).map((id) => [id]) },
);

interface Generation {
  /** What the GPU samples at output position k: `script[k % script.length]`. */
  script: number[];
  maxTokens: number;
  ignoreEos: boolean;
  stops: string[];
  endpoint: "completion" | "chat";
}

const generation: fc.Arbitrary<Generation> = fc
  .record({
    script: fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => s.flat()),
    // Small max_tokens often, so the cap lands on tokens that end inside a character.
    maxTokens: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 24 })),
    ignoreEos: fc.boolean(),
    endpoint: fc.constantFrom("completion" as const, "chat" as const),
    stopPicks: fc.array(fc.tuple(fc.nat(), fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 3 }))), { maxLength: 4 }),
    drawn: fc.array(fc.array(word, { maxLength: 2 }).map(join), { maxLength: 2 }),
  })
  .map(({ script, stopPicks, drawn, ...rest }) => {
    // Stops cut out of the text the script plays (so they occur), then drawn ones, at most 4 in all.
    const played = [...tokenizer.decode(script.filter((t) => t !== EOS)).replaceAll("\uFFFD", "")];
    const picked =
      played.length === 0
        ? []
        : stopPicks.map(([from, n]) => join(played.slice(from % played.length, (from % played.length) + n)));
    return { ...rest, script, stops: [...picked, ...drawn].slice(0, 4) };
  });

/** The model over tokens: after each token, the text the decoder can release (all of it unless a character is cut). */
function modelAnswer(g: Generation): { text: string; finish: "stop" | "length"; tokens: number } {
  const kept: number[] = [];
  let released = "";
  const end = (finish: "stop" | "length", tokens: number) => {
    const text = tokenizer.decode(kept); // at the end, a cut character comes out as U+FFFD
    const cut = earliestStop(text, g.stops);
    return cut < 0 ? { text, finish, tokens } : { text: text.slice(0, cut), finish: "stop" as const, tokens };
  };
  for (let k = 0; k < g.maxTokens; k++) {
    const id = g.script[k % g.script.length] as number;
    if (id === EOS) {
      if (!g.ignoreEos) return end("stop", k + 1);
      continue; // generated and counted, but not text
    }
    kept.push(id);
    const soFar = tokenizer.decode(kept);
    if (!soFar.endsWith("\uFFFD")) released = soFar;
    const cut = earliestStop(released, g.stops);
    if (cut >= 0) return { text: released.slice(0, cut), finish: "stop", tokens: k + 1 };
  }
  return end("length", g.maxTokens);
}

/** A GPU that samples `script[position % length]` for every request (deterministic, no time). */
function scriptedEngine(script: readonly number[]) {
  const next = (r: { outputTokenIds: readonly number[] }) => script[r.outputTokenIds.length % script.length] as number;
  return {
    prefill: async (batch: PrefillBatch) => batch.entries.map((e) => next(e.request)),
    decode: async (batch: DecodeBatch) => batch.requests.map(next),
    release: () => {},
  };
}

const MODEL = "demo-model";
const metrics = createEngineMetrics(MODEL);
const quiet = createLogger("critical", () => {});

interface Answer {
  text: string;
  finish: unknown;
  completionTokens: unknown;
  /** Streamed: each chunk's text. */
  chunks?: string[];
}

async function ask(app: ReturnType<typeof createEngineApp>, g: Generation, stream: boolean): Promise<Answer> {
  const common = {
    model: MODEL,
    max_tokens: g.maxTokens,
    ignore_eos: g.ignoreEos,
    stop: g.stops.length === 1 ? g.stops[0] : g.stops,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  };
  const body =
    g.endpoint === "chat"
      ? { ...common, messages: [{ role: "user", content: "hi" }] }
      : { ...common, prompt: [15339, 1917] };
  const res = await app.request(g.endpoint === "chat" ? "/v1/chat/completions" : "/v1/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const raw = await res.text();
  expect(res.status, raw).toBe(200);
  type Choice = { text?: string; message?: { content: string }; delta?: { content?: string }; finish_reason: unknown };
  type Body = { choices: Choice[]; usage?: { completion_tokens: number } };
  if (!stream) {
    const json = JSON.parse(raw) as Body;
    const c = json.choices[0] as Choice;
    return {
      text: c.text ?? c.message?.content ?? "",
      finish: c.finish_reason,
      completionTokens: json.usage?.completion_tokens,
    };
  }
  const events = raw.split("\n\n").filter((e) => e !== "");
  expect(events.at(-1)).toBe("data: [DONE]");
  const chunks: string[] = [];
  let finish: unknown = null;
  let completionTokens: unknown;
  for (const e of events.slice(0, -1)) {
    const json = JSON.parse(e.slice("data: ".length)) as Body;
    if (json.usage) completionTokens = json.usage.completion_tokens;
    const c = json.choices[0];
    if (!c) continue;
    const piece = c.text ?? c.delta?.content ?? "";
    if (piece !== "") chunks.push(piece);
    if (c.finish_reason !== null) finish = c.finish_reason;
  }
  return { text: chunks.join(""), finish, completionTokens, chunks };
}

async function serve(g: Generation): Promise<{ streamed: Answer; json: Answer }> {
  const core: EngineCore = createEngineLoop({
    scheduler: { maxTotalTokens: 4096 },
    engine: scriptedEngine(g.script),
    tokenizer,
    metrics,
    logger: quiet,
    now: () => 0,
  });
  const app = createEngineApp({
    name: "engine-test",
    core,
    tokenizer,
    limits: { servedModelName: MODEL, maxTotalTokens: 4096, contextLength: 4096, pageSize: 1 },
    metrics,
    logger: quiet,
    maxBodyBytes: 1 << 20,
    accessLog: false,
  });
  try {
    // Both at once: they share the engine's batches.
    const [streamed, json] = await Promise.all([ask(app, g, true), ask(app, g, false)]);
    return { streamed, json };
  } finally {
    await core.close();
  }
}

describe("stop strings end to end (engine loop, decoder, HTTP app)", () => {
  it("streamed and JSON answers are the model's: text, finish_reason and completion_tokens", async () => {
    await fc.assert(
      fc.asyncProperty(generation, async (g) => {
        const want = modelAnswer(g);
        const { streamed, json } = await serve(g);
        expect(json).toEqual({ text: want.text, finish: want.finish, completionTokens: want.tokens });
        expect({ ...streamed, chunks: undefined }).toEqual({ ...json, chunks: undefined });
      }),
      runs,
    );
  });

  it("regression: a stop string in the text a cut character held back until max_tokens ends with finish_reason stop", async () => {
    // " 🎉" is one token for " " and the emoji's first bytes: the decoder releases " " only at the end.
    const script = tokenizer.encode("x 🎉 y");
    expect(tokenizer.decode(script.slice(0, 2))).toBe("x \uFFFD");
    for (const endpoint of ["completion", "chat"] as const) {
      const { streamed, json } = await serve({ script, maxTokens: 2, ignoreEos: false, stops: [" "], endpoint });
      expect(json).toEqual({ text: "x", finish: "stop", completionTokens: 2 });
      expect(streamed).toEqual({ ...json, chunks: ["x"] });
    }
  });
});
