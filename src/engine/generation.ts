/** One generation as the engine core receives it (already validated and tokenized). */
export interface GenerationRequest {
  /** Unique id, e.g. `cmpl-3f2a...`. */
  id: string;
  promptTokens: number[];
  /** max_tokens / max_completion_tokens. */
  maxTokens: number;
  ignoreEos: boolean;
  /** Stop strings: the output ends before the first occurrence (excluded from the text). */
  stop: string[];
}

/** Token counts reported as OpenAI `usage` (cached = prefix-cache hits on the first admission). */
export interface GenerationUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** How a generation ended well: `stop` (EOS or a stop string) or `length` (max_tokens). */
export type FinishReason = "stop" | "length";

/**
 * Where the engine core sends a generation's progress. Exactly one of `onFinish` / `onError` is called,
 * once, and nothing after it (none at all after the request's abort function was called).
 *
 * The methods run inside the engine loop, which serves every request: they should return quickly and not throw.
 * One that throws ends its own request only, and the error is logged as one line: a throwing `onText` cancels the
 * request (its KV is freed, the abort logged with status 500 and counted as aborted - also on the last text, held
 * back until the request's end) and the sink then hears `onError("GenerationSink.onText threw")`, once - unless
 * `onText` had called the request's abort function itself; a throwing `onFinish` or `onError` ends nothing more and
 * calls nothing after it. The other requests go on.
 *
 * @example
 * ```ts
 * const sink: GenerationSink = {
 *   onText: (text) => process.stdout.write(text),
 *   onFinish: (reason, usage) => console.log(`\n${reason}, ${usage.completionTokens} tokens`),
 *   onError: (message) => console.error(message),
 * };
 * ```
 */
export interface GenerationSink {
  /** New output text (may be "" when a possible stop string is held back). */
  onText(text: string): void;
  onFinish(reason: FinishReason, usage: GenerationUsage): void;
  /** The engine gave up on the request (e.g. out of memory after retracting all others): HTTP 500. */
  onError(message: string, usage: GenerationUsage): void;
}

/** The router's view of one engine (`GET /load`), see README "Engine server". */
export interface LoadReport {
  queueLength: number;
  running: number;
  waiting: number;
  accepting: boolean;
  tokenUsage: number;
  maxRunningRequests: number;
}

/**
 * The engine core the HTTP layer talks to: it accepts generations and reports load. The engine loop
 * (scheduler + engine) implements it.
 *
 * @example
 * ```ts
 * const abort = core.submit({ id: "cmpl-1", promptTokens: [1, 2], maxTokens: 8, ignoreEos: true, stop: [] }, sink);
 * abort(); // client went away: the request's KV slots are freed at once
 * ```
 */
export interface EngineCore {
  /**
   * Queues a generation; returns a function that aborts it (idempotent, a no-op once it ended). Throws, queueing
   * nothing, a TypeError for a field of the wrong type, an `ApiError` (400) for a request the scheduler refuses, and
   * an `ApiError` (503) while the engine shuts down or when its waiting queue is full (`maxQueuedRequests`).
   * A sink method that throws later ends that request alone (see {@link GenerationSink}).
   */
  submit(request: GenerationRequest, sink: GenerationSink): () => void;
  load(): LoadReport;
  /** Stops the loop; in-flight generations end with an error. */
  close(): Promise<void>;
}
