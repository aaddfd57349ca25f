import { describe, it } from "vitest";
import { expectRefused, runCommand } from "../../support/refused-command";

/**
 * The simulator's eval commands check every flag and argument before they simulate anything: a bad one ends the
 * command with one line naming it and the usage (exit code 2), not with a stack trace after parsing, nor with a run
 * of minutes that rewrites docs/ on a value it should have refused. Each case must be refused in a few seconds of
 * imports; they run concurrently.
 */
const CASES: { entry: string; args: string[]; flag: string }[] = [
  { entry: "eval/run-eval.ts", args: ["--seeds", "0"], flag: "--seeds" },
  // An --only naming no scenario would have run the rest and rewritten docs/ without it.
  { entry: "eval/run-eval.ts", args: ["--only", "no-such-scenario"], flag: "--only" },
  { entry: "eval/run-held-seeds.ts", args: ["--seeds", "abc"], flag: "--seeds" },
  { entry: "eval/run-twins.ts", args: ["--seeds=-1"], flag: "--seeds" },
  { entry: "eval/run-e2e-twin.ts", args: ["--seeds", "0"], flag: "--seeds" },
  { entry: "eval/run-tenants.ts", args: ["--seeds", "0"], flag: "--seeds" },
  { entry: "eval/run-variant.ts", args: ["burst-fade-5s", "--held", "--seeds", "0"], flag: "--seeds" },
  { entry: "eval/run-variant.ts", args: ["no-such-variant"], flag: "no-such-variant" },
  // --bins was read only after the whole run, and a width of 0 was taken.
  { entry: "eval/run-variant.ts", args: ["burst-fade-5s", "--bins", "waves:0"], flag: "--bins" },
  { entry: "eval/run-variant.ts", args: ["burst-fade-5s", "--bins-with", "none"], flag: "--bins-with" },
  {
    entry: "eval/run-variant.ts",
    args: ["burst-fade-5s", "--bins", "waves", "--bins-with", "static-5,no-such-policy"],
    flag: "no-such-policy",
  },
  { entry: "eval/run-timeline.ts", args: ["waves", "--bin", "abc"], flag: "--bin" },
  { entry: "eval/run-timeline.ts", args: ["no-such-scenario"], flag: "no-such-scenario" },
  { entry: "eval/tune-default.ts", args: ["--chains", "0"], flag: "--chains" },
  { entry: "eval/run-hint-search.ts", args: ["--sweeps", "0"], flag: "--sweeps" },
  { entry: "eval/run-plan-replay.ts", args: ["--depth", "abc"], flag: "--depth" },
  { entry: "eval/run-batch-bound.ts", args: ["--scenario", "no-such-scenario"], flag: "--scenario" },
];

describe.concurrent("the simulator's eval commands refuse a bad command line before any work", () => {
  it.each(CASES.map((c) => ({ ...c, line: [c.entry, ...c.args].join(" ") })))(
    "$line",
    async ({ entry, args, flag }) => {
      expectRefused(await runCommand(entry, args), flag);
    },
    120_000,
  );
});
