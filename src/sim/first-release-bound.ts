import type { AttemptRecord, RequestTrace } from "./trace";

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

/** The first index of sorted `xs` at or after `t` (binary search); `xs.length` when none is. */
function firstIndexAtOrAfter(xs: readonly number[], t: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Sorted release times, each claimable once: `claimFrom(i)` takes the first unclaimed one at index `i` or later
 * (a "next unclaimed" union-find with path halving, so a run of claims stays near-linear).
 */
class ReleaseClaims {
  private readonly next: number[];

  constructor(private readonly releases: readonly number[]) {
    this.next = Array.from({ length: releases.length + 1 }, (_, i) => i);
  }

  /** The first unclaimed index at or after `i` (`releases.length` when none is left). */
  find(i: number): number {
    let k = i;
    while (this.next[k] !== k) {
      this.next[k] = this.next[this.next[k] as number] as number;
      k = this.next[k] as number;
    }
    return k;
  }

  claim(i: number): void {
    this.next[i] = i + 1;
  }

  at(i: number): number | undefined {
    return this.releases[i];
  }
}

/**
 * The time to success (seconds) each served request of `chosen` would have had, had the router served the chosen
 * requests first, in the order they reached the router, each at the first slot release after its admitted attempt
 * arrived that an earlier chosen request did not take (never later than it actually was placed): the best any
 * queue order could do with the run's completion times. A release frees one slot, so it places one request: two
 * requests that wait through the same gap between releases cannot both take the release that ends it. With
 * requests of one size in a saturated fleet, which request holds a slot does not move when the slots free, so this
 * bounds every ordering policy; the rest of a request's wait is the fleet's, not the queue's.
 *
 * @example
 * ```ts
 * const bound = placedAtFirstUnclaimedRelease(trace.requests, (t) => tenantOf(t.id) === "B");
 * percentile(bound, 99); // seconds
 * ```
 */
export function placedAtFirstUnclaimedRelease(
  requests: readonly RequestTrace[],
  chosen: (trace: RequestTrace) => boolean,
): number[] {
  const releases = slotReleasesMs(requests);
  const claims = new ReleaseClaims(releases);
  const picked: Array<{ trace: RequestTrace; admitted: AttemptRecord }> = [];
  for (const trace of requests) {
    if (trace.result !== "served" || !chosen(trace)) continue;
    const admitted = trace.attempts.find((a) => a.outcome === "admitted");
    if (admitted) picked.push({ trace, admitted });
  }
  const boundWaitMs = new Map<RequestTrace, number>();
  const byArrival = [...picked].sort((x, y) => x.admitted.atMs - y.admitted.atMs || x.trace.id - y.trace.id);
  for (const { trace, admitted } of byArrival) {
    const waitedMs = admitted.answeredAtMs - admitted.atMs;
    const index = waitedMs > 0 ? claims.find(firstIndexAtOrAfter(releases, admitted.atMs)) : releases.length;
    const release = claims.at(index);
    if (release !== undefined && release - admitted.atMs <= waitedMs) {
      claims.claim(index);
      boundWaitMs.set(trace, release - admitted.atMs);
    } else {
      // Placed at once, or no unclaimed release came by the placement it had: it keeps that one.
      boundWaitMs.set(trace, waitedMs);
    }
  }
  return picked.map(({ trace, admitted }) => {
    const waitedMs = admitted.answeredAtMs - admitted.atMs;
    const moved = (boundWaitMs.get(trace) as number) - waitedMs;
    return ((trace.completedAtMs as number) - trace.arrivalMs + moved) / 1000;
  });
}
