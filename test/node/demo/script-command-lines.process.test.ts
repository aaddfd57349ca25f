import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectRefused, runCommand } from "../../support/refused-command";

/**
 * The demo's commands (`npm start`, `npm run demo:traffic`), `npm run make-test-model` and the bench's null server
 * refuse a bad flag before they start anything: one line naming it and the usage, exit code 2. Before, a port of 0
 * or `abc` ended in a stack trace, and a cycle count, time scale, seed or context length that is no number was
 * taken as one (NaN: traffic with no cycle, a model written with a context length of 0). They run concurrently.
 */
const out = mkdtempSync(join(tmpdir(), "script-command-lines-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const model = join(out, "model.gguf");

const CASES: { entry: string; args: string[]; flag: string }[] = [
  { entry: "scripts/start.ts", args: ["--port", "0"], flag: "--port" },
  { entry: "scripts/start.ts", args: ["--engine-ports", "8001,x,8003"], flag: "--engine-ports" },
  { entry: "scripts/demo-traffic.ts", args: ["--time-scale", "0"], flag: "--time-scale" },
  { entry: "scripts/make-test-model.ts", args: ["--out", model, "--context-length", "0"], flag: "--context-length" },
  { entry: "scripts/make-test-model.ts", args: ["--out", model, "--no-such-flag"], flag: "--no-such-flag" },
  { entry: "src/bench/null-server.ts", args: ["--port", "abc"], flag: "--port" },
];

describe.concurrent("the demo and tool scripts refuse a bad command line before any work", () => {
  it.each(CASES.map((c) => ({ ...c, line: [c.entry, ...c.args].join(" ") })))(
    "$line",
    async ({ entry, args, flag }) => {
      expectRefused(await runCommand(entry, args), flag);
    },
    120_000,
  );

  it.each(["scripts/make-test-model.ts", "src/bench/null-server.ts"])(
    "%s --help prints the usage and exits 0",
    async (entry) => {
      const run = await runCommand(entry, ["--help"]);
      expect(run.stderr).toBe("");
      expect(run.stdout).toMatch(/^usage: .*--\w/);
      expect(run.status).toBe(0);
    },
    120_000,
  );

  it("writes no model on a refused command line", async () => {
    expectRefused(await runCommand("scripts/make-test-model.ts", ["--out", model, "--seed", "abc"]), "--seed");
    expect(readdirSync(out)).toEqual([]);
  }, 120_000);
});
