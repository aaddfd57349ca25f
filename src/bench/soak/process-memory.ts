import { readdirSync, readFileSync } from "node:fs";
import { procStat } from "../proc-stat";

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
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      if (procStat(pid)?.pgid !== pgid) continue;
      const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      total += Number(match?.[1] ?? 0);
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}
