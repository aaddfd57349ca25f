import { z } from "zod";
import { ApiError } from "./openai-error";

const stop = z.union([z.string(), z.array(z.string()).max(4)]).nullish();
const maxTokens = z.int().min(1).nullish();
const streamOptions = z.object({ include_usage: z.boolean().nullish() }).nullish();
const n = z.literal(1, { message: "only n = 1 is supported" }).nullish();

const textPart = z.object({ type: z.string(), text: z.string().optional() });
const chatMessage = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(textPart), z.null()]),
  name: z.string().optional(),
});

/** `POST /v1/completions` body (fields the engine uses; others are accepted and ignored). */
export const completionRequestSchema = z.object({
  model: z.string(),
  prompt: z.union(
    [z.string(), z.array(z.string()).length(1), z.array(z.int()).min(1), z.array(z.array(z.int()).min(1)).length(1)],
    {
      error:
        "must be a string, a list of token ids, or a list holding one of those (batched prompts are not supported)",
    },
  ),
  max_tokens: maxTokens,
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  ignore_eos: z.boolean().nullish(),
  stop,
  n,
});

/** `POST /v1/chat/completions` body (fields the engine uses; others are accepted and ignored). */
export const chatRequestSchema = z.object({
  model: z.string(),
  messages: z.array(chatMessage).min(1),
  max_tokens: maxTokens,
  max_completion_tokens: maxTokens,
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  ignore_eos: z.boolean().nullish(),
  stop,
  n,
});

export type CompletionRequestBody = z.infer<typeof completionRequestSchema>;
export type ChatRequestBody = z.infer<typeof chatRequestSchema>;

/**
 * Parses a body with a schema, turning the first issue into a 400 {@link ApiError} whose `param` names
 * the offending field (OpenAI's convention).
 *
 * @example
 * ```ts
 * const body = parseBody(chatRequestSchema, await c.req.json());
 * ```
 */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ApiError(400, "request body must be a JSON object", { code: "invalid_body" });
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.join(".") : null;
  const message = issue ? `${param ?? "body"}: ${issue.message}` : "invalid request body";
  throw new ApiError(400, message, { param, code: "invalid_value" });
}
