import { readFileSync } from "node:fs";

/** What `/proc/<pid>/stat` says of a process: its command name, its parent and its process group. */
export interface ProcStat {
  comm: string;
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
  const [, ppid, pgid] = stat.slice(close + 2).split(" ");
  return { comm: stat.slice(stat.indexOf("(") + 1, close), ppid: Number(ppid), pgid: Number(pgid) };
}
