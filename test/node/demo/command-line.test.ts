import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCommandLine, positiveIntFlag, UsageError } from "../../../scripts/command-line";

const USAGE = "npm run eval -- [--seeds <n>] [--render-only]";
const CONFIG = { options: { seeds: { type: "string" }, "render-only": { type: "boolean" } } } as const;

/** The UsageError a command line raises (fails the test when it raises none). */
function usageErrorOf(args: string[]): UsageError {
  try {
    parseCommandLine(USAGE, CONFIG, args);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`no usage error for ${args.join(" ")}`);
}

describe("scripts/command-line", () => {
  it("parses the flags it knows", () => {
    const { values } = parseCommandLine(USAGE, CONFIG, ["--seeds", "5", "--render-only"]);
    expect(values).toEqual({ seeds: "5", "render-only": true });
  });

  it("answers --help and -h with the usage and exit code 0", () => {
    for (const flag of ["--help", "-h"]) {
      const error = usageErrorOf(["--seeds", "5", flag]);
      expect(error.exitCode).toBe(0);
      expect(error.message).toBe(`usage: ${USAGE}`);
    }
  });

  it("refuses an unknown flag, a missing value or a stray argument with the usage and exit code 2", () => {
    for (const [args, says] of [
      [["--sedes", "5"], "--sedes"],
      [["--seeds"], "--seeds"],
      [["extra"], "extra"],
    ] as const) {
      const error = usageErrorOf([...args]);
      expect(error.exitCode).toBe(2);
      expect(error.message).toContain(says);
      expect(error.message.split("\n")).toHaveLength(2);
      expect(error.message).toContain(`usage: ${USAGE}`);
    }
  });

  it("requires exactly one argument of a command that takes arguments", () => {
    const config = { options: {}, allowPositionals: true } as const;
    expect(parseCommandLine("cmd <scenario>", config, ["waves"]).positionals).toEqual(["waves"]);
    for (const args of [[], ["waves", "burst-3x"]]) {
      let error: unknown;
      try {
        parseCommandLine("cmd <scenario>", config, args);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect((error as UsageError).message).toBe(`expected one argument, got ${args.length}\nusage: cmd <scenario>`);
    }
  });

  it("takes a positive integer flag or its fallback, and names the flag when it is neither", () => {
    expect(positiveIntFlag("seeds", "4", 3)).toBe(4);
    expect(positiveIntFlag("seeds", undefined, 3)).toBe(3);
    for (const bad of ["0", "-1", "2.5", "two"])
      expect(() => positiveIntFlag("seeds", bad, 3)).toThrow(`--seeds must be a positive integer, got ${bad}`);
  });

  it("makes an eval command print its usage for --help and exit 0, and exit 2 on an unknown flag", () => {
    const root = resolve(import.meta.dirname, "../../..");
    const tsx = resolve(root, "node_modules/.bin/tsx");
    const help = execFileSync(tsx, ["eval/run-twins.ts", "--help"], { cwd: root, encoding: "utf8" });
    expect(help.trim()).toBe("usage: npm run eval:twins -- [--seeds <n>]");
    let status: number | null = null;
    let stderr = "";
    try {
      execFileSync(tsx, ["eval/run-twins.ts", "--sedes", "2"], { cwd: root, encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      ({ status, stderr } = error as { status: number | null; stderr: string });
    }
    expect(status).toBe(2);
    expect(stderr).toContain("--sedes");
    expect(stderr).not.toContain("    at ");
  });
});
