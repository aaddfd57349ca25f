import { z } from "zod";
import { readLimited } from "./read-limited";

/**
 * The fields the edge reads; everything else passes through to the engine untouched. `null` is the same as absent
 * for the optional ones, as in OpenAI's API ("integer or null"): some clients send `"max_tokens": null`.
 */
const baseSchema = z.looseObject({
  model: z.string({ error: "`model` must be a string" }).min(1, "`model` must not be empty"),
  stream: z.boolean({ error: "`stream` must be a boolean" }).nullish(),
  max_tokens: z.int({ error: "`max_tokens` must be a non-negative integer" }).min(0).nullish(),
  max_completion_tokens: z.int({ error: "`max_completion_tokens` must be a non-negative integer" }).min(0).nullish(),
  /** Completions generated for the request (OpenAI's `n`; `best_of` on legacy completions): each has the budget. */
  n: z.int({ error: "`n` must be a positive integer" }).min(1).nullish(),
  best_of: z.int({ error: "`best_of` must be a positive integer" }).min(1).nullish(),
  /** OpenAI's processing tier; checked against the tenant's plan (see service-tier.ts). */
  service_tier: z.unknown().optional(),
});

const chatSchema = baseSchema.extend({
  messages: z
    .array(z.looseObject({ role: z.string({ error: "each message needs a string `role`" }) }), {
      error: "`messages` must be an array",
    })
    .min(1, "`messages` must not be empty"),
});

const completionSchema = baseSchema.extend({
  prompt: z.union([z.string(), z.array(z.union([z.string(), z.number(), z.array(z.number())]))], {
    error: "`prompt` must be a string or an array",
  }),
});

/** A refused body: the status and message for an OpenAI-style error. */
export interface BodyProblem {
  status: 400 | 413;
  message: string;
  param: string | null;
}

/**
 * A body that passed the edge's checks: its bytes (forwarded and fingerprinted as they are, less a leading BOM), its
 * model and what quotas and tiers read. The text the checks decoded is not kept: a body of up to `maxBodyBytes` held
 * once as bytes, rather than again as a string and re-encoded for the fingerprint and the replica (a `deploymentOf`
 * that wants the text decodes them: `new TextDecoder().decode(body.bytes)`).
 */
export interface AcceptedBody {
  /** The client's bytes less a leading UTF-8 BOM (a view of what was read, not a copy); valid UTF-8. */
  bytes: Uint8Array;
  /** The length of the body's text in UTF-16 code units (JavaScript's `length`): what quotas estimate tokens from. */
  textLength: number;
  model: string;
  /**
   * The completion budget the engine runs with: on `/chat/completions` (and any other path) `max_completion_tokens`
   * unless it is 0, else `max_tokens`, as vLLM and SGLang read them (`max_completion_tokens or max_tokens`); on
   * `/completions`, `max_tokens` alone (no engine reads `max_completion_tokens` there). Absent when neither counts.
   */
  maxTokens?: number;
  /**
   * How many completions the engine generates, each up to `maxTokens`: `n`, or `best_of` when larger (vLLM and
   * SGLang generate `best_of` and return the best `n`); 1 when neither is set.
   */
  completions: number;
  /** The body's `service_tier`, unchecked. */
  serviceTier?: unknown;
}

/**
 * Reads and checks an OpenAI request body well enough to refuse malformed ones before they take a queue
 * place. Returns the raw bytes so the engine receives exactly what the client sent, but for a leading UTF-8 BOM,
 * which is dropped (JSON may not begin with one: RFC 8259 lets a parser ignore it, and many engines' parsers refuse it).
 * They are the bytes of the text that was checked: strict UTF-8 decodes and encodes back to the same bytes, so the
 * fingerprint over them is the one over that text.
 *
 * @example
 * ```ts
 * const body = await readRequestBody(c.req.raw, "/v1/chat/completions", 1 << 20);
 * if ("status" in body) return openAIError(body.status, body.message, "invalid_request_error", null);
 * ```
 */
export async function readRequestBody(
  request: Request,
  path: string,
  maxBytes: number,
): Promise<AcceptedBody | BodyProblem> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return { status: 413, message: `request body exceeds ${maxBytes} bytes`, param: null };
  // A declared length within the limit is read natively (the runtime holds the body to it); a body without one
  // is read chunk by chunk and cut off at the limit.
  const bytes =
    request.headers.has("content-length") && declared <= maxBytes
      ? new Uint8Array(await request.arrayBuffer())
      : await readLimited(request.body, maxBytes);
  if (bytes === undefined || bytes.byteLength > maxBytes)
    return { status: 413, message: `request body exceeds ${maxBytes} bytes`, param: null };
  let text: string;
  let parsed: unknown;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    return { status: 400, message: "request body is not valid JSON", param: null };
  }
  const chat = path.endsWith("/chat/completions");
  // A legacy completion (`/v1/completions`): its prompt is checked, and its budget is `max_tokens` alone.
  const legacy = !chat && path.endsWith("/completions");
  const schema = chat ? chatSchema : legacy ? completionSchema : baseSchema;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { status: 400, message: "request body must be a JSON object", param: null };
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { status: 400, message: issue?.message ?? "invalid request body", param: issue?.path.join(".") || null };
  }
  const { model, max_completion_tokens, max_tokens, n, best_of, service_tier } = result.data;
  // The budget the engine will run with, never a smaller one the client wrote beside it: a legacy completion runs
  // with `max_tokens` (vLLM, SGLang and spillway's engine ignore `max_completion_tokens` there), and vLLM and SGLang
  // run a chat request whose `max_completion_tokens` is 0 with its `max_tokens`. Read as `??`, either pair was charged
  // (and checked against the quota) for 1 or 0 completion tokens while the engine generated `max_tokens`.
  const maxTokens = (legacy ? max_tokens : max_completion_tokens || max_tokens) ?? undefined;
  // The decoder dropped a leading BOM from the text; the bytes lose it too. Nothing else differs.
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return {
    bytes: bom ? bytes.subarray(3) : bytes,
    textLength: text.length,
    model,
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    completions: Math.max(n ?? 1, best_of ?? 1),
    serviceTier: service_tier,
  };
}
