import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { expect } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const tsx = resolve(root, "node_modules/.bin/tsx");

/** How a command run by {@link runCommand} ended: its exit status (null when it was killed) and its output. */
export interface CommandRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `tsx ENTRY ...args` in the repository root (with `env` in place of this process's environment, if given), in
 * its own process group, and kills the group after `killAfterMs`: a command that got past its command line would
 * start its work (an evaluation of minutes, a server), and is stopped with everything it started long before it
 * could write a result.
 *
 * @example
 * ```ts
 * const run = await runCommand("eval/run-eval.ts", ["--seeds", "0"]);
 * run.status; // 2
 * ```
 */
export function runCommand(
  entry: string,
  args: readonly string[],
  { killAfterMs = 60_000, env = process.env }: { killAfterMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandRun> {
  return new Promise((done, fail) => {
    const child = spawn(tsx, [entry, ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), killAfterMs);
    child.on("error", fail);
    child.on("close", (status) => {
      clearTimeout(timer);
      done({ status, stdout, stderr });
    });
  });
}

/**
 * Asserts that `run` is a refused command line, as `commandFlags` refuses one: exit code 2, and on stderr exactly
 * one line that names `flag` followed by the usage - no stack trace.
 *
 * @example
 * ```ts
 * expectRefused(await runCommand("eval/run-eval.ts", ["--seeds", "0"]), "--seeds");
 * ```
 */
export function expectRefused(run: CommandRun, flag: string): void {
  expect(run.stderr).not.toMatch(/^\s+at /m);
  const lines = run.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(2);
  expect(lines[0]).toContain(flag);
  expect(lines[1]).toMatch(/^usage: /);
  expect(run.status).toBe(2);
}
