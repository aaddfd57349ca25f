import { readFileSync } from "node:fs";
import { procStat } from "../src/bench/proc-stat";

/** How many processes above this one are looked at for npm (npm, its `sh -c`, tsx: three). */
const MAX_ANCESTORS = 8;

/** A process's parent; undefined once it is gone (or off Linux). */
const parentOf = (pid: number) => procStat(pid)?.ppid;

/** Whether `pid` is npm: npm sets its process title to `npm <command>` (`/proc/<pid>/cmdline`). */
function isNpm(pid: number): boolean {
  try {
    return /^npm(\0| |$)/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * The processes between this one and the npm that runs it, each with its parent now: under `npm start` that is
 * this process (its parent tsx), tsx (its parent npm's `sh -c`) and the sh (its parent npm). Only this process
 * when it does not run under npm, or npm is not found (off Linux, yarn, pnpm).
 */
function linksBelowNpm(): Map<number, number> {
  const links = new Map<number, number>([[process.pid, process.ppid]]);
  if (process.env.npm_lifecycle_event === undefined) return links;
  const above = new Map<number, number>();
  for (let pid = process.ppid, i = 0; pid > 1 && i < MAX_ANCESTORS; i++) {
    const parent = parentOf(pid);
    if (parent === undefined) break;
    above.set(pid, parent);
    if (isNpm(parent)) return new Map([...links, ...above]);
    pid = parent;
  }
  return links;
}

/**
 * Calls `onOrphaned` once this process, or a process between it and the npm that runs it, has a new parent: the
 * parent it had was killed. Under `npm start` the chain is npm, its `sh -c`, tsx and this script; a SIGKILL to npm
 * reparents only the sh below it, and tsx and this process would run on, out of the shell's job control, with
 * nobody left to press Ctrl-C. npm's own parent is not watched: a script that starts `nohup npm start &` and exits
 * leaves the demo running, as it asked. Off Linux (no `/proc`), and outside npm, only this process's own parent is
 * watched.
 *
 * @example
 * ```ts
 * watchJobParents(() => void stopAll(1)); // npm, its sh or tsx killed: stop the demo
 * ```
 */
export function watchJobParents(onOrphaned: () => void, intervalMs = 500): void {
  const links = linksBelowNpm();
  const timer = setInterval(() => {
    const moved = [...links].some(([pid, parent]) =>
      pid === process.pid ? process.ppid !== parent : parentOf(pid) !== parent,
    );
    if (!moved) return;
    clearInterval(timer);
    onOrphaned();
  }, intervalMs);
  timer.unref();
}
