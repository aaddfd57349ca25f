import type { SchedulerLike } from "../../../src/engine/engine-loop";
import type {
  Batch,
  BatchOutput,
  EndedRequest,
  RequestView,
  SchedulerOptions,
  SchedulerState,
  StepResult,
  SubmitRequest,
} from "../../../src/scheduler/index";

const OOM = "Out of memory even after retracting all other requests in the decode batch. Aborting the last request.";

interface Req {
  id: string;
  promptTokenIds: readonly number[];
  outputTokenIds: number[];
  maxNewTokens: number;
  ignoreEos: boolean;
  status: RequestView["status"];
  retractions: number;
}

/**
 * A deliberately tiny scheduler double (FCFS, budget = prompt + maxNew, no ratio, no retraction) so the
 * engine's HTTP and loop plumbing can be tested on its own; `oomAbortAtStep` makes it abort the first
 * running request with status 500 at that decode step, as the real one does when out of memory.
 */
export function fakeScheduler(extra: { oomAbortAtStep?: number } = {}) {
  return (options: SchedulerOptions): SchedulerLike => {
    const reqs = new Map<string, Req>();
    const waiting: Req[] = [];
    const running: Req[] = [];
    let inFlight: Req[] | null = null;
    let decodeSteps = 0;
    const counters = {
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
    const used = () => running.reduce((s, r) => s + r.promptTokenIds.length + r.maxNewTokens, 0);
    const remove = (r: Req) => {
      for (const list of [waiting, running]) {
        const i = list.indexOf(r);
        if (i >= 0) list.splice(i, 1);
      }
      reqs.delete(r.id);
    };
    const end = (r: Req, reason: EndedRequest["reason"]): EndedRequest => {
      remove(r);
      r.status = reason === "abort" ? "aborted" : "finished";
      if (reason === "abort") counters.abortedRequestsTotal++;
      else counters.finishedRequestsTotal++;
      return { id: r.id, reason, outputTokenIds: r.outputTokenIds };
    };
    return {
      submit(request: SubmitRequest) {
        const r: Req = {
          id: request.id,
          promptTokenIds: request.promptTokenIds,
          outputTokenIds: [],
          maxNewTokens: request.maxNewTokens,
          ignoreEos: request.ignoreEos ?? false,
          status: "waiting",
          retractions: 0,
        };
        reqs.set(r.id, r);
        waiting.push(r);
        counters.requestsTotal++;
        counters.promptTokensTotal += r.promptTokenIds.length;
        return r;
      },
      nextBatch(now: number): Batch {
        const admitted: Req[] = [];
        while (waiting.length > 0) {
          const r = waiting[0] as Req;
          if (running.length >= (options.maxRunningRequests ?? 1e9)) break;
          if (used() + r.promptTokenIds.length + r.maxNewTokens >= options.maxTotalTokens) break;
          waiting.shift();
          r.status = "running";
          running.push(r);
          admitted.push(r);
        }
        if (admitted.length > 0) {
          inFlight = admitted;
          return {
            kind: "prefill",
            entries: admitted.map((r) => ({
              request: r,
              extendTokens: r.promptTokenIds.length,
              startPosition: 0,
              cachedTokens: 0,
              lastChunk: true,
            })),
            events: [],
            ended: [],
          };
        }
        if (running.length === 0) return { kind: "idle", events: [], ended: [] };
        decodeSteps++;
        if (extra.oomAbortAtStep === decodeSteps) {
          const victim = running[0] as Req;
          const ended = [{ ...end(victim, "abort"), status: 500, message: OOM }];
          const event = {
            type: "abort" as const,
            now,
            id: victim.id,
            status: 500,
            message: OOM,
          };
          if (running.length === 0) return { kind: "idle", events: [event], ended };
          inFlight = [...running];
          return { kind: "decode", requests: inFlight, events: [event], ended };
        }
        inFlight = [...running];
        return { kind: "decode", requests: inFlight, events: [], ended: [] };
      },
      completeBatch(output: BatchOutput): StepResult {
        const items = inFlight ?? [];
        inFlight = null;
        const stopped = new Set(output.stopped ?? []);
        const ended: EndedRequest[] = [];
        items.forEach((r, i) => {
          if (!reqs.has(r.id)) return;
          r.outputTokenIds.push(output.tokenIds[i] as number);
          counters.generationTokensTotal++;
          if (stopped.has(r.id)) ended.push(end(r, "stop"));
          else if (r.outputTokenIds.length >= r.maxNewTokens) ended.push(end(r, "length"));
        });
        return { ended, events: [] };
      },
      abort(id: string, now = 0, message = "Client disconnected.", status = 499) {
        const r = reqs.get(id);
        if (!r) return undefined;
        end(r, "abort");
        return { type: "abort" as const, now, id, message, status };
      },
      get(id: string) {
        return reqs.get(id);
      },
      admissionHeadroomTokens() {
        const clip = options.clipMaxNewTokens ?? 4096;
        const reserved = running.reduce(
          (sum, r) => sum + Math.min(Math.max(r.maxNewTokens - r.outputTokenIds.length, 0), clip) * 0.7,
          0,
        );
        return options.maxTotalTokens - used() - reserved;
      },
      state(): SchedulerState {
        const u = used();
        return {
          running: running.length,
          waiting: waiting.length,
          chunking: false,
          maxTotalTokens: options.maxTotalTokens,
          freeTokens: options.maxTotalTokens - u,
          evictableTokens: 0,
          cachedTokens: 0,
          usedTokens: u,
          tokenUsage: u / options.maxTotalTokens,
          newTokenRatio: 0.7,
          inFlight: inFlight !== null,
          counters: { ...counters },
        };
      },
    };
  };
}
