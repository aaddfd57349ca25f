/** The OpenAI error body: `{"error":{"message","type","param","code"}}`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | number | null };
}

/**
 * An API error with its HTTP status, rendered as OpenAI's error body. Thrown by request validation and
 * caught by the app's error handler, so a bad request changes nothing in the engine.
 *
 * @example
 * ```ts
 * throw new ApiError(400, "max_tokens must be at least 1", { param: "max_tokens" });
 * ```
 */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | number | null;

  constructor(
    status: number,
    message: string,
    options: { type?: string; param?: string | null; code?: string | number | null } = {},
  ) {
    super(message);
    this.status = status;
    this.type = options.type ?? defaultType(status);
    this.param = options.param ?? null;
    this.code = options.code ?? null;
  }

  /** The JSON body for this error. */
  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/**
 * OpenAI's 404 for a model this server does not serve (`model_not_found` on `model`), as a request naming it and a
 * `GET /v1/models/{id}` for it both get.
 *
 * @example
 * ```ts
 * throw modelNotFound("gpt-4o", "demo-model"); // 404: The model 'gpt-4o' does not exist; this server serves ...
 * ```
 */
export function modelNotFound(requested: string, served: string): ApiError {
  return new ApiError(404, `The model '${requested}' does not exist; this server serves '${served}'.`, {
    param: "model",
    code: "model_not_found",
  });
}

/**
 * Builds an OpenAI error body directly (for the SSE error event and non-thrown paths).
 *
 * @example
 * ```ts
 * errorBody("Out of memory", "server_error", null, 500);
 * ```
 */
export function errorBody(
  message: string,
  type: string,
  param: string | null = null,
  code: string | number | null = null,
): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

// OpenAI's two types for what an engine refuses: the client's request (4xx, unknown models and URLs included) or
// the server (5xx). The edge uses the same two.
function defaultType(status: number): string {
  return status >= 500 ? "server_error" : "invalid_request_error";
}
