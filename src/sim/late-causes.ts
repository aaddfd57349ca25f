import type { RequestTrace } from "./trace";

/**
 * Why a request was not served within a completion horizon of its first attempt (its deadline), from what its client
 * saw, in this order of precedence:
 * - `lost`: never served (out of retries, or still waiting when the run ended);
 * - `shed`: an attempt made before the deadline waited in the queue and was shed from it (its timeout, or pushed
 *   out by another request);
 * - `refusedAgain`: a retry made before the deadline was refused at once (a promise broken, or no room for it);
 * - `sentPastHint` / `sentPastBackoff`: every attempt before the deadline was refused, and the delay before the next
 *   one (the server's hint, or the client's own backoff) brought it back after the deadline;
 * - `waited`: its served attempt came before the deadline and waited for a slot: placed at once, it would have made it;
 * - `cameBackNear`: its served attempt came before the deadline but with less time left than its answer took from
 *   placement (it came back too near the deadline, or its answer was slow in a full batch).
 */
export const LATE_CAUSES = [
  "lost",
  "shed",
  "refusedAgain",
  "sentPastHint",
  "sentPastBackoff",
  "waited",
  "cameBackNear",
] as const;

/** One of {@link LATE_CAUSES}. */
export type LateCause = (typeof LATE_CAUSES)[number];

/** An attempt refused this long after it reached the router had waited in the queue: shed, not refused at once. */
const SHED_AFTER_MS = 1000;

/**
 * Why one request missed `horizonS` (see {@link LATE_CAUSES}), or `undefined` when it was served within it.
 *
 * @example
 * ```ts
 * lateCauseOf(trace, 30); // "sentPastHint": refused, and told to come back after its 30 s were up
 * ```
 */
export function lateCauseOf(request: RequestTrace, horizonS: number): LateCause | undefined {
  const deadlineMs = request.arrivalMs + horizonS * 1000;
  if (request.result === "served" && (request.completedAtMs ?? Number.POSITIVE_INFINITY) <= deadlineMs)
    return undefined;
  if (request.result !== "served") return "lost";
  const inTime = request.attempts.filter((a) => a.atMs <= deadlineMs && a.outcome === "rejected");
  if (inTime.some((a) => a.answeredAtMs - a.atMs > SHED_AFTER_MS)) return "shed";
  const served = request.attempts.at(-1);
  if (!served) throw new Error(`request ${request.id} was served without an attempt`);
  if (served.atMs > deadlineMs) {
    if (inTime.some((a) => a !== request.attempts[0])) return "refusedAgain";
    // The first attempt made after the deadline: its delay was the last refusal's hint, or the client's own backoff.
    const next = request.attempts.find((a) => a.atMs > deadlineMs);
    return next?.hinted ? "sentPastHint" : "sentPastBackoff";
  }
  const answerMs = (request.completedAtMs as number) - served.answeredAtMs;
  return served.atMs + answerMs <= deadlineMs ? "waited" : "cameBackNear";
}

/** How many requests of a run missed a horizon, by cause, and how many were offered. */
export interface LateCounts {
  offered: number;
  late: number;
  byCause: Record<LateCause, number>;
}

/**
 * The requests of a run (seeds pooled) that missed `horizonS`, counted by cause.
 *
 * @example
 * ```ts
 * const counts = lateCauses(poolTraces(traces).requests, 30);
 * counts.byCause.sentPastHint / counts.offered; // share of the offered told to come back after their 30 s
 * ```
 */
export function lateCauses(requests: readonly RequestTrace[], horizonS: number): LateCounts {
  const byCause = Object.fromEntries(LATE_CAUSES.map((c) => [c, 0])) as Record<LateCause, number>;
  let late = 0;
  for (const request of requests) {
    const cause = lateCauseOf(request, horizonS);
    if (cause === undefined) continue;
    late += 1;
    byCause[cause] += 1;
  }
  return { offered: requests.length, late, byCause };
}
