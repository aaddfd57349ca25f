import { randomUUID } from "node:crypto";
import { renderChatPrompt } from "./chat-template";
import type { GenerationRequest } from "./generation";
import { ApiError, modelNotFound } from "./openai-error";
import type { ChatRequestBody, CompletionRequestBody } from "./request-schema";
import type { Tokenizer } from "./tokenizer";

/** The limits a request is checked against (from the engine's options). */
export interface RequestLimits {
  servedModelName: string;
  maxTotalTokens: number;
  /** The longest prompt + max_tokens accepted. */
  contextLength: number;
  pageSize: number;
}

/**
 * Default max_tokens when a request gives none: OpenAI's 16 for completions; for chat, at most 128 (SGLang's
 * `max_new_tokens` default), fewer when the prompt leaves fewer.
 */
export const DEFAULT_MAX_TOKENS = { completion: 16, chat: 128 } as const;

/**
 * Turns a validated completions or chat body into a {@link GenerationRequest}: checks the model,
 * tokenizes (chat through {@link renderChatPrompt}), and rejects what the pool could never serve.
 *
 * A request is accepted only if `pages(prompt) + max_tokens < maxTotalTokens` and
 * `prompt + max_tokens <= contextLength`: admission needs strictly less than the whole pool, and an
 * ignore_eos request that cannot finish inside the pool would end in an out-of-memory abort.
 *
 * @example
 * ```ts
 * const gen = prepareGeneration({ kind: "completion", body }, tokenizer, limits);
 * ```
 */
export function prepareGeneration(
  input: { kind: "completion"; body: CompletionRequestBody } | { kind: "chat"; body: ChatRequestBody },
  tokenizer: Tokenizer,
  limits: RequestLimits,
): GenerationRequest {
  const { body } = input;
  if (body.model !== limits.servedModelName) throw modelNotFound(body.model, limits.servedModelName);
  let promptTokens: number[];
  let promptParam: string;
  let maxTokens: number;
  // A chat request that sets no limit asks for what its prompt leaves, as OpenAI, vLLM and SGLang read it: capped by
  // the default below, never refused for it (completions keep OpenAI's and vLLM's default of 16, refused past it).
  let chatDefault = false;
  if (input.kind === "completion") {
    promptParam = "prompt";
    const prompt = input.body.prompt;
    const single =
      Array.isArray(prompt) && (typeof prompt[0] === "string" || Array.isArray(prompt[0])) ? prompt[0] : prompt;
    if (typeof single === "string") promptTokens = tokenizer.encode(single);
    else {
      promptTokens = single as number[];
      const bad = promptTokens.find((id) => id < 0 || id >= tokenizer.vocabSize);
      if (bad !== undefined)
        throw new ApiError(400, `prompt: token id ${bad} is outside the vocabulary [0, ${tokenizer.vocabSize})`, {
          param: "prompt",
          code: "invalid_value",
        });
    }
    maxTokens = input.body.max_tokens ?? DEFAULT_MAX_TOKENS.completion;
  } else {
    promptParam = "messages";
    promptTokens = tokenizer.encode(renderChatPrompt(input.body.messages));
    const asked = input.body.max_completion_tokens ?? input.body.max_tokens;
    chatDefault = asked == null;
    maxTokens = asked ?? DEFAULT_MAX_TOKENS.chat;
  }
  if (promptTokens.length === 0)
    throw new ApiError(400, `${promptParam}: the prompt is empty`, { param: promptParam, code: "invalid_value" });
  // The pool counts the prompt in whole pages (admission does); the context length counts tokens (SGLang's check).
  const promptPages = Math.ceil(promptTokens.length / limits.pageSize) * limits.pageSize;
  const poolLimit = limits.maxTotalTokens - 1;
  // The longest prompt that leaves room for one output token (the limit stated to a client that trims its prompt to
  // it must hold): whole pages under the pool's limit, tokens under the context length.
  const maxPrompt = Math.min(Math.floor((poolLimit - 1) / limits.pageSize) * limits.pageSize, limits.contextLength - 1);
  if (promptTokens.length > maxPrompt)
    throw new ApiError(
      400,
      `${promptParam}: the prompt has ${promptTokens.length} tokens; this server holds at most ${maxPrompt} prompt tokens plus max_tokens (max-total-tokens ${limits.maxTotalTokens}, context length ${limits.contextLength}, page size ${limits.pageSize})`,
      { param: promptParam, code: "context_length_exceeded" },
    );
  const maxOutput = Math.min(poolLimit - promptPages, limits.contextLength - promptTokens.length);
  // At least 1: the prompt check above leaves room for one output token.
  if (chatDefault) maxTokens = Math.min(maxTokens, maxOutput);
  // Named as the client sent it: a client that sent only max_completion_tokens was told about "max_tokens".
  const maxParam =
    input.kind === "chat" && input.body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens";
  if (maxTokens > maxOutput)
    throw new ApiError(
      400,
      `${maxParam}: ${maxTokens} plus the prompt's ${promptTokens.length} tokens exceeds what this server can hold for one request (max-total-tokens ${limits.maxTotalTokens} in pages of ${limits.pageSize}, context length ${limits.contextLength}); ask for at most ${maxOutput}`,
      { param: maxParam, code: "context_length_exceeded" },
    );
  const stop = body.stop == null ? [] : typeof body.stop === "string" ? [body.stop] : body.stop;
  return {
    id: `${input.kind === "chat" ? "chatcmpl" : "cmpl"}-${randomUUID().replaceAll("-", "")}`,
    promptTokens,
    maxTokens,
    ignoreEos: body.ignore_eos ?? false,
    stop,
  };
}
