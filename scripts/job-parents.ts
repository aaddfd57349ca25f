import { readFileSync } from "node:fs";

/** A process's parent and process group, from Linux's `/proc/<pid>/stat`; undefined once it is gone (or off Linux). */
function parentAndGroup(pid: number): { parent: number; group: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command in parentheses (which may hold spaces): state, parent, process group.
    const [, parent, group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { parent: Number(parent), group: Number(group) };
  } catch {
    return undefined;
  }
}

/**
 * Calls `onOrphaned` once this process, or any process above it in its own process group, has a new parent: the
 * parent it had was killed. Under `npm start` that group is npm, its `sh -c` and tsx, all started by the shell as one
 * job; a SIGKILL to npm reparents only the sh below it, and tsx and this process would run on, out of the shell's
 * job control, with nobody left to press Ctrl-C. Off Linux (no `/proc`) only this process's own parent is watched.
 *
 * @example
 * ```ts
 * watchJobParents(() => void stopAll(1)); // npm, sh or tsx killed: stop the demo
 * ```
 */
export function watchJobParents(onOrphaned: () => void, intervalMs = 500): void {
  const parents = new Map<number, number>();
  const own = parentAndGroup(process.pid);
  for (let pid = process.ppid; own !== undefined && pid > 1; ) {
    const above = parentAndGroup(pid);
    if (above === undefined || above.group !== own.group) break;
    parents.set(pid, above.parent);
    pid = above.parent;
  }
  const startParent = process.ppid;
  const timer = setInterval(() => {
    const moved =
      process.ppid !== startParent || [...parents].some(([pid, parent]) => parentAndGroup(pid)?.parent !== parent);
    if (!moved) return;
    clearInterval(timer);
    onOrphaned();
  }, intervalMs);
  timer.unref();
}
