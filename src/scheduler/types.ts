/**
 * Public data types of the token-budget scheduler: options, requests, batches, events and state.
 * Everything here is plain data, so an engine can log it, serialise it or ship it to metrics as it is.
 */

/**
 * Order in which waiting requests are considered by an admission round (SGLang's `--schedule-policy`).
 * - `fcfs`: arrival order (retracted requests go to the back of the queue, as in SGLang).
 * - `lpm`: longest cached prefix first; falls back to `fcfs` when more than 128 requests wait or the radix
 *   cache is disabled.
 * - `lof`: longest output first (largest `maxNewTokens`), stable.
 * - `random`: shuffled with the injected `random` source each round.
 *
 * @example
 * ```ts
 * const policy: SchedulePolicy = "lpm";
 * ```
 */
export type SchedulePolicy = "fcfs" | "lpm" | "lof" | "random";

/** Options of {@link Scheduler}: defined, with their defaults, by `schedulerOptionsSchema` (options.ts). */
export type { SchedulerOptions } from "./options.js";

/**
 * A request handed to {@link Scheduler.submit}.
 *
 * @example
 * ```ts
 * const req: SubmitRequest = { id: "chatcmpl-1", promptTokenIds: [1, 2, 3], maxNewTokens: 128, ignoreEos: false };
 * ```
 */
export interface SubmitRequest {
  /** Unique among live requests (an id may be reused once its request has ended). */
  id: string;
  /** Prompt token ids (non-empty, non-negative integers); they key the prefix cache. */
  promptTokenIds: readonly number[];
  /** `max_tokens` of the API request: a non-negative integer. 0 ends the request right after its prefill. */
  maxNewTokens: number;
  /** The request cannot stop early, so it always reserves its full remaining output (ratio 1.0). */
  ignoreEos?: boolean;
}

/**
 * Where a request is in its life.
 *
 * @example
 * ```ts
 * if (scheduler.get("r1")?.status === "waiting") console.log("still queued");
 * ```
 */
export type RequestStatus = "waiting" | "running" | "finished" | "aborted";

/**
 * Read-only view of a request, as found in batches and returned by {@link Scheduler.get}.
 * The arrays are the scheduler's own; do not mutate them.
 *
 * @example
 * ```ts
 * for (const r of batch.requests) console.log(r.id, r.outputTokenIds.length, "of", r.maxNewTokens);
 * ```
 */
export interface RequestView {
  readonly id: string;
  readonly promptTokenIds: readonly number[];
  /** Tokens generated so far (kept across retractions). */
  readonly outputTokenIds: readonly number[];
  readonly maxNewTokens: number;
  readonly ignoreEos: boolean;
  readonly status: RequestStatus;
  /** How many times this request was retracted. */
  readonly retractions: number;
}

/**
 * One request's part of a prefill batch.
 *
 * @example
 * ```ts
 * const cost = batch.entries.reduce((s, e) => s + e.extendTokens, 0); // tokens the GPU computes
 * ```
 */
export interface PrefillEntry {
  readonly request: RequestView;
  /** Tokens whose KV this step computes: positions `[startPosition, startPosition + extendTokens)` of prompt + output. */
  readonly extendTokens: number;
  /** First position computed this step = tokens already in KV (cached prefix or earlier chunks). */
  readonly startPosition: number;
  /** Prefix tokens reused from the radix cache at admission (0 for later chunks). */
  readonly cachedTokens: number;
  /** True when this is the last (or only) chunk: the step samples this request's next token. */
  readonly lastChunk: boolean;
}

/**
 * A prefill step: compute the KV of new prompt tokens; each `lastChunk` entry yields one sampled token.
 *
 * @example
 * ```ts
 * if (batch.kind === "prefill") gpu.prefill(batch.entries);
 * ```
 */
export interface PrefillBatch {
  readonly kind: "prefill";
  readonly entries: readonly PrefillEntry[];
  /**
   * Events of preparing this step (a retraction that left nothing running, its aborts). The batch's own prefill
   * event comes from `completeBatch`, once it ran.
   */
  readonly events: readonly SchedulerEvent[];
  /**
   * Requests the scheduler ended while preparing this step (out-of-memory aborts, status 500): respond to their
   * clients. Added after the first API commit; always present, usually empty.
   */
  readonly ended: readonly EndedRequest[];
}

/**
 * A decode step: every listed request already has its KV slot for this step and yields one token.
 *
 * @example
 * ```ts
 * if (batch.kind === "decode") gpu.decode(batch.requests.length);
 * ```
 */
export interface DecodeBatch {
  readonly kind: "decode";
  readonly requests: readonly RequestView[];
  /** Retraction / abort events that happened while preparing this step, then the periodic decode event. */
  readonly events: readonly SchedulerEvent[];
  /**
   * Requests the scheduler ended while preparing this step (out-of-memory aborts, status 500): respond to their
   * clients. Added after the first API commit; always present, usually empty.
   */
  readonly ended: readonly EndedRequest[];
}

/**
 * Nothing to run: no request waits or runs (a retraction may just have aborted the last one: see `ended`).
 *
 * @example
 * ```ts
 * if (batch.kind === "idle") await nextSubmit();
 * ```
 */
export interface IdleBatch {
  readonly kind: "idle";
  readonly events: readonly SchedulerEvent[];
  /**
   * Requests the scheduler ended while preparing this step (out-of-memory aborts, status 500): respond to their
   * clients. Added after the first API commit; always present, usually empty.
   */
  readonly ended: readonly EndedRequest[];
}

/**
 * What {@link Scheduler.nextBatch} returns.
 *
 * @example
 * ```ts
 * const batch: Batch = scheduler.nextBatch(now);
 * ```
 */
export type Batch = PrefillBatch | DecodeBatch | IdleBatch;

/**
 * What the engine learned from running a batch; given to {@link Scheduler.completeBatch}.
 *
 * @example
 * ```ts
 * scheduler.completeBatch({ tokenIds: sampled, stopped: sampledEos });
 * ```
 */
export interface BatchOutput {
  /**
   * One sampled token id per batch item, in order (`entries` of a prefill, `requests` of a decode).
   * Items that yield no token (a non-final prefill chunk, or a request aborted while the step ran) are ignored;
   * put any number there (e.g. -1).
   */
  readonly tokenIds: ArrayLike<number>;
  /**
   * Ids of requests that stop with this step's token (EOS or a stop string); the token is kept. Requests that
   * reach `maxNewTokens` end by themselves with reason `length`; naming them here too is harmless.
   */
  readonly stopped?: Iterable<string>;
  /**
   * When the batch finished (seconds, the clock given to `nextBatch`). A prefill batch's event is stamped with
   * it and its input throughput measured up to it. Default: the `now` of the `nextBatch` that started the batch.
   */
  readonly now?: number;
}

/**
 * How a request ended.
 * `stop`: the engine said so; `length`: reached `maxNewTokens`; `abort`: client gone or out of memory.
 *
 * @example
 * ```ts
 * const finishReason: EndReason = "length";
 * ```
 */
export type EndReason = "stop" | "length" | "abort";

/**
 * A request that has ended (every submitted request ends exactly once).
 *
 * @example
 * ```ts
 * for (const e of scheduler.completeBatch(out).ended) streams.get(e.id)?.end(e.reason, e.outputTokenIds);
 * ```
 */
export interface EndedRequest {
  readonly id: string;
  readonly reason: EndReason;
  readonly outputTokenIds: readonly number[];
  /** For aborts: why (SGLang's message for an out-of-memory abort). */
  readonly message?: string;
  /** For aborts: the HTTP status its client should get (500 for out of memory, 499 for client gone). */
  readonly status?: number;
}

/**
 * Result of {@link Scheduler.completeBatch}.
 *
 * @example
 * ```ts
 * const { ended } = scheduler.completeBatch(out);
 * ```
 */
export interface StepResult {
  /** Requests that ended with this step (finished by `stop` / `length`), in batch order. */
  readonly ended: readonly EndedRequest[];
  /**
   * Events of the finished batch: a prefill batch's {@link PrefillBatchEvent} comes out here, once the batch
   * ran (SGLang reports the prefill line when the batch's result is processed, not when it is scheduled).
   */
  readonly events: readonly SchedulerEvent[];
}

/**
 * A prefill batch ran (SGLang's "Prefill batch" line). Fields are the line's numbers, with SGLang's definitions
 * (`report_prefill_stats` in its scheduler metrics, called when the batch's result is processed):
 * the counts describe the admission round that built the batch; `token usage` and `#queue-req` are read when
 * the batch has run; the throughput is this batch's new tokens over the time since the previous prefill line.
 *
 * @example
 * ```ts
 * for (const e of scheduler.completeBatch(out).events) if (e.type === "prefill") log(formatPrefillBatchLine(e));
 * ```
 */
export interface PrefillBatchEvent {
  readonly type: "prefill";
  /** When the batch finished (`BatchOutput.now`). */
  readonly now: number;
  /** `#new-seq`: requests in the batch. */
  readonly newSeq: number;
  /** `#new-token`: tokens computed (page-rounded). */
  readonly newToken: number;
  /** `#cached-token`: prefix tokens reused. */
  readonly cachedToken: number;
  /**
   * `token usage`: (maxTotalTokens - (free + evictable)) / maxTotalTokens after the batch ran, so it includes
   * the slots the batch just took. The seed's second line: one request holding 257 slots, a batch of 896 new
   * tokens -> (257 + 896) / 4096 = 0.28.
   */
  readonly tokenUsage: number;
  /** `#running-req`: requests already running when the batch was admitted (not counting this batch). */
  readonly runningReq: number;
  /** `#queue-req`: requests waiting after the batch ran. */
  readonly queueReq: number;
  /**
   * `#pending-token`: SGLang's `_get_num_pending_tokens(chunk_deduct=this chunk)` at admission: the sum of
   * `seqlen` (prompt + output so far) over the waiting queue, plus what a chunked prompt still has to prefill
   * after this batch's chunk. Not uncached tokens: a waiting request's cached prefix counts in full.
   */
  readonly pendingToken: number;
  /**
   * `input throughput (token/s)`: this batch's `#new-token` over the time since the previous prefill line
   * (SGLang's `log_input_tokens / gap_latency`; 0 when no time passed). Back to back, that gap is the prefill's
   * own time.
   */
  readonly inputThroughput: number;
}

/**
 * A decode step was scheduled; comes out every `decodeLogInterval` decode steps (SGLang's "Decode batch" line).
 *
 * @example
 * ```ts
 * if (event.type === "decode") log(formatDecodeBatchLine(event));
 * ```
 */
export interface DecodeBatchEvent {
  readonly type: "decode";
  readonly now: number;
  /** `#running-req`. */
  readonly runningReq: number;
  /** `#token`: used slots = maxTotalTokens - (free + evictable). */
  readonly token: number;
  /** `token usage`. */
  readonly tokenUsage: number;
  /** `gen throughput (token/s)`: tokens generated since the previous decode event over the time since it. */
  readonly genThroughput: number;
  /** `#queue-req`. */
  readonly queueReq: number;
}

/**
 * Requests were retracted before a decode step because the pool could not give every running request a slot.
 *
 * @example
 * ```ts
 * if (event.type === "retraction") log(formatRetractionLine(event));
 * ```
 */
export interface RetractionEvent {
  readonly type: "retraction";
  readonly now: number;
  /** Retracted request ids, in retraction order (they are back in the waiting queue). */
  readonly retractedIds: readonly string[];
  /** Their prompt tokens and output tokens (for `num_retracted_input/output_tokens_total`). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly oldRatio: number;
  readonly newRatio: number;
}

/**
 * A request was aborted: by the scheduler (out of memory, status 500) or by the engine (client gone).
 *
 * @example
 * ```ts
 * if (event.type === "abort") log(formatAbortLine(event));
 * ```
 */
export interface AbortEvent {
  readonly type: "abort";
  readonly now: number;
  readonly id: string;
  readonly message: string;
  readonly status: number;
}

/**
 * Anything the scheduler reports as data for logs and metrics.
 *
 * @example
 * ```ts
 * for (const e of batch.events) logger.info(formatEventLine(e));
 * ```
 */
export type SchedulerEvent = PrefillBatchEvent | DecodeBatchEvent | RetractionEvent | AbortEvent;

/**
 * Monotonic counters (Prometheus counters map onto these).
 *
 * @example
 * ```ts
 * promCounter.inc(state.counters.retractedRequestsTotal - lastSeen);
 * ```
 */
export interface SchedulerCounters {
  /** Requests accepted by `submit` (`num_requests_total`). */
  readonly requestsTotal: number;
  /** Requests ended as `stop` or `length`. */
  readonly finishedRequestsTotal: number;
  /** Requests ended as `abort`, any cause (`num_aborted_requests_total`). */
  readonly abortedRequestsTotal: number;
  /** `num_retracted_requests_total`, `num_retracted_input_tokens_total`, `num_retracted_output_tokens_total`. */
  readonly retractedRequestsTotal: number;
  readonly retractedInputTokensTotal: number;
  readonly retractedOutputTokensTotal: number;
  /** Retraction events. */
  readonly retractionsTotal: number;
  /** Prompt tokens of accepted requests (`prompt_tokens_total`). */
  readonly promptTokensTotal: number;
  /** Tokens generated (`generation_tokens_total`). */
  readonly generationTokensTotal: number;
  /** Tokens computed by prefills (page-rounded, `#new-token` summed) and prefix tokens reused (`#cached-token`). */
  readonly prefillTokensTotal: number;
  readonly cachedTokensTotal: number;
  readonly prefillBatchesTotal: number;
  readonly decodeStepsTotal: number;
}

/**
 * A snapshot for logs, metrics and `/load`.
 *
 * @example
 * ```ts
 * const s = scheduler.state();
 * gauge("sglang:token_usage").set(s.tokenUsage);
 * ```
 */
export interface SchedulerState {
  /** Requests running (decoding or just prefilled); a request mid-way through a chunked prefill is not counted. */
  readonly running: number;
  /** Requests waiting (including retracted ones). */
  readonly waiting: number;
  /** True while a request's prompt is being prefilled in chunks. */
  readonly chunking: boolean;
  /** Pool capacity in slots (`maxTotalTokens` rounded down to whole pages): `max_total_num_tokens`. */
  readonly maxTotalTokens: number;
  /** Free slots. */
  readonly freeTokens: number;
  /** Slots held by unlocked prefix-cache entries (evictable on demand, so they count as capacity). */
  readonly evictableTokens: number;
  /** Slots held by the prefix cache, locked or not. */
  readonly cachedTokens: number;
  /** `num_used_tokens` = maxTotalTokens - (free + evictable). */
  readonly usedTokens: number;
  /** `token_usage` = usedTokens / maxTotalTokens. */
  readonly tokenUsage: number;
  /** Current new-token ratio (`new_token_ratio`). */
  readonly newTokenRatio: number;
  /** True between `nextBatch` returning a prefill/decode batch and `completeBatch`. */
  readonly inFlight: boolean;
  readonly counters: SchedulerCounters;
}
