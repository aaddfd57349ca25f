import { readFileSync } from "node:fs";
import { groupPids } from "../proc-stat";

/**
 * Resident memory (KiB) of every process in process group `pgid` (Linux `/proc`): e.g. `wrangler dev` and the
 * workerd processes that run the Worker and its Durable Objects, started in their own group. 0 where /proc is
 * not readable.
 *
 * @example
 * ```ts
 * const kib = residentKiBOfGroup(worker.child.pid!);
 * ```
 */
export function residentKiBOfGroup(pgid: number): number {
  let total = 0;
  for (const pid of groupPids(pgid)) {
    try {
      const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      total += Number(match?.[1] ?? 0);
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}
