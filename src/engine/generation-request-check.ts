import type { GenerationRequest, GenerationSink } from "./generation";

/**
 * Checks the fields of a {@link GenerationRequest} and a {@link GenerationSink} that the scheduler does not check
 * itself, at `EngineCore.submit`, the engine's programmatic entry (`startEngineServer(...).core`). The HTTP API
 * validates its bodies with zod; a package user calling `submit` from JavaScript has only the type to go by, and a
 * wrong value there did not fail: `ignoreEos: "false"` is truthy and ignored EOS, a missing `stop` threw only after
 * the scheduler had queued the request (a request with no sink that still ran, and whose id then read as taken),
 * and a sink without `onFinish` stopped the engine loop for every request.
 *
 * The prompt and max_tokens are left to the scheduler, which refuses them with a 400 (`ApiError`).
 *
 * @throws TypeError naming the field, before anything is queued.
 * @example
 * ```ts
 * checkGenerationRequest({ id: "cmpl-1", promptTokens: [1], maxTokens: 8, ignoreEos: false, stop: [] }, sink); // ok
 * checkGenerationRequest({ id: 42, promptTokens: [1], maxTokens: 8, ignoreEos: false, stop: [] } as never, sink);
 * // TypeError: GenerationRequest.id must be a string, got number 42
 * ```
 */
export function checkGenerationRequest(request: GenerationRequest, sink: GenerationSink): void {
  if (typeof request !== "object" || request === null)
    throw new TypeError(`GenerationRequest must be an object, got ${describe(request)}`);
  if (typeof request.id !== "string") throw fieldError("id", "a string", request.id);
  if (typeof request.ignoreEos !== "boolean") throw fieldError("ignoreEos", "a boolean", request.ignoreEos);
  if (!Array.isArray(request.stop) || !request.stop.every((s) => typeof s === "string"))
    throw fieldError("stop", "an array of strings", request.stop);
  if (typeof sink !== "object" || sink === null)
    throw new TypeError(`GenerationSink must be an object, got ${describe(sink)}`);
  for (const method of ["onText", "onFinish", "onError"] as const) {
    if (typeof sink[method] !== "function")
      throw new TypeError(`GenerationSink.${method} must be a function, got ${describe(sink[method])}`);
  }
}

function fieldError(field: string, expected: string, value: unknown): TypeError {
  return new TypeError(`GenerationRequest.${field} must be ${expected}, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value); // undefined for a function or a symbol
  } catch {
    shown = String(value); // a bigint, a cycle
  }
  return `${Array.isArray(value) ? "array" : typeof value} ${shown.length > 40 ? `${shown.slice(0, 40)}...` : shown}`;
}
