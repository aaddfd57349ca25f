import { readdirSync, readFileSync } from "node:fs";

/** What `/proc/<pid>/stat` says of a process: its command name, state, parent and process group. */
export interface ProcStat {
  comm: string;
  /** One letter: `R` running, `S` sleeping, ..., `Z` a zombie (exited, not yet reaped by its parent). */
  state: string;
  ppid: number;
  pgid: number;
}

/**
 * Reads a process's `/proc/<pid>/stat` (Linux): `pid (comm) state ppid pgrp ...`, where the command may hold spaces
 * and parentheses, so the fields are read after its last closing parenthesis. `undefined` once the process is gone,
 * or off Linux.
 *
 * @example
 * ```ts
 * procStat(process.pid)?.ppid === process.ppid; // true on Linux
 * ```
 */
export function procStat(pid: number | string): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const close = stat.lastIndexOf(")");
  const [state = "", ppid, pgid] = stat.slice(close + 2).split(" ");
  return { comm: stat.slice(stat.indexOf("(") + 1, close), state, ppid: Number(ppid), pgid: Number(pgid) };
}

/**
 * The processes of process group `pgid` (Linux `/proc`): e.g. `wrangler dev` and the workerd processes it starts, in
 * the group `startManaged` gives them. Empty where `/proc` cannot be read.
 *
 * @example
 * ```ts
 * groupPids(worker.child.pid as number); // [wrangler's pid, workerd's, ...]
 * ```
 */
export function groupPids(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  // undefined: the process ended meanwhile.
  return entries.filter((e) => /^\d+$/.test(e) && procStat(e)?.pgid === pgid).map(Number);
}
