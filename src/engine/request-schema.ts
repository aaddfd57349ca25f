import { z } from "zod";
import { ApiError } from "./openai-error";

const stop = z
  .union([z.string(), z.array(z.string()).max(4)], { error: "must be a string or a list of at most 4 strings" })
  .nullish();
const maxTokens = z.int().min(1).nullish();
const streamOptions = z.object({ include_usage: z.boolean().nullish() }).nullish();
const n = z.literal(1, { message: "only n = 1 is supported" }).nullish();

/**
 * A parameter the engine cannot honour, accepted only at a value that asks for nothing (OpenAI's default or its
 * equivalent): otherwise a client that asked for log probabilities, JSON output or tool calls would get an answer
 * without them and no word why.
 */
const onlyWhen = (asksNothing: (value: unknown) => boolean, what: string) =>
  z
    .unknown()
    .refine((value) => value == null || asksNothing(value), { message: `${what} not supported by this server` })
    .optional();
const emptyList = (value: unknown) => Array.isArray(value) && value.length === 0;
const noToolChoice = (value: unknown) => value === "none" || value === "auto";

/**
 * Sampling knobs the simulated engine ignores (its text is deterministic), checked against OpenAI's ranges so a
 * request that OpenAI would refuse is refused here too.
 */
const ignoredSampling = {
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  seed: z.int().nullish(),
  user: z.string().nullish(),
};

/** OpenAI refuses `stream_options` on a request that does not stream (it would promise a usage chunk never sent). */
const streamOptionsNeedStream = [
  (body: { stream?: boolean | null; stream_options?: unknown }) => body.stream_options == null || body.stream === true,
  { message: "only allowed when stream is true", path: ["stream_options"] },
] satisfies [unknown, { message: string; path: string[] }];

const textPart = z.object({ type: z.literal("text"), text: z.string() });
// Every role of openai-node's `ChatCompletionMessageParam`: `function` (deprecated, the history of a function call,
// as `tool` is of a tool call) included.
const chatMessage = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: z.union([z.string(), z.array(textPart), z.null()], {
    error: "must be a string, null, or a list of text parts; other parts (images, audio, files) are not supported",
  }),
  name: z.string().optional(),
});

/**
 * `POST /v1/completions` body: the fields the engine uses, the sampling knobs it ignores (range-checked), and the
 * features it lacks (refused unless off); any other field is accepted and ignored.
 */
export const completionRequestSchema = z
  .object({
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
    ...ignoredSampling,
    logprobs: onlyWhen(() => false, "logprobs are"),
    echo: onlyWhen((v) => v === false, "echo is"),
    best_of: onlyWhen((v) => v === 1, "best_of above 1 is"),
    suffix: onlyWhen((v) => v === "", "suffix is"),
  })
  .refine(...streamOptionsNeedStream);

/**
 * `POST /v1/chat/completions` body: the fields the engine uses, the sampling knobs it ignores (range-checked), and
 * the features it lacks (refused unless off); any other field is accepted and ignored.
 */
export const chatRequestSchema = z
  .object({
    model: z.string(),
    messages: z.array(chatMessage).min(1),
    max_tokens: maxTokens,
    max_completion_tokens: maxTokens,
    stream: z.boolean().nullish(),
    stream_options: streamOptions,
    ignore_eos: z.boolean().nullish(),
    stop,
    n,
    ...ignoredSampling,
    logprobs: onlyWhen((v) => v === false, "logprobs are"),
    top_logprobs: onlyWhen((v) => v === 0, "top_logprobs are"),
    response_format: onlyWhen((v) => (v as { type?: unknown }).type === "text", "response_format other than text is"),
    tools: onlyWhen(emptyList, "tools are"),
    functions: onlyWhen(emptyList, "functions are"),
    tool_choice: onlyWhen(noToolChoice, "tool_choice other than none or auto is"),
    function_call: onlyWhen(noToolChoice, "function_call other than none or auto is"),
  })
  .refine(...streamOptionsNeedStream);

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
