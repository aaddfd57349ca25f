import type { RequestTrace } from "./trace";

/**
 * When the router heard that each served request's slot was free again: its lease is released the moment the
 * Worker has the whole response, half the client's round trip before the client does (src/sim/simulation.ts).
 */
function slotReleasesMs(requests: readonly RequestTrace[]): number[] {
  return requests
    .filter((t) => t.result === "served")
    .map((t) => (t.completedAtMs as number) - t.roundTripMs / 2)
    .sort((a, b) => a - b);
}

/** The first value of sorted `xs` at or after `t` (binary search); `undefined` when none is. */
function firstAtOrAfter(xs: readonly number[], t: number): number | undefined {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return xs[lo];
}

/**
 * The time to success (seconds) each served request of `chosen` would have had, had the router placed it at the
 * first slot release after its admitted attempt reached the router (never later than it actually was placed):
 * the best any queue order could do with the run's completion times. With requests of one size in a saturated
 * fleet, which request holds a slot does not move when the slots free, so this bounds every ordering policy;
 * the rest of a request's wait is the fleet's, not the queue's.
 *
 * @example
 * ```ts
 * const bound = placedAtFirstRelease(trace.requests, (t) => tenantOf(t.id) === "B");
 * percentile(bound, 99); // seconds
 * ```
 */
export function placedAtFirstRelease(
  requests: readonly RequestTrace[],
  chosen: (trace: RequestTrace) => boolean,
): number[] {
  const releases = slotReleasesMs(requests);
  const times: number[] = [];
  for (const trace of requests) {
    if (trace.result !== "served" || !chosen(trace)) continue;
    const admitted = trace.attempts.find((a) => a.outcome === "admitted");
    if (!admitted) continue;
    const waitedMs = admitted.answeredAtMs - admitted.atMs;
    const release = waitedMs > 0 ? firstAtOrAfter(releases, admitted.atMs) : undefined;
    const boundWaitMs = release === undefined ? waitedMs : Math.min(waitedMs, release - admitted.atMs);
    times.push(((trace.completedAtMs as number) - trace.arrivalMs - waitedMs + boundWaitMs) / 1000);
  }
  return times;
}
