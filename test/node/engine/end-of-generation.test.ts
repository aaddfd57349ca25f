import cl100k from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it } from "vitest";
import { createEngineLoop } from "../../../src/engine/engine-loop";
import { createLlamaTokenizer } from "../../../src/engine/llama/llama-tokenizer";
import type { LlamaModel } from "../../../src/engine/llama/node-llama-cpp";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics } from "../../../src/engine/metrics";
import { createEngineApp } from "../../../src/engine/server";
import { tokenizer as cl100kTokenizer, type Tokenizer } from "../../../src/engine/tokenizer";
import type { DecodeBatch, PrefillBatch } from "../../../src/scheduler/index";

// A chat model ends its turn with an end-of-generation token that is not its EOS (Llama 3's <|eot_id|>, ChatML's
// <|im_end|>). The engine must stop there, as it stops on EOS: finish_reason "stop", the token's text not in the
// answer; with ignore_eos it goes on, as past EOS.

const MODEL = "demo-model";
const quiet = createLogger("critical", () => {});
/** Any id that is not cl100k's EOS stands for the model's end of turn. */
const END_OF_TURN = cl100k.encode("<|endofprompt|>", { allowedSpecial: "all" })[0] as number;
const chatModelTokenizer: Tokenizer = { ...cl100kTokenizer, isEndOfGeneration: (t) => t === END_OF_TURN };

/** A GPU that answers "Hello", ends its turn, then rambles on ("User: hi") if let. */
const SCRIPT = [...cl100k.encode("Hello"), END_OF_TURN, ...cl100k.encode(" User: hi again and again")];
function scriptedEngine() {
  const next = (r: { outputTokenIds: readonly number[] }) =>
    SCRIPT[Math.min(r.outputTokenIds.length, SCRIPT.length - 1)] as number;
  return {
    prefill: async (batch: PrefillBatch) => batch.entries.map((e) => next(e.request)),
    decode: async (batch: DecodeBatch) => batch.requests.map(next),
    release: () => {},
  };
}

async function complete(tokenizer: Tokenizer, extra: Record<string, unknown>) {
  const metrics = createEngineMetrics(MODEL);
  const core = createEngineLoop({
    scheduler: { maxTotalTokens: 4096 },
    engine: scriptedEngine(),
    tokenizer,
    metrics,
    logger: quiet,
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
    const res = await app.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 8, ...extra }),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as {
      choices: { message: { content: string }; finish_reason: string }[];
      usage: { completion_tokens: number };
    };
    const choice = json.choices[0];
    return { text: choice?.message.content, finish: choice?.finish_reason, tokens: json.usage.completion_tokens };
  } finally {
    await core.close();
  }
}

describe("end-of-generation tokens other than EOS", () => {
  it("end the answer like EOS: finish_reason stop, the token's text left out", async () => {
    const answer = await complete(chatModelTokenizer, {});
    expect(answer).toMatchObject({ text: "Hello", finish: "stop" });
    // The end-of-turn token was sampled: it counts as EOS does (one token after "Hello").
    expect(answer.tokens).toBe(cl100k.encode("Hello").length + 1);
  });

  it("are passed over with ignore_eos, as EOS is, and never appear as text", async () => {
    const answer = await complete(chatModelTokenizer, { ignore_eos: true });
    expect(answer.finish).toBe("length");
    expect(answer.tokens).toBe(8);
    expect(answer.text).toBe(cl100k.decode(SCRIPT.slice(0, 8).filter((t) => t !== END_OF_TURN)));
  });

  it("mean nothing to a tokenizer that declares none", async () => {
    const answer = await complete(cl100kTokenizer, {});
    expect(answer.finish).toBe("length");
    expect(answer.text).toContain("Hello");
    expect(answer.text).toContain(" User");
  });

  it("are the llama model's own (node-llama-cpp's isEogToken)", () => {
    const model = {
      tokens: { bos: 1, eos: 2, shouldPrependBosToken: false },
      isEogToken: (token: number | undefined) => token === 2 || token === 7,
      tokenize: () => [5],
      detokenize: () => "",
    } as unknown as LlamaModel;
    const tokenizer = createLlamaTokenizer(model, 32);
    expect(tokenizer.eosTokenId).toBe(2);
    expect([2, 7, 5].map((t) => tokenizer.isEndOfGeneration?.(t))).toEqual([true, true, false]);
  });
});
