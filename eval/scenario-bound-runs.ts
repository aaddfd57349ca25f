import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandFlags, UsageError } from "../scripts/command-line";
import type { ScenarioResult } from "../src/sim/evaluation";

const root = resolve(import.meta.dirname, "..");
/** The evaluation every bound report takes its scenarios, seeds and targets from. */
export const EVALUATION_PATH = "docs/evaluation.json";

/**
 * docs/evaluation.json, as the bound reports read it.
 *
 * @example
 * ```ts
 * readEvaluation().scenarios.find((r) => r.name === "burst-3x")?.seeds; // [1, 2, 3]
 * ```
 */
export function readEvaluation(): { scenarios: ScenarioResult[] } {
  return JSON.parse(readFileSync(join(root, EVALUATION_PATH), "utf8")) as { scenarios: ScenarioResult[] };
}

/**
 * The loop of a per-scenario bound report (`npm run eval:batch-bound`, `npm run eval:queue-bound`,
 * `npm run eval:targets-bound`): every scenario of docs/evaluation.json in order, each computed by `compute` - or,
 * with `--scenario <name>` (repeatable), only those, the others kept from the committed report at `reportFile` -
 * with a line of progress per scenario. With `--render-only`, nothing is computed: the committed report's rows, for
 * the command to write its page from again (a change to its rendering only).
 *
 * @example
 * ```ts
 * const scenarios = await boundEachScenario("npm run eval:queue-bound", "docs/queue-bound.json", (result) => ({
 *   name: result.name,
 *   margin: curveBound(highs, ...).margin,
 * }), (row) => `margin ${row.margin}`);
 * ```
 */
export async function boundEachScenario<T extends { name: string }>(
  command: string,
  reportFile: string,
  compute: (result: ScenarioResult) => T | Promise<T>,
  progress: (row: T) => string,
): Promise<T[]> {
  const { evaluation, only, renderOnly } = commandFlags(
    `${command} -- [--scenario <name>]... | --render-only`,
    { options: { scenario: { type: "string", multiple: true }, "render-only": { type: "boolean" } } },
    ({ values }) => {
      const evaluation = readEvaluation();
      const only = values.scenario ?? [];
      if (values["render-only"]) {
        if (only.length > 0) throw new UsageError("--render-only computes nothing: it takes no --scenario", 2);
        if (!existsSync(join(root, reportFile)))
          throw new UsageError(`--render-only: there is no ${reportFile} to render; run ${command}`, 2);
        return { evaluation, only, renderOnly: true };
      }
      for (const name of only)
        if (!evaluation.scenarios.some((r) => r.name === name))
          throw new UsageError(`--scenario: no scenario "${name}" in ${EVALUATION_PATH}`, 2);
      return { evaluation, only, renderOnly: false };
    },
  );
  const reportPath = join(root, reportFile);
  if (renderOnly) return (JSON.parse(readFileSync(reportPath, "utf8")) as { scenarios: T[] }).scenarios;
  const previous: T[] =
    only.length > 0 && existsSync(reportPath)
      ? (JSON.parse(readFileSync(reportPath, "utf8")) as { scenarios: T[] }).scenarios
      : [];
  const rows: T[] = [];
  for (const result of evaluation.scenarios) {
    if (only.length > 0 && !only.includes(result.name)) {
      const kept = previous.find((p) => p.name === result.name);
      if (kept) rows.push(kept);
      continue;
    }
    const started = performance.now();
    const row = await compute(result);
    rows.push(row);
    console.log(`${result.name}: ${progress(row)}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  return rows;
}
