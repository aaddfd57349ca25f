/**
 * The token-budget scheduler: SGLang's admission, new-token ratio and retraction behind a step interface.
 * Pure: it decides; the caller supplies the clock (`now`) and randomness, runs the GPU and does the logging.
 */
import type {
  AbortEvent,
  Batch,
  BatchOutput,
  EndedRequest,
  RequestView,
  SchedulerOptions,
  SchedulerState,
  StepResult,
  SubmitRequest,
} from "./types.js";

/**
 * SGLang's message for the last running request when even retracting all others leaves no slot for it.
 *
 * @example
 * ```ts
 * if (ended.message === OUT_OF_MEMORY_ABORT_MESSAGE) res.status(500);
 * ```
 */
export const OUT_OF_MEMORY_ABORT_MESSAGE =
  "Out of memory even after retracting all other requests in the decode batch. Aborting the last request.";

/**
 * The scheduler an engine drives step by step.
 *
 * Protocol: `nextBatch(now)` returns one batch; run it; `completeBatch(output)` with one sampled token per item;
 * repeat. `submit`, `abort`, `finish`, `get` and `state` may be called at any time (an abort during an in-flight
 * step takes effect at once; the item's token is then ignored).
 *
 * @example
 * ```ts
 * const scheduler = new Scheduler({ maxTotalTokens: 4096 });
 * scheduler.submit({ id: "r1", promptTokenIds: tokens, maxNewTokens: 512, ignoreEos: true });
 * for (;;) {
 *   const batch = scheduler.nextBatch(clock.now());
 *   for (const e of batch.events) logger.info(formatEventLine(e));
 *   if (batch.kind === "idle") { await work.wait(); continue; }
 *   const items = batch.kind === "prefill" ? batch.entries.map((e) => e.request) : batch.requests;
 *   await gpu.run(batch); // time cost from the batch's shape
 *   const tokenIds = items.map((r) => sample(r));
 *   const stopped = items.filter((r, i) => !r.ignoreEos && tokenIds[i] === EOS).map((r) => r.id);
 *   for (const e of scheduler.completeBatch({ tokenIds, stopped }).ended) respond(e);
 * }
 * ```
 */
export class Scheduler {
  /**
   * @throws SchedulerConfigError for options out of range.
   * @example
   * ```ts
   * const s = new Scheduler({ maxTotalTokens: 4096, pageSize: 1, schedulePolicy: "lpm" });
   * ```
   */
  constructor(options: SchedulerOptions) {
    void options;
    throw new Error("not implemented yet");
  }

  /**
   * Queue a request. Validates first and changes nothing when it throws.
   * @throws SchedulerInputError (`empty_prompt`, `bad_max_new_tokens`, `duplicate_id`, `prompt_too_long`,
   *   `bad_token_ids`).
   * @returns the request's live view.
   * @example
   * ```ts
   * scheduler.submit({ id: "r1", promptTokenIds: [1, 2, 3], maxNewTokens: 16 });
   * ```
   */
  submit(request: SubmitRequest): RequestView {
    void request;
    throw new Error("not implemented yet");
  }

  /**
   * Decide the next step at time `now` (seconds or ms, any monotonic unit; used for throughputs only).
   * Order (SGLang's loop): continue a chunked prefill, else run an admission round and prefill what it admits,
   * else check memory (retracting if short), decay the ratio and decode; with nothing to do return `idle` and
   * reset the ratio.
   * @throws SchedulerProtocolError if the previous batch was not completed.
   * @example
   * ```ts
   * const batch = scheduler.nextBatch(performance.now() / 1000);
   * ```
   */
  nextBatch(now: number): Batch {
    void now;
    throw new Error("not implemented yet");
  }

  /**
   * Report the in-flight batch's sampled tokens; requests that stop or reach `maxNewTokens` end here
   * (their KV goes to the prefix cache).
   * @throws SchedulerProtocolError if no batch is in flight or `tokenIds` has the wrong length.
   * @example
   * ```ts
   * const { ended } = scheduler.completeBatch({ tokenIds: [42, 7], stopped: ["r2"] });
   * ```
   */
  completeBatch(output: BatchOutput): StepResult {
    void output;
    throw new Error("not implemented yet");
  }

  /**
   * End a live request as `stop` (e.g. a stop string found after detokenising). Unknown or ended ids: undefined.
   * @example
   * ```ts
   * scheduler.finish("r1");
   * ```
   */
  finish(id: string): EndedRequest | undefined {
    void id;
    throw new Error("not implemented yet");
  }

  /**
   * Abort a live request (client gone): it leaves the queue or the batch and its slots are released at once.
   * Unknown or already ended ids return undefined (a disconnect may race the request's end).
   * @example
   * ```ts
   * req.on("close", () => scheduler.abort("r1", now()));
   * ```
   */
  abort(id: string, now = 0, message = "Client disconnected.", status = 499): AbortEvent | undefined {
    void id;
    void now;
    void message;
    void status;
    throw new Error("not implemented yet");
  }

  /**
   * A live (waiting or running) request's view, or undefined.
   * @example
   * ```ts
   * scheduler.get("r1")?.outputTokenIds.length;
   * ```
   */
  get(id: string): RequestView | undefined {
    void id;
    throw new Error("not implemented yet");
  }

  /**
   * A snapshot of queue lengths, pool usage, the ratio and counters.
   * @example
   * ```ts
   * const { running, waiting, tokenUsage, newTokenRatio } = scheduler.state();
   * ```
   */
  state(): SchedulerState {
    throw new Error("not implemented yet");
  }

  /**
   * Recount the pool from scratch and throw if any slot is leaked or double-counted (SGLang's
   * `self_check_during_idle`). O(requests + cache nodes); call it when idle, or in tests.
   * @example
   * ```ts
   * if (batch.kind === "idle") scheduler.checkInvariants();
   * ```
   */
  checkInvariants(): void {
    throw new Error("not implemented yet");
  }
}
