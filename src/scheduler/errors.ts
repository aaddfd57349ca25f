/**
 * Why a request was refused by {@link Scheduler.submit}.
 * - `empty_prompt`: the prompt has no tokens.
 * - `bad_max_new_tokens`: `maxNewTokens` is not a non-negative integer.
 * - `duplicate_id`: a live (waiting or running) request already has this id.
 * - `prompt_too_long`: the request could never be admitted, even into an empty pool.
 * - `bad_token_ids`: a prompt token id is not a non-negative integer.
 */
export type SchedulerInputErrorCode =
  | "empty_prompt"
  | "bad_max_new_tokens"
  | "duplicate_id"
  | "prompt_too_long"
  | "bad_token_ids";

/**
 * Bad input to the scheduler. Thrown before anything changes, so the scheduler's state is exactly as it was.
 * The engine maps it to a 400 for its client.
 *
 * @example
 * ```ts
 * try {
 *   scheduler.submit({ id: "r1", promptTokenIds: [], maxNewTokens: 16 });
 * } catch (err) {
 *   if (err instanceof SchedulerInputError && err.code === "empty_prompt") reply400(err.message);
 * }
 * ```
 */
export class SchedulerInputError extends Error {
  override readonly name = "SchedulerInputError";
  /** Machine-readable reason. */
  readonly code: SchedulerInputErrorCode;
  constructor(code: SchedulerInputErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The engine drove the scheduler out of order (for example asked for a new batch while the previous one was
 * still in flight, or completed a batch with the wrong number of tokens). A bug in the caller, not bad user
 * input; nothing changes when it is thrown.
 *
 * @example
 * ```ts
 * scheduler.nextBatch(0);
 * scheduler.nextBatch(1); // throws SchedulerProtocolError: the first batch was never completed
 * ```
 */
export class SchedulerProtocolError extends Error {
  override readonly name = "SchedulerProtocolError";
}

/**
 * Bad scheduler options (constructor). Thrown by `new Scheduler(...)`.
 *
 * @example
 * ```ts
 * new Scheduler({ maxTotalTokens: 0 }); // throws SchedulerConfigError
 * ```
 */
export class SchedulerConfigError extends Error {
  override readonly name = "SchedulerConfigError";
}
