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

/**
 * OpenAI's 404 for a model it does not serve: what a request naming it gets, and what `GET /v1/models/{id}` does.
 *
 * @example
 * ```ts
 * if (!Object.hasOwn(config.deployments, model)) return modelNotFound(model);
 * ```
 */
export function modelNotFound(model: string): Response {
  return openAIError(
    404,
    `The model \`${model}\` does not exist`,
    "invalid_request_error",
    "model_not_found",
    {},
    "model",
  );
}
