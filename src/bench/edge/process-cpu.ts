import { readdirSync, readFileSync } from "node:fs";
import { procStat } from "../proc-stat";

/**
 * CPU time, not wall time: on a shared machine another job's load stretches a run's wall clock, but the CPU a
 * process spends per request moves much less. Linux only (`/proc`); elsewhere every reading is `undefined`.
 */

/** The ids of this process's direct children whose command is `command` (e.g. `workerd`). */
export function childPids(command: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(entry); // undefined: the process ended meanwhile
    if (stat?.comm === command && stat.ppid === process.pid) pids.push(Number(entry));
  }
  return pids;
}

/**
 * The CPU time (ms) a process has spent so far, all its threads together (`/proc/PID/task/TID/schedstat`, in
 * nanoseconds); `undefined` where that cannot be read.
 *
 * @example
 * ```ts
 * const before = processCpuMs(pid);
 * await closedLoopLoad(url, body, 32, 600);
 * const perRequestUs = ((processCpuMs(pid) ?? 0) - (before ?? 0)) * 1000 / 600;
 * ```
 */
export function processCpuMs(pid: number): number | undefined {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
    return ns / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * This process's CPU time (ms) so far: in the edge benchmark, the load generator and the engine servers.
 *
 * @example
 * ```ts
 * const t0 = selfCpuMs(); work(); console.log(selfCpuMs() - t0);
 * ```
 */
export function selfCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
