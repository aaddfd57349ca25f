/**
 * Scheduling policies: the order in which an admission round considers waiting requests. Like SGLang, the
 * queue is reordered in place, so the order persists between rounds (and admitted requests are always a
 * prefix of the queue).
 */
import type { RadixCache } from "./radix-cache.js";
import type { Req } from "./request.js";
import type { SchedulePolicy } from "./types.js";

/** SGLang stops computing prefix matches for `lpm` above this queue length (too costly) and uses fcfs. */
export const LPM_MAX_QUEUE = 128;

/**
 * Reorder `queue` for `policy`.
 *
 * @example
 * ```ts
 * orderWaiting(waiting, "lof", cache, Math.random); // largest maxNewTokens first, stable
 * ```
 */
export function orderWaiting(
  queue: Req[],
  policy: SchedulePolicy,
  cache: RadixCache | null,
  random: () => number,
): void {
  switch (policy) {
    case "fcfs":
      return;
    case "lof":
      queue.sort((a, b) => b.maxNewTokens - a.maxNewTokens);
      return;
    case "random":
      for (let i = queue.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        const t = queue[i] as Req;
        queue[i] = queue[j] as Req;
        queue[j] = t;
      }
      return;
    case "lpm": {
      if (cache === null || queue.length > LPM_MAX_QUEUE) return;
      for (const r of queue) r.matchLength = cache.match(r.fillTokens(), r.fillLength - 1).length;
      queue.sort((a, b) => b.matchLength - a.matchLength);
      return;
    }
  }
}
