import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { procStat } from "../../../src/bench/proc-stat";

const root = resolve(import.meta.dirname, "../../..");

/** A bound on a hang, not a timing: wrangler dev's first build on 2 busy cores can take a minute. */
const STARTUP_BOUND_MS = 120_000;
/** How long the guards may take to clear the groups: generous, a bound on "never" rather than a timing. */
const CLEANUP_BOUND_MS = 30_000;

/** Whether any process (a zombie included) is still in process group `pgid`. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The command names of the processes in group `pgid` (ps, as an operator would check). */
function commandsInGroup(pgid: number): string[] {
  return execFileSync("ps", ["-eo", "pgid=,comm="], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([group]) => Number(group) === pgid)
    .map(([, command]) => command ?? "");
}

describe("src/bench/stack: a supervisor killed with SIGKILL", () => {
  it(
    "leaves no wrangler, workerd or other child group behind: each group's guard watches it by default",
    async () => {
      const persistTo = mkdtempSync(join(tmpdir(), "spillway-guard-"));
      const supervisor = spawn("node_modules/.bin/tsx", ["test/support/stack-supervisor.ts", persistTo], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
        detached: true,
      });
      let groups: number[] = [];
      let startupTimer: NodeJS.Timeout | undefined;
      try {
        const firstLine = new Promise<string>((done, fail) => {
          createInterface({ input: supervisor.stdout }).once("line", done);
          supervisor.once("exit", (code) => fail(new Error(`the supervisor exited (${code}) before it was up`)));
          startupTimer = setTimeout(
            () => fail(new Error(`the supervisor was not up within ${STARTUP_BOUND_MS} ms`)),
            STARTUP_BOUND_MS,
          );
        });
        groups = (JSON.parse(await firstLine) as { groups: number[] }).groups;
        const [wranglerGroup] = groups as [number];
        expect(commandsInGroup(wranglerGroup)).toContain("workerd");
        expect(groups.filter(groupAlive)).toEqual(groups);

        process.kill(-(supervisor.pid as number), "SIGKILL"); // tsx and the supervisor, at once
        const deadline = Date.now() + CLEANUP_BOUND_MS;
        while (groups.some(groupAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        expect(groups.filter(groupAlive)).toEqual([]);
      } finally {
        clearTimeout(startupTimer);
        for (const group of [supervisor.pid as number, ...groups]) {
          try {
            process.kill(-group, "SIGKILL");
          } catch {
            // Already gone.
          }
        }
        rmSync(persistTo, { recursive: true, force: true });
      }
    },
    STARTUP_BOUND_MS + CLEANUP_BOUND_MS + 10_000,
  );

  it.skipIf(!existsSync("/proc/self/stat"))(
    "counts a zombie supervisor (dead, never reaped) as gone",
    async () => {
      // sh starts the supervisor, then becomes `sleep`, which never waits for it: killed, the supervisor stays a
      // zombie (signal 0 still reaches it) for as long as the sleep runs.
      const parent = spawn("sh", ["-c", "node --import tsx test/support/guarded-sleeper.ts & exec sleep 300"], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
        detached: true,
      });
      let group: number | undefined;
      let startupTimer: NodeJS.Timeout | undefined;
      try {
        const firstLine = new Promise<string>((done, fail) => {
          createInterface({ input: parent.stdout }).once("line", done);
          parent.once("exit", (code) => fail(new Error(`sh exited (${code}) before the supervisor was up`)));
          startupTimer = setTimeout(
            () => fail(new Error(`the supervisor was not up within ${STARTUP_BOUND_MS} ms`)),
            STARTUP_BOUND_MS,
          );
        });
        const up = JSON.parse(await firstLine) as { supervisor: number; group: number };
        group = up.group;
        expect(procStat(up.supervisor)?.ppid).toBe(parent.pid);
        expect(groupAlive(group)).toBe(true);

        process.kill(up.supervisor, "SIGKILL");
        const deadline = Date.now() + CLEANUP_BOUND_MS;
        while (procStat(up.supervisor)?.state !== "Z" && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
        expect(procStat(up.supervisor)?.state).toBe("Z");
        while (groupAlive(group) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        expect(groupAlive(group)).toBe(false);
        expect(procStat(up.supervisor)?.state).toBe("Z"); // still a zombie: the guard did not wait for a reaper
      } finally {
        clearTimeout(startupTimer);
        // The sh/sleep group (the zombie is reaped once its sleep parent is gone), then the child's group; its
        // guard exits by itself once that group is gone.
        for (const pgid of [parent.pid as number, ...(group === undefined ? [] : [group])]) {
          try {
            process.kill(-pgid, "SIGKILL");
          } catch {
            // Already gone.
          }
        }
      }
    },
    STARTUP_BOUND_MS + CLEANUP_BOUND_MS + 10_000,
  );
});
