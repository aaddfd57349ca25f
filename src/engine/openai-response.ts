import type { FinishReason, GenerationUsage } from "./generation";

/** Which OpenAI endpoint a response belongs to. */
export type Endpoint = "completion" | "chat";

const usageBody = (u: GenerationUsage) => ({
  prompt_tokens: u.promptTokens,
  completion_tokens: u.completionTokens,
  total_tokens: u.promptTokens + u.completionTokens,
  prompt_tokens_details: { cached_tokens: u.cachedTokens },
});

/** Fields every response and chunk of one request shares. */
export interface ResponseContext {
  endpoint: Endpoint;
  id: string;
  created: number;
  model: string;
  /** The replica's name, an extension field the edge's tests read. */
  servedBy: string;
}

/**
 * The non-streaming body: `text_completion` or `chat.completion`.
 *
 * @example
 * ```ts
 * completionBody(ctx, "hello", "length", { promptTokens: 3, completionTokens: 1, cachedTokens: 0 });
 * ```
 */
export function completionBody(ctx: ResponseContext, text: string, finish: FinishReason, usage: GenerationUsage) {
  const common = { id: ctx.id, created: ctx.created, model: ctx.model, served_by: ctx.servedBy };
  if (ctx.endpoint === "completion")
    return {
      ...common,
      object: "text_completion",
      choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
      usage: usageBody(usage),
    };
  return {
    ...common,
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: text }, logprobs: null, finish_reason: finish }],
    usage: usageBody(usage),
  };
}

/**
 * One streaming chunk: text (and the finish reason on the last content chunk). For chat, `role` opens
 * the first chunk, as OpenAI does.
 *
 * @example
 * ```ts
 * sseEvent(chunkBody(ctx, { text: "hi", finish: null })); // 'data: {"id":...}\n\n'
 * ```
 */
export function chunkBody(ctx: ResponseContext, part: { text: string; finish: FinishReason | null; role?: boolean }) {
  const common = { id: ctx.id, created: ctx.created, model: ctx.model };
  if (ctx.endpoint === "completion")
    return {
      ...common,
      object: "text_completion",
      choices: [{ index: 0, text: part.text, logprobs: null, finish_reason: part.finish }],
    };
  const delta: { role?: string; content?: string } = part.role ? { role: "assistant", content: part.text } : {};
  if (!part.role && (part.text !== "" || part.finish === null)) delta.content = part.text;
  return {
    ...common,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: part.finish }],
  };
}

/** The final usage chunk of a stream with `stream_options.include_usage` (empty `choices`). */
export function usageChunkBody(ctx: ResponseContext, usage: GenerationUsage) {
  return {
    id: ctx.id,
    created: ctx.created,
    model: ctx.model,
    object: ctx.endpoint === "completion" ? "text_completion" : "chat.completion.chunk",
    choices: [],
    usage: usageBody(usage),
  };
}

/** Frames a JSON value (or the literal `[DONE]`) as one server-sent event. */
export function sseEvent(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}
