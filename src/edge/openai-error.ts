/** The OpenAI error body shape, so OpenAI-compatible clients parse our refusals. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/**
 * A JSON Response carrying an OpenAI-style error.
 *
 * @example
 * ```ts
 * return openAIError(404, "The model `x` does not exist", "invalid_request_error", "model_not_found");
 * ```
 */
export function openAIError(
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers: Record<string, string> = {},
  param: string | null = null,
): Response {
  const body: OpenAIErrorBody = { error: { message, type, param, code } };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
