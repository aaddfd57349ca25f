import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type CommandRun, expectRefused, runCommand } from "../../support/refused-command";

/**
 * The benchmark and soak commands whose entry points live under src/ read their command line before any work:
 * `--help` prints the usage (exit 0), and an unknown flag or a numeric flag that is not what it must be is refused
 * in a line naming it, with the usage (exit 2), not with parseArgs' stack trace. Each is run as its npm script runs
 * it (package.json's `tsx ENTRY`, with its NODE_OPTIONS); none may start a server or a benchmark, so every run
 * ends in a few seconds, and they run concurrently.
 */

const root = resolve(import.meta.dirname, "../../..");
const scripts = (JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { scripts: Record<string, string> })
  .scripts;

/**
 * Each command, as its usage names it, and for the two that load quickly a numeric flag with a value it must refuse
 * (the others import workerd's miniflare, seconds of CPU a run: one more run each would take this file past half a
 * minute on two cores; the flag checks themselves are test/node/bench/command-flags.test.ts's).
 */
const COMMANDS: { name: string; badNumber?: [flag: string, value: string] }[] = [
  { name: "bench:llama", badNumber: ["--threads", "0"] },
  { name: "bench:edge" },
  { name: "bench:tenant-path" },
  { name: "bench:body-memory" },
  { name: "profile:edge" },
  { name: "soak", badNumber: ["--overload", "0"] },
  { name: "soak:heap" },
];

/** `npm run NAME -- ...args` without npm: package.json's `[NODE_OPTIONS=...] tsx ENTRY`, run directly. */
function runScript(name: string, args: string[]): Promise<CommandRun> {
  const command = scripts[name];
  const parts = command ? /^(?:NODE_OPTIONS=(\S+) )?tsx (\S+)$/.exec(command) : null;
  if (!parts) throw new Error(`package.json's ${name} is not "tsx ENTRY": ${command}`);
  const [, nodeOptions, entry] = parts as unknown as [string, string | undefined, string];
  return runCommand(entry, args, { env: { ...process.env, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) } });
}

/** A stack trace's frame line, as node prints an uncaught error. */
const STACK_FRAME = /^\s+at /m;

// Concurrently: each command's runs are a few seconds of tsx and imports, mostly waiting on the other core.
describe.concurrent("the benchmark and soak commands' command lines", () => {
  it.each(COMMANDS)(
    "$name: --help, an unknown flag (and for two, a bad number)",
    async ({ name, badNumber }) => {
      // --help first: a command that does not know it would take the next runs' flags and start its work.
      const help = await runScript(name, ["--help"]);
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^usage: npm run ${name} `));

      const unknown = await runScript(name, ["--no-such-flag", "1"]);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain("--no-such-flag");
      expect(unknown.stderr).toContain(`usage: npm run ${name} `);
      expect(unknown.stderr).not.toMatch(STACK_FRAME);

      if (!badNumber) return;
      const bad = await runScript(name, badNumber);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toContain(`${badNumber[0]} must be`);
      expect(bad.stderr).toContain(`usage: npm run ${name} `);
      expect(bad.stderr).not.toMatch(STACK_FRAME);
    },
    120_000,
  );
});

// The load client and the engine server parse their own flags (bench_serving's and SGLang's names): a bad one was
// refused in a line without the usage after it, unlike every other command.
describe.concurrent("npm run bench and npm run engine refuse a bad flag with its line and the usage", () => {
  const cases = [
    { name: "bench", args: ["--base-url", "http://127.0.0.1:1", "--num-prompts", "zero"], flag: "--num-prompts" },
    { name: "bench", args: ["--base-url", "http://127.0.0.1:1", "--no-such-flag"], flag: "--no-such-flag" },
    { name: "engine", args: ["--speed", "0"], flag: "--speed" },
    { name: "engine", args: ["--no-such-flag"], flag: "--no-such-flag" },
  ];
  it.each(cases.map((c) => ({ ...c, line: `npm run ${c.name} -- ${c.args.join(" ")}` })))(
    "$line",
    async ({ name, args, flag }) => {
      expectRefused(await runScript(name, args), flag);
    },
    60_000,
  );
});
