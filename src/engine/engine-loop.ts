import {
  type Batch,
  type EndedRequest,
  formatEventLine,
  type RequestView,
  resolveSchedulerOptions,
  Scheduler,
  type SchedulerCounters,
  type SchedulerEvent,
  SchedulerInputError,
  type SchedulerOptions,
} from "../scheduler/index";
import { endsGeneration } from "./end-of-generation";
import type { Engine } from "./engine";
import type { EngineCore, GenerationRequest, GenerationSink, GenerationUsage, LoadReport } from "./generation";
import { checkGenerationRequest } from "./generation-request-check";
import { IncrementalDecoder } from "./incremental-decoder";
import type { Logger } from "./log-line";
import type { EngineMetrics } from "./metrics";
import { ApiError } from "./openai-error";
import { createRetractedReqsGauge } from "./retracted-reqs-gauge";
import { StopMatcher } from "./stop-matcher";
import type { Tokenizer } from "./tokenizer";

interface Live {
  request: GenerationRequest;
  sink: GenerationSink;
  stop: StopMatcher;
  /** Token ids to text deltas, holding back a character split over tokens. */
  text: IncrementalDecoder;
  arrivalS: number;
  admittedS: number | null;
  lastTokenS: number | null;
  cachedTokens: number;
  /** Admission footprint (prompt + clipped max_tokens), for the /load estimate. */
  footprint: number;
  /** Its output length once the scheduler has ended it and its last text is being delivered; null before. */
  endedOutputTokens: number | null;
}

/** The scheduler methods the loop uses (the real {@link Scheduler}, or a test double). */
export type SchedulerLike = Pick<
  Scheduler,
  "submit" | "nextBatch" | "completeBatch" | "abort" | "get" | "state" | "admissionHeadroomTokens"
>;

/** Options of {@link createEngineLoop}. */
export interface EngineLoopOptions {
  scheduler: SchedulerOptions;
  /**
   * SGLang's `--max-queued-requests`: with this many requests waiting, {@link EngineCore.submit} refuses a new one
   * (503, {@link QUEUE_FULL_MESSAGE}). Undefined: no bound.
   */
  maxQueuedRequests?: number;
  /** Builds the scheduler (default `new Scheduler(options)`); tests inject doubles here. */
  createScheduler?: (options: SchedulerOptions) => SchedulerLike;
  engine: Engine;
  tokenizer: Tokenizer;
  metrics: EngineMetrics;
  logger: Logger;
  /** Seconds on a monotonic clock. */
  now?: () => number;
  /** Called when the loop goes idle (the pacer restarts from now). */
  onIdle?: () => void;
}

/** SGLang's message for a request refused because the waiting queue is full (`--max-queued-requests`). */
export const QUEUE_FULL_MESSAGE = "The request queue is full.";

/**
 * The engine loop: drives the {@link Scheduler} step by step (prefill batches, decode steps, retraction,
 * aborts), runs each batch on the {@link Engine}, streams text to each request's sink, and keeps logs and
 * metrics. It implements {@link EngineCore} for the HTTP layer.
 *
 * `GET /load`'s `accepting` is true when nothing waits, fewer than `maxRunningRequests` run, and the
 * token budget left by the running requests' forecast (SGLang's admission arithmetic) is larger than the
 * average footprint (prompt + clipped max_tokens) of the last 32 requests - i.e. a typical new request
 * would be admitted at the next step instead of queueing.
 *
 * With `maxQueuedRequests`, a request that arrives while that many wait is refused at once, as SGLang's scheduler
 * refuses it (`len(waiting_queue) + 1 > max_queued_requests`): 503 with {@link QUEUE_FULL_MESSAGE}, before it is
 * queued, so a stream is refused before its first byte. Retracted requests count as waiting; running ones and a
 * prompt being prefilled in chunks do not.
 *
 * @example
 * ```ts
 * const core = createEngineLoop({ scheduler: { maxTotalTokens: 4096 }, engine, tokenizer, metrics, logger });
 * const abort = core.submit(generation, sink);
 * ```
 */
export function createEngineLoop(options: EngineLoopOptions): EngineCore {
  const now = options.now ?? (() => performance.now() / 1000);
  const { engine, tokenizer, metrics, logger } = options;
  const scheduler = (options.createScheduler ?? ((o) => new Scheduler(o)))(options.scheduler);
  const { clipMaxNewTokens: clip, maxRunningRequests: maxRunning } = resolveSchedulerOptions(options.scheduler);
  const live = new Map<string, Live>();
  const recentFootprints: number[] = [];
  let counters: SchedulerCounters = scheduler.state().counters;
  let wake: (() => void) | null = null;
  let closed = false;

  metrics.maxTotalNumTokens.set(scheduler.state().maxTotalTokens);
  const retractedGauge = createRetractedReqsGauge((v) => metrics.numRetractedReqs.set(v));

  const usageOf = (l: Live, outputTokens: number): GenerationUsage => ({
    promptTokens: l.request.promptTokens.length,
    completionTokens: outputTokens,
    cachedTokens: l.cachedTokens,
  });

  /** SGLang's `observe_one_finished_request`: request and token counters count a request when it ends. */
  const countEnded = (l: Live, outputTokens: number) => {
    metrics.numRequestsTotal.inc();
    metrics.promptTokensTotal.inc(l.request.promptTokens.length);
    metrics.generationTokensTotal.inc(outputTokens);
    if (l.cachedTokens > 0) metrics.cachedTokensTotal.inc(l.cachedTokens);
    metrics.e2eRequestLatency.observe(now() - l.arrivalS);
  };

  /** Takes a request out of the live set: its KV is released and its end counted. Undefined once it has ended. */
  const retire = (id: string, outputTokens: number): Live | undefined => {
    const l = live.get(id);
    if (l === undefined) return undefined;
    live.delete(id);
    engine.release(id);
    countEnded(l, outputTokens);
    return l;
  };

  /**
   * Ends a live request as aborted (the client went away, or its sink threw): its KV is freed now, the abort is logged
   * as SGLang logs it, and no sink method is called here. A no-op once the request ended. A request whose last text
   * is being delivered has already ended in the scheduler: its abort is logged and counted here instead.
   */
  const cancel = (id: string, message = "Client disconnected.", status = 499) => {
    const l = live.get(id);
    if (l === undefined) return;
    retire(id, l.endedOutputTokens ?? scheduler.get(id)?.outputTokenIds.length ?? 0);
    if (l.endedOutputTokens === null) {
      const event = scheduler.abort(id, now(), message, status);
      if (event) logger.info(formatEventLine(event));
    } else {
      logger.info(formatEventLine({ type: "abort", now: now(), id, message, status }));
      metrics.numAbortedRequestsTotal.inc();
    }
    syncMetrics();
  };

  /**
   * Calls one method of a request's sink; false when it threw. A package user's sink runs inside this loop, so a
   * throw is that request's bug alone: it is logged once, the request is cancelled (status 500) if it still runs,
   * and after a throwing onText the sink hears onError once - never after onFinish or onError, whose throw ends
   * nothing more. The loop then goes on serving the others.
   */
  const callSink = (l: Live, method: keyof GenerationSink, outputTokens: number, call: (s: GenerationSink) => void) => {
    const wasLive = live.has(l.request.id);
    try {
      call(l.sink);
      return true;
    } catch (error) {
      logger.error(`GenerationSink.${method} of request ${l.request.id} threw: ${shown(error)}`);
      // The call itself ended the request (the sink called its abort function, or close()): it hears nothing more.
      if (wasLive && !live.has(l.request.id)) return false;
      const message = `GenerationSink.${method} threw`;
      cancel(l.request.id, message, 500);
      if (method === "onText")
        callSink(l, "onError", outputTokens, (s) => s.onError(message, usageOf(l, outputTokens)));
      return false;
    }
  };

  const endLive = (id: string, ended: EndedRequest) => {
    const outputTokens = ended.outputTokenIds.length;
    const l = live.get(id);
    if (!l) return;
    if (ended.reason === "abort") {
      retire(id, outputTokens);
      callSink(l, "onError", outputTokens, (s) =>
        s.onError(ended.message ?? "request aborted", usageOf(l, outputTokens)),
      );
      return;
    }
    // The decoder's held-back tail (a character cut by the last token) may still complete a stop string: the
    // text is cut there, and the finish reason is then "stop", not "length".
    const last = l.stop.push(l.text.flush());
    const rest = last.text + l.stop.flush();
    const reason = last.stopped ? "stop" : ended.reason;
    if (rest !== "") {
      // Still live while its last text is delivered: a throw there (or its abort function) ends it as aborted, as
      // one step earlier.
      l.endedOutputTokens = outputTokens;
      if (!callSink(l, "onText", outputTokens, (s) => s.onText(rest)) || !live.has(id)) return;
    }
    retire(id, outputTokens);
    callSink(l, "onFinish", outputTokens, (s) => s.onFinish(reason, usageOf(l, outputTokens)));
  };

  const handleEvents = (events: readonly SchedulerEvent[]) => {
    for (const e of events) {
      logger.info(formatEventLine(e));
      switch (e.type) {
        case "prefill": {
          const total = e.newToken + e.cachedToken;
          metrics.cacheHitRate.set(total > 0 ? e.cachedToken / total : 0);
          retractedGauge.logLine();
          break;
        }
        case "decode":
          metrics.genThroughput.set(e.genThroughput);
          retractedGauge.logLine();
          break;
        case "retraction":
          retractedGauge.retracted(e.retractedIds.length);
          for (const id of e.retractedIds) engine.retract?.(id);
          break;
        case "abort": {
          const l = live.get(e.id);
          if (l) endLive(e.id, { id: e.id, reason: "abort", outputTokenIds: [], message: e.message, status: e.status });
          break;
        }
      }
    }
  };

  const syncMetrics = () => {
    const s = scheduler.state();
    metrics.numRunningReqs.set(s.running);
    metrics.numQueueReqs.set(s.waiting);
    metrics.numUsedTokens.set(s.usedTokens);
    metrics.tokenUsage.set(s.tokenUsage);
    metrics.newTokenRatio.set(s.newTokenRatio);
    const c = s.counters;
    const inc = (counter: { inc(v: number): void }, a: number, b: number) => {
      if (a > b) counter.inc(a - b);
    };
    inc(metrics.numAbortedRequestsTotal, c.abortedRequestsTotal, counters.abortedRequestsTotal);
    inc(metrics.numRetractedRequestsTotal, c.retractedRequestsTotal, counters.retractedRequestsTotal);
    inc(metrics.numRetractedInputTokensTotal, c.retractedInputTokensTotal, counters.retractedInputTokensTotal);
    inc(metrics.numRetractedOutputTokensTotal, c.retractedOutputTokensTotal, counters.retractedOutputTokensTotal);
    counters = c;
  };

  /** Text of one new token through the stop matcher; true when a stop string ends the request. */
  const emitToken = (l: Live, token: number, t: number): boolean => {
    if (l.lastTokenS === null) metrics.timeToFirstToken.observe(t - l.arrivalS);
    else metrics.interTokenLatency.observe(t - l.lastTokenS);
    l.lastTokenS = t;
    // An end-of-generation token is no text (its special-token text would leak into the answer).
    if (endsGeneration(tokenizer, token)) return false;
    const { text, stopped } = l.stop.push(l.text.push(token));
    if (text === "") return stopped;
    const outputTokens = scheduler.get(l.request.id)?.outputTokenIds.length ?? 0;
    return callSink(l, "onText", outputTokens, (s) => s.onText(text)) && stopped;
  };

  const runBatch = async (batch: Exclude<Batch, { kind: "idle" }>) => {
    let items: readonly RequestView[];
    let tokenIds: number[];
    const yields: boolean[] = [];
    if (batch.kind === "prefill") {
      const t = now();
      for (const entry of batch.entries) {
        const l = live.get(entry.request.id);
        if (l && l.admittedS === null) {
          l.admittedS = t;
          l.cachedTokens = entry.cachedTokens;
          metrics.queueTime.observe(t - l.arrivalS);
        }
        yields.push(entry.lastChunk);
      }
      items = batch.entries.map((e) => e.request);
      tokenIds = await engine.prefill(batch);
    } else {
      items = batch.requests;
      for (let i = 0; i < items.length; i++) yields.push(true);
      tokenIds = await engine.decode(batch);
    }
    const t = now();
    const stopped: string[] = [];
    for (let i = 0; i < items.length; i++) {
      const r = items[i] as RequestView;
      const l = live.get(r.id);
      // Aborted while the step ran: the scheduler ignores its token, and so do we.
      if (!l || !yields[i]) continue;
      const token = tokenIds[i] as number;
      const stopString = emitToken(l, token, t);
      if (!live.has(r.id)) continue; // its sink threw: cancelled, as if its client had gone away
      if (stopString || (!r.ignoreEos && endsGeneration(tokenizer, token))) stopped.push(r.id);
    }
    const { ended, events } = scheduler.completeBatch({ tokenIds, stopped, now: t });
    handleEvents(events);
    for (const e of ended) endLive(e.id, e);
  };

  const failAll = (message: string) => {
    for (const [id, l] of live) {
      retire(id, scheduler.get(id)?.outputTokenIds.length ?? 0);
      callSink(l, "onError", 0, (s) => s.onError(message, usageOf(l, 0)));
    }
  };

  const loop = async () => {
    while (!closed) {
      const batch = scheduler.nextBatch(now());
      handleEvents(batch.events);
      // Out-of-memory aborts decided while preparing the step (also announced as abort events).
      for (const e of batch.ended ?? []) endLive(e.id, e);
      if (batch.kind === "idle") {
        syncMetrics();
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        options.onIdle?.();
        continue;
      }
      await runBatch(batch);
      syncMetrics();
    }
  };

  const running = loop().catch((error: unknown) => {
    logger.error(`engine loop stopped: ${(error as Error).stack ?? String(error)}`);
    closed = true;
    failAll("engine loop failed");
  });

  return {
    submit(request, sink) {
      if (closed) throw new ApiError(503, "engine server is shutting down", { type: "server_error" });
      // Before the scheduler queues it: what throws after that leaves a queued request no sink hears of.
      checkGenerationRequest(request, sink);
      const cap = options.maxQueuedRequests;
      if (cap !== undefined && scheduler.state().waiting >= cap)
        throw new ApiError(503, QUEUE_FULL_MESSAGE, { type: "server_error" });
      try {
        scheduler.submit({
          id: request.id,
          promptTokenIds: request.promptTokens,
          maxNewTokens: request.maxTokens,
          ignoreEos: request.ignoreEos,
        });
      } catch (error) {
        if (error instanceof SchedulerInputError)
          throw new ApiError(400, error.message, {
            param: error.code === "prompt_too_long" ? "prompt" : null,
            code: error.code,
          });
        throw error;
      }
      const footprint = request.promptTokens.length + Math.min(request.maxTokens, clip);
      recentFootprints.push(footprint);
      if (recentFootprints.length > 32) recentFootprints.shift();
      live.set(request.id, {
        request,
        sink,
        stop: new StopMatcher(request.stop),
        text: new IncrementalDecoder((ids) => tokenizer.decode(ids)),
        arrivalS: now(),
        admittedS: null,
        lastTokenS: null,
        cachedTokens: 0,
        footprint,
        endedOutputTokens: null,
      });
      wake?.();
      return () => cancel(request.id);
    },
    load(): LoadReport {
      const s = scheduler.state();
      const budget = scheduler.admissionHeadroomTokens();
      const typical = recentFootprints.length
        ? recentFootprints.reduce((a, b) => a + b, 0) / recentFootprints.length
        : 0;
      return {
        queueLength: s.running + s.waiting,
        running: s.running,
        waiting: s.waiting,
        accepting: !closed && s.waiting === 0 && s.running < maxRunning && budget > typical,
        tokenUsage: s.tokenUsage,
        maxRunningRequests: maxRunning,
      };
    },
    async close() {
      closed = true;
      const ids = [...live.keys()];
      failAll("engine server is shutting down"); // first: it counts each request's output before the abort drops it
      for (const id of ids) scheduler.abort(id, now(), "Server shutting down.", 503);
      wake?.();
      await running;
    },
  };
}

/** A thrown value as text; what a package user throws may not even convert to a string. */
function shown(error: unknown): string {
  try {
    return String(error);
  } catch {
    return "a value that String() cannot convert";
  }
}
