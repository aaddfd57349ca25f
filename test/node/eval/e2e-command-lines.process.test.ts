import { describe, it } from "vitest";
import { expectRefused, runCommand } from "../../support/refused-command";

/**
 * The end-to-end eval commands (which start wrangler, engine servers and clients) and the eval commands that take
 * no flags at all refuse a bad command line before they start anything: one line naming the flag and the usage,
 * exit code 2. A flagless command used to ignore its arguments, so `-- --help` or a typo started a run of minutes
 * that rewrites docs/. They run concurrently.
 */
const CASES: { entry: string; args: string[]; flag: string }[] = [
  { entry: "eval/e2e-openai.ts", args: ["--clients", "0"], flag: "--clients" },
  { entry: "eval/e2e-pace.ts", args: ["--warmup", "0"], flag: "--warmup" },
  // --port abc was read as NaN, i.e. "no port": the whole run started on a free one.
  { entry: "eval/e2e.ts", args: ["--port", "abc"], flag: "--port" },
  // An unknown policy id passed until the fleet was built, after the run had begun, and ended it with a stack trace.
  { entry: "eval/e2e.ts", args: ["--policies", "static-30,static-3O"], flag: "--policies" },
  { entry: "eval/e2e-openai.ts", args: ["--policies", "booked_capacity,no-such-policy"], flag: "--policies" },
  // A repeated id ran that policy twice.
  { entry: "eval/e2e-openai.ts", args: ["--policies", "static-30,static-30"], flag: "--policies" },
  // An unknown schedule would otherwise run some other load than asked.
  { entry: "eval/e2e-openai.ts", args: ["--schedule", "spike"], flag: "--schedule" },
  { entry: "eval/run-wave-period.ts", args: ["--no-such-flag"], flag: "--no-such-flag" },
  { entry: "eval/run-burst-length.ts", args: ["--no-such-flag"], flag: "--no-such-flag" },
  { entry: "eval/run-burst-train.ts", args: ["--no-such-flag"], flag: "--no-such-flag" },
  { entry: "eval/run-envelope-noise.ts", args: ["--no-such-flag"], flag: "--no-such-flag" },
  { entry: "eval/run-late-causes.ts", args: ["--no-such-flag"], flag: "--no-such-flag" },
];

describe.concurrent("the end-to-end and flagless eval commands refuse a bad command line before any work", () => {
  it.each(CASES.map((c) => ({ ...c, line: [c.entry, ...c.args].join(" ") })))(
    "$line",
    async ({ entry, args, flag }) => {
      expectRefused(await runCommand(entry, args), flag);
    },
    120_000,
  );
});
