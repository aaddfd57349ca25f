/**
 * The token-budget scheduler: SGLang's admission, new-token ratio and retraction behind a step interface.
 * Pure: it decides; the caller supplies the clock (`now`) and randomness, runs the GPU and does the logging.
 */
import { type AdmissionContext, type AdmissionRound, admitRound } from "./admission.js";
import { SchedulerConfigError, SchedulerInputError, SchedulerProtocolError } from "./errors.js";
import { NewTokenRatio, ratioAfterRetraction } from "./new-token-ratio.js";
import { resolveSchedulerOptions } from "./options.js";
import { orderWaiting } from "./policy.js";
import { ceilToPage, floorToPage, PagePool } from "./pool.js";
import { RadixCache } from "./radix-cache.js";
import { Req } from "./request.js";
import { decodePagesNeeded, retract } from "./retraction.js";
import type {
  AbortEvent,
  Batch,
  BatchOutput,
  DecodeBatch,
  EndedRequest,
  EndReason,
  PrefillBatch,
  PrefillBatchEvent,
  PrefillEntry,
  RequestView,
  SchedulePolicy,
  SchedulerEvent,
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
 * Our message for a retracted request that could never be admitted again (its prompt + output so far + reserved
 * new tokens reach the pool size): aborting it beats waiting forever. Not an SGLang rule: SGLang caps
 * max_new_tokens at submission so that prompt + max_new_tokens fits the pool, which makes this case impossible
 * there; we accept any request that can be admitted once (see `submit`), so a request whose output outgrows the
 * pool ends here or with {@link OUT_OF_MEMORY_ABORT_MESSAGE}.
 *
 * @example
 * ```ts
 * if (ended.message === NEVER_FITS_AGAIN_MESSAGE) res.status(500);
 * ```
 */
export const NEVER_FITS_AGAIN_MESSAGE =
  "Out of memory: the retracted request can never be admitted again (prompt + output so far + reserved new tokens exceed the pool). Aborting it.";

interface Resolved {
  pageSize: number;
  maxRunningRequests: number;
  maxPrefillTokens: number;
  chunkedPrefillSize: number;
  schedulePolicy: SchedulePolicy;
  disableRadixCache: boolean;
  clip: number;
  retractDecodeSteps: number;
  decodeLogInterval: number;
  random: () => number;
}

/** What {@link Scheduler.internals} exposes to the invariant checker. */
export interface SchedulerInternals {
  pageSize: number;
  clip: number;
  live: ReadonlyMap<string, Req>;
  waiting: readonly Req[];
  running: readonly Req[];
  pool: Readonly<PagePool>;
  cache: RadixCache | null;
  /** Running requests' clipped remaining max_new_tokens: scaled by the ratio, and ignore_eos ones (1.0). */
  reserveScaled: number;
  reserveFixed: number;
  /** Sum of prompt + output over waiting requests. */
  waitingTokens: number;
  /** The requests of a decode step in flight (they hold this step's slot), or null. */
  deciding: ReadonlySet<Req> | null;
}

type InFlight = { kind: "prefill"; entries: PrefillEntry[] } | { kind: "decode"; reqs: Req[] };

function mutableCounters() {
  return {
    requestsTotal: 0,
    finishedRequestsTotal: 0,
    abortedRequestsTotal: 0,
    retractedRequestsTotal: 0,
    retractedInputTokensTotal: 0,
    retractedOutputTokensTotal: 0,
    retractionsTotal: 0,
    promptTokensTotal: 0,
    generationTokensTotal: 0,
    prefillTokensTotal: 0,
    cachedTokensTotal: 0,
    prefillBatchesTotal: 0,
    decodeStepsTotal: 0,
  };
}

/** Stands in for `random` under the policies that never draw (the options schema demands one for `random`). */
function noRandomSource(): number {
  throw new SchedulerConfigError("no random source: pass options.random");
}

/**
 * The scheduler an engine drives step by step.
 *
 * Protocol: `nextBatch(now)` returns one batch; run it; `completeBatch(output)` with one sampled token per item;
 * repeat. `submit`, `abort`, `finish`, `get` and `state` may be called at any time (an abort during an in-flight
 * step takes effect at once; the item's token is then ignored). Every submitted request ends exactly once, and
 * its end is reported exactly once: by `completeBatch(...).ended`, a batch's `ended`, or the return value of
 * `finish` / `abort`.
 *
 * @example
 * ```ts
 * const scheduler = new Scheduler({ maxTotalTokens: 4096 });
 * scheduler.submit({ id: "r1", promptTokenIds: tokens, maxNewTokens: 512, ignoreEos: true });
 * for (;;) {
 *   const batch = scheduler.nextBatch(clock.now());
 *   for (const e of batch.events) logger.info(formatEventLine(e));
 *   for (const e of batch.ended) respond(e); // out-of-memory aborts
 *   if (batch.kind === "idle") { await work.wait(); continue; }
 *   const items = batch.kind === "prefill" ? batch.entries.map((e) => e.request) : batch.requests;
 *   await gpu.run(batch); // time cost from the batch's shape
 *   const tokenIds = items.map((r) => sample(r));
 *   const stopped = items.filter((r, i) => !r.ignoreEos && tokenIds[i] === EOS).map((r) => r.id);
 *   const done = scheduler.completeBatch({ tokenIds, stopped, now: clock.now() });
 *   for (const e of done.events) logger.info(formatEventLine(e)); // a prefill batch's line
 *   for (const e of done.ended) respond(e);
 * }
 * ```
 */
export class Scheduler {
  private readonly o: Resolved;
  private readonly pool: PagePool;
  private readonly cache: RadixCache | null;
  private readonly ratio: NewTokenRatio;
  private waiting: Req[] = [];
  private running: Req[] = [];
  private chunked: Req | null = null;
  private readonly live = new Map<string, Req>();
  private inFlight: InFlight | null = null;
  /** Running requests' clipped remaining max_new_tokens: those scaled by the ratio, and ignore_eos ones (1.0). */
  private reserveScaled = 0;
  private reserveFixed = 0;
  /** Sum of prompt + output over waiting requests (`#pending-token`). */
  private waitingTokens = 0;
  private seq = 0;
  /** False when requests were appended since the queue was last put in policy order (lets `lof` skip a sort). */
  private waitingOrdered = false;
  private readonly counters = mutableCounters();
  private lastDecodeTic: number | null = null;
  private generatedSinceDecodeEvent = 0;
  private lastPrefillTic: number | null = null;
  /** The in-flight prefill batch's line, less what is read once it ran (usage, queue, throughput). */
  private prefillReport: Omit<PrefillBatchEvent, "now" | "tokenUsage" | "queueReq" | "inputThroughput"> & {
    startedAt: number;
  } = { type: "prefill", newSeq: 0, newToken: 0, cachedToken: 0, runningReq: 0, pendingToken: 0, startedAt: 0 };
  private readonly admission: AdmissionContext;

  /**
   * @throws SchedulerConfigError for options out of range (see `schedulerOptionsSchema`).
   * @example
   * ```ts
   * const s = new Scheduler({ maxTotalTokens: 4096, pageSize: 1, schedulePolicy: "lpm" });
   * ```
   */
  constructor(options: SchedulerOptions) {
    const o = resolveSchedulerOptions(options);
    const { maxTotalTokens, pageSize } = o;
    this.o = {
      pageSize,
      maxRunningRequests: o.maxRunningRequests,
      maxPrefillTokens: o.maxPrefillTokens,
      chunkedPrefillSize: o.chunkedPrefillSize,
      schedulePolicy: o.schedulePolicy,
      disableRadixCache: o.disableRadixCache,
      clip: o.clipMaxNewTokens,
      retractDecodeSteps: o.retractDecodeSteps,
      decodeLogInterval: o.decodeLogInterval,
      random: o.random ?? noRandomSource,
    };
    this.pool = new PagePool(maxTotalTokens, pageSize);
    this.cache = this.o.disableRadixCache ? null : new RadixCache(pageSize);
    this.ratio = new NewTokenRatio({
      conservativeness: o.scheduleConservativeness,
      init: o.initNewTokenRatio,
      minFactor: o.minNewTokenRatioFactor,
      decaySteps: o.newTokenRatioDecaySteps,
    });
    const cache = this.cache;
    this.admission = {
      available: () => this.pool.freeTokens + (cache === null ? 0 : cache.evictableTokens),
      runningReserve: 0,
      runningCount: 0,
      maxRunningRequests: this.o.maxRunningRequests,
      maxPrefillTokens: this.o.maxPrefillTokens,
      chunkedPrefillSize: this.o.chunkedPrefillSize,
      pageSize,
      clip: this.o.clip,
      match: cache === null ? () => null : (r) => cache.match(r.fillTokens(), r.fillLength - 1),
      lock: (node) => cache?.lock(node),
      unlock: (node) => cache?.unlock(node),
    };
  }

  /**
   * Queue a request. Validates first and changes nothing when it throws.
   * @throws SchedulerInputError (`empty_prompt`, `bad_token_ids`, `bad_max_new_tokens`, `duplicate_id`,
   *   `prompt_too_long`: `ceil_page(prompt) + min(maxNewTokens, clip) >= pool`, which no admission could pass).
   * @returns the request's live view.
   * @example
   * ```ts
   * scheduler.submit({ id: "r1", promptTokenIds: [1, 2, 3], maxNewTokens: 16 });
   * ```
   */
  submit(request: SubmitRequest): RequestView {
    const prompt = request.promptTokenIds;
    if (!Array.isArray(prompt) || prompt.length === 0) {
      throw new SchedulerInputError("empty_prompt", `request ${request.id}: the prompt has no tokens`);
    }
    for (const t of prompt) {
      if (!Number.isInteger(t) || t < 0) {
        throw new SchedulerInputError(
          "bad_token_ids",
          `request ${request.id}: token id ${t} is not a non-negative integer`,
        );
      }
    }
    const maxNew = request.maxNewTokens;
    if (!Number.isInteger(maxNew) || maxNew < 0) {
      throw new SchedulerInputError(
        "bad_max_new_tokens",
        `request ${request.id}: max_new_tokens must be a non-negative integer, got ${maxNew}`,
      );
    }
    if (this.live.has(request.id)) {
      throw new SchedulerInputError("duplicate_id", `request ${request.id}: a live request already has this id`);
    }
    const need = ceilToPage(prompt.length, this.o.pageSize) + Math.min(maxNew, this.o.clip);
    if (need >= this.pool.capacityTokens) {
      throw new SchedulerInputError(
        "prompt_too_long",
        `request ${request.id}: prompt of ${prompt.length} tokens plus min(max_new_tokens, ${this.o.clip}) = ${need} ` +
          `must be below the KV pool of ${this.pool.capacityTokens} tokens`,
      );
    }
    const r = new Req({ ...request, promptTokenIds: Array.from(prompt) }, this.seq++);
    this.live.set(r.id, r);
    this.waiting.push(r);
    this.waitingOrdered = false;
    this.waitingTokens += r.fillLength;
    this.counters.requestsTotal++;
    this.counters.promptTokensTotal += prompt.length;
    return r;
  }

  /**
   * Decide the next step at time `now` (seconds; any monotonic clock, used for the throughputs in events).
   * Order (SGLang's loop): continue a chunked prefill or run an admission round and prefill what it admits;
   * else check memory (retracting if short), decay the ratio and decode; with nothing waiting or running,
   * return `idle` and reset the ratio.
   * @throws SchedulerProtocolError if the previous batch was not completed.
   * @example
   * ```ts
   * const batch = scheduler.nextBatch(performance.now() / 1000);
   * ```
   */
  nextBatch(now: number): Batch {
    if (this.inFlight !== null) throw new SchedulerProtocolError("nextBatch: the previous batch was not completed");
    this.lastDecodeTic ??= now;
    this.lastPrefillTic ??= now;
    const events: SchedulerEvent[] = [];
    const ended: EndedRequest[] = [];
    for (;;) {
      if (this.chunked !== null || this.waiting.length > 0) {
        // Admission and aborts remove from a sorted queue without unsorting it; only appends do (lof sorts
        // 10,000 requests in ~150 us, too slow to repeat every step when nothing changed).
        if (this.o.schedulePolicy !== "lof" || !this.waitingOrdered) {
          orderWaiting(this.waiting, this.o.schedulePolicy, this.cache, this.o.random);
          this.waitingOrdered = true;
        }
        this.admission.runningReserve = this.reserveScaled * this.ratio.value + this.reserveFixed;
        this.admission.runningCount = this.running.length;
        const round = admitRound(this.admission, this.chunked, this.waiting);
        if (round.admitted.length > 0) return this.startPrefill(round, now, events, ended);
      }
      if (this.running.length > 0) {
        const batch = this.startDecode(now, events, ended);
        if (batch !== null) return batch;
        continue; // the last running request was aborted: what waits may now be admitted
      }
      this.ratio.reset();
      return { kind: "idle", events, ended };
    }
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
    const flight = this.inFlight;
    if (flight === null) throw new SchedulerProtocolError("completeBatch: no batch is in flight");
    const n = flight.kind === "prefill" ? flight.entries.length : flight.reqs.length;
    if (output.tokenIds.length !== n) {
      throw new SchedulerProtocolError(`completeBatch: ${output.tokenIds.length} token ids for ${n} batch items`);
    }
    this.inFlight = null;
    const stopped = output.stopped === undefined ? null : new Set(output.stopped);
    const ended: EndedRequest[] = [];
    if (flight.kind === "prefill") {
      for (let i = 0; i < n; i++) {
        const e = flight.entries[i] as PrefillEntry;
        const r = e.request as Req;
        if (r.status !== "running") continue; // aborted while the step ran
        this.cacheUnfinished(r);
        if (!e.lastChunk) continue;
        if (this.chunked === r) this.chunked = null;
        if (r.outputTokenIds.length >= r.maxNewTokens) {
          ended.push(this.end(r, "length")); // max_new_tokens 0: nothing to sample
          continue;
        }
        this.appendToken(r, output.tokenIds[i] as number);
        const reason = this.finishReason(r, stopped);
        if (reason !== null) ended.push(this.end(r, reason));
        else this.joinRunning(r);
      }
    } else {
      let anyEnded = false;
      // The hot loop of the engine (once per running request per step): locals instead of property writes.
      const clip = this.o.clip;
      const reqs = flight.reqs;
      const tokenIds = output.tokenIds;
      let produced = 0;
      let scaledDelta = 0;
      let fixedDelta = 0;
      for (let i = 0; i < n; i++) {
        const r = reqs[i] as Req;
        if (r.status !== "running") continue;
        const out = r.outputTokenIds;
        out.push(tokenIds[i] as number);
        produced++;
        const left = r.maxNewTokens - out.length;
        const reserved = left <= 0 ? 0 : Math.min(left, clip);
        if (r.ignoreEos) fixedDelta += reserved - r.reserved;
        else scaledDelta += reserved - r.reserved;
        r.reserved = reserved;
        const stop = stopped?.has(r.id) === true;
        if (left <= 0 || stop) {
          this.reserveFixed += fixedDelta;
          this.reserveScaled += scaledDelta;
          fixedDelta = 0;
          scaledDelta = 0;
          this.leaveRunning(r);
          ended.push(this.end(r, stop ? "stop" : "length"));
          anyEnded = true;
        }
      }
      this.reserveFixed += fixedDelta;
      this.reserveScaled += scaledDelta;
      this.counters.generationTokensTotal += produced;
      this.generatedSinceDecodeEvent += produced;
      if (anyEnded) this.running = this.running.filter((r) => r.status === "running");
      return { ended, events: [] };
    }
    return { ended, events: [this.prefillEvent(output.now ?? this.prefillReport.startedAt)] };
  }

  /**
   * The prefill line of the batch that just ran (SGLang's `report_prefill_stats`, called after the batch's result
   * is processed): usage and queue as they are now, throughput = this batch's tokens over the time since the
   * previous prefill line.
   */
  private prefillEvent(now: number): PrefillBatchEvent {
    const { startedAt: _, ...report } = this.prefillReport;
    const gap = now - (this.lastPrefillTic as number);
    this.lastPrefillTic = now;
    return {
      ...report,
      now,
      tokenUsage: this.usage(),
      queueReq: this.waiting.length,
      inputThroughput: gap > 0 ? report.newToken / gap : 0,
    };
  }

  /**
   * End a live request as `stop` (e.g. a stop string found after detokenising); its KV goes to the prefix
   * cache. Unknown or already ended ids return undefined.
   * @example
   * ```ts
   * scheduler.finish("r1");
   * ```
   */
  finish(id: string): EndedRequest | undefined {
    const r = this.live.get(id);
    if (r === undefined) return undefined;
    this.detach(r);
    const ended = this.end(r, "stop");
    return ended;
  }

  /**
   * Abort a live request (client gone): it leaves the queue or the batch and its slots are released at once
   * (not cached). Unknown or already ended ids return undefined (a disconnect may race the request's end).
   * @example
   * ```ts
   * req.on("close", () => scheduler.abort("r1", now()));
   * ```
   */
  abort(id: string, now = 0, message = "Client disconnected.", status = 499): AbortEvent | undefined {
    const r = this.live.get(id);
    if (r === undefined) return undefined;
    this.detach(r);
    this.releaseKv(r);
    this.markAborted(r);
    return { type: "abort", now, id, message, status };
  }

  /**
   * A live (waiting or running) request's view, or undefined.
   * @example
   * ```ts
   * scheduler.get("r1")?.outputTokenIds.length;
   * ```
   */
  get(id: string): RequestView | undefined {
    return this.live.get(id);
  }

  /**
   * Token slots an admission could still hand out now: free plus evictable slots, minus what the running
   * requests hold back for the output they may still produce (their clipped remaining max_new_tokens, scaled by
   * the new-token ratio unless they ignore EOS) - SGLang's `rem_total_tokens` at the start of an admission round.
   * An engine compares it with a typical request's footprint to say whether it would admit one now (`/load`).
   * @example
   * ```ts
   * const wouldAdmit = scheduler.admissionHeadroomTokens() > promptTokens + Math.min(maxTokens, 4096);
   * ```
   */
  admissionHeadroomTokens(): number {
    const evictable = this.cache === null ? 0 : this.cache.evictableTokens;
    return this.pool.freeTokens + evictable - (this.reserveScaled * this.ratio.value + this.reserveFixed);
  }

  /**
   * A snapshot of queue lengths, pool usage, the ratio and counters.
   * @example
   * ```ts
   * const { running, waiting, tokenUsage, newTokenRatio } = scheduler.state();
   * ```
   */
  state(): SchedulerState {
    const capacity = this.pool.capacityTokens;
    const evictable = this.cache === null ? 0 : this.cache.evictableTokens;
    const used = capacity - (this.pool.freeTokens + evictable);
    return {
      running: this.running.length,
      waiting: this.waiting.length,
      chunking: this.chunked !== null,
      maxTotalTokens: capacity,
      freeTokens: this.pool.freeTokens,
      evictableTokens: evictable,
      cachedTokens: this.cache === null ? 0 : this.cache.totalTokens,
      usedTokens: used,
      tokenUsage: used / capacity,
      newTokenRatio: this.ratio.value,
      inFlight: this.inFlight !== null,
      counters: { ...this.counters },
    };
  }

  /**
   * The scheduler's internal state, read-only, for the invariant checker (`checkSchedulerInvariants` in
   * invariants.ts) - not for driving the scheduler.
   * @example
   * ```ts
   * if (batch.kind === "idle") checkSchedulerInvariants(scheduler); // reads scheduler.internals()
   * ```
   */
  internals(): SchedulerInternals {
    return {
      pageSize: this.o.pageSize,
      clip: this.o.clip,
      live: this.live,
      waiting: this.waiting,
      running: this.running,
      pool: this.pool,
      cache: this.cache,
      reserveScaled: this.reserveScaled,
      reserveFixed: this.reserveFixed,
      waitingTokens: this.waitingTokens,
      deciding: this.inFlight?.kind === "decode" ? new Set(this.inFlight.reqs) : null,
    };
  }

  // ---- steps ---------------------------------------------------------------------------------------------

  private startPrefill(round: AdmissionRound, now: number, events: SchedulerEvent[], ended: EndedRequest[]): Batch {
    const fromQueue = this.waiting.splice(0, round.admittedFromQueue);
    for (const r of fromQueue) {
      this.waitingTokens -= r.fillLength;
      r.status = "running";
    }
    const runningBefore = this.running.length;
    const entries: PrefillEntry[] = [];
    let chunked: Req | null = null;
    for (const a of round.admitted) {
      const r = a.req;
      if (r !== this.chunked) {
        // A new admission: it starts from its locked cached prefix.
        r.node = a.node;
        r.cachedLength = a.cachedTokens;
        r.kvLength = a.cachedTokens;
      }
      const start = r.kvLength;
      this.allocate(r, a.extend);
      entries.push({
        request: r,
        extendTokens: a.extend,
        startPosition: start,
        cachedTokens: a.cachedTokens,
        lastChunk: a.lastChunk,
      });
      if (!a.lastChunk) chunked = r;
    }
    this.chunked = chunked;
    const pending = this.waitingTokens + (chunked === null ? 0 : chunked.fillLength - chunked.kvLength);
    this.prefillReport = {
      type: "prefill",
      newSeq: entries.length,
      newToken: round.newTokens,
      cachedToken: round.cachedTokens,
      runningReq: runningBefore,
      pendingToken: pending,
      startedAt: now,
    };
    this.counters.prefillBatchesTotal++;
    this.counters.prefillTokensTotal += round.newTokens;
    this.counters.cachedTokensTotal += round.cachedTokens;
    this.inFlight = { kind: "prefill", entries };
    const batch: PrefillBatch = { kind: "prefill", entries, events, ended };
    return batch;
  }

  private startDecode(now: number, events: SchedulerEvent[], ended: EndedRequest[]): DecodeBatch | null {
    const P = this.o.pageSize;
    let need = decodePagesNeeded(this.running, P);
    if (this.fits(need)) {
      this.ratio.decay();
    } else {
      const oldRatio = this.ratio.value;
      const outcome = retract(
        { pageSize: P, fits: (pages) => this.fits(pages), release: (r) => this.releaseKv(r) },
        this.running,
      );
      this.running = outcome.remaining;
      let inputTokens = 0;
      let outputTokens = 0;
      const requeued: Req[] = [];
      const neverFits: EndedRequest[] = [];
      for (const r of outcome.retracted) {
        this.leaveRunning(r);
        inputTokens += r.promptTokenIds.length;
        outputTokens += r.outputTokenIds.length;
        r.retractions++;
        const readmittable = ceilToPage(r.fillLength, P) + r.remainingClipped(this.o.clip) < this.pool.capacityTokens;
        if (readmittable) {
          r.status = "waiting";
          requeued.push(r);
        } else {
          this.markAborted(r);
          neverFits.push({
            id: r.id,
            reason: "abort",
            outputTokenIds: r.outputTokenIds,
            message: NEVER_FITS_AGAIN_MESSAGE,
            status: 500,
          });
        }
      }
      for (const r of requeued) {
        this.waitingOrdered = false;
        this.waiting.push(r);
        this.waitingTokens += r.fillLength;
      }
      let sumOut = 0;
      let sumMaxNew = 0;
      for (const r of this.running) {
        sumOut += r.outputTokenIds.length;
        sumMaxNew += r.maxNewTokens;
      }
      this.ratio.value = ratioAfterRetraction(sumOut, this.running.length, sumMaxNew, this.o.retractDecodeSteps);
      this.counters.retractionsTotal++;
      this.counters.retractedRequestsTotal += outcome.retracted.length;
      this.counters.retractedInputTokensTotal += inputTokens;
      this.counters.retractedOutputTokensTotal += outputTokens;
      events.push({
        type: "retraction",
        now,
        retractedIds: outcome.retracted.map((r) => r.id),
        inputTokens,
        outputTokens,
        oldRatio,
        newRatio: this.ratio.value,
      });
      for (const e of neverFits) {
        ended.push(e);
        events.push({ type: "abort", now, id: e.id, message: NEVER_FITS_AGAIN_MESSAGE, status: 500 });
      }
      if (outcome.aborted !== null) {
        const r = outcome.aborted;
        this.leaveRunning(r);
        this.markAborted(r);
        ended.push({
          id: r.id,
          reason: "abort",
          outputTokenIds: r.outputTokenIds,
          message: OUT_OF_MEMORY_ABORT_MESSAGE,
          status: 500,
        });
        events.push({ type: "abort", now, id: r.id, message: OUT_OF_MEMORY_ABORT_MESSAGE, status: 500 });
      }
      if (this.running.length === 0) return null;
      need = decodePagesNeeded(this.running, P);
    }
    this.pool.allocate(need);
    const reqs = this.running.slice();
    for (const r of reqs) r.kvLength++;
    this.counters.decodeStepsTotal++;
    if (this.counters.decodeStepsTotal % this.o.decodeLogInterval === 0) {
      const gap = now - (this.lastDecodeTic as number);
      const capacity = this.pool.capacityTokens;
      const used = capacity - this.available();
      events.push({
        type: "decode",
        now,
        runningReq: reqs.length,
        token: used,
        tokenUsage: used / capacity,
        genThroughput: gap > 0 ? this.generatedSinceDecodeEvent / gap : 0,
        queueReq: this.waiting.length,
      });
      this.lastDecodeTic = now;
      this.generatedSinceDecodeEvent = 0;
    }
    this.inFlight = { kind: "decode", reqs };
    return { kind: "decode", requests: reqs, events, ended };
  }

  // ---- slots ---------------------------------------------------------------------------------------------

  private available(): number {
    return this.pool.freeTokens + (this.cache === null ? 0 : this.cache.evictableTokens);
  }

  private usage(): number {
    const capacity = this.pool.capacityTokens;
    return (capacity - this.available()) / capacity;
  }

  /** Evict from the prefix cache as needed; true when `pages` pages are free. */
  private fits(pages: number): boolean {
    if (this.pool.freePages < pages && this.cache !== null) {
      const freed = this.cache.evict((pages - this.pool.freePages) * this.o.pageSize);
      this.pool.release(freed / this.o.pageSize);
    }
    return this.pool.freePages >= pages;
  }

  /** Give `r` KV for `extend` more tokens. Admission guaranteed the room, so a shortfall is a bug. */
  private allocate(r: Req, extend: number): void {
    const P = this.o.pageSize;
    const before = Math.ceil((r.kvLength - r.cachedLength) / P);
    const after = Math.ceil((r.kvLength + extend - r.cachedLength) / P);
    if (!this.fits(after - before)) throw new Error(`scheduler: no room to prefill ${r.id} (admission bug)`);
    this.pool.allocate(after - before);
    r.kvLength += extend;
  }

  /** Free what `r` owns and unlock its prefix (not cached): retraction and abort. */
  private releaseKv(r: Req): void {
    const P = this.o.pageSize;
    this.pool.release(Math.ceil((r.kvLength - r.cachedLength) / P));
    if (r.node !== null) this.cache?.unlock(r.node);
    r.node = null;
    r.kvLength = 0;
    r.cachedLength = 0;
  }

  /**
   * Hand `r`'s computed whole pages to the prefix cache (SGLang's cache_unfinished_req): the tree takes the new
   * part, slots duplicating what another request already cached are freed, and `r` now locks the longer prefix.
   */
  private cacheUnfinished(r: Req): void {
    const cache = this.cache;
    if (cache === null) return;
    const P = this.o.pageSize;
    const aligned = floorToPage(r.kvLength, P);
    if (aligned <= r.cachedLength) return;
    const ins = cache.insert(r.fillTokens(), aligned);
    this.pool.release((ins.length - r.cachedLength) / P); // duplicates of slots already in the tree
    cache.lock(ins.node);
    if (r.node !== null) cache.unlock(r.node);
    r.node = ins.node;
    r.cachedLength = aligned;
  }

  // ---- request life --------------------------------------------------------------------------------------

  private appendToken(r: Req, token: number): void {
    r.outputTokenIds.push(token);
    this.counters.generationTokensTotal++;
  }

  private finishReason(r: Req, stopped: Set<string> | null): EndReason | null {
    if (stopped?.has(r.id)) return "stop";
    return r.outputTokenIds.length >= r.maxNewTokens ? "length" : null;
  }

  private joinRunning(r: Req): void {
    r.reserved = r.remainingClipped(this.o.clip);
    if (r.ignoreEos) this.reserveFixed += r.reserved;
    else this.reserveScaled += r.reserved;
    this.running.push(r);
  }

  /** Undo {@link joinRunning}'s reservation (the caller removes `r` from the running list). */
  private leaveRunning(r: Req): void {
    if (r.ignoreEos) this.reserveFixed -= r.reserved;
    else this.reserveScaled -= r.reserved;
    r.reserved = 0;
  }

  /** Take a live request out of whichever queue or batch holds it. */
  private detach(r: Req): void {
    if (r.status === "waiting") {
      const i = this.waiting.indexOf(r);
      this.waiting.splice(i, 1);
      this.waitingTokens -= r.fillLength;
      return;
    }
    if (this.chunked === r) this.chunked = null;
    const i = this.running.indexOf(r);
    if (i >= 0) {
      this.running.splice(i, 1);
      this.leaveRunning(r);
    }
  }

  /** A finished request: cache its KV, free the rest. */
  private end(r: Req, reason: EndReason): EndedRequest {
    if (r.status === "running") {
      this.cacheUnfinished(r);
      this.releaseKv(r);
    }
    r.status = "finished";
    this.live.delete(r.id);
    this.counters.finishedRequestsTotal++;
    return { id: r.id, reason, outputTokenIds: r.outputTokenIds };
  }

  private markAborted(r: Req): void {
    r.status = "aborted";
    this.live.delete(r.id);
    this.counters.abortedRequestsTotal++;
  }
}
