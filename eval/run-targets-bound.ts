/**
 * `npm run eval:targets-bound`: do issue 15's simulator targets contradict one another? For every scenario of
 * docs/evaluation.json, the queue-aware curve bound (the curve target, the queue's bound and timeout, static 30 s's
 * attempts) with the served floor added (the served and oracle targets on the share served by the run's end), and in
 * the sustained overload the p50 target too (src/sim/targets-bound.ts), on the same seeds. Writes
 * docs/targets-bound.json and docs/targets-bound.md (about 20 minutes here: its linear programs count every start in a
 * client's window, not only those within 120 s).
 *
 * Flags: --scenario <name> (repeatable: only those, merged into the committed report); --render-only (no bound:
 * the committed bound with the default's record read again from docs/evaluation.json, for a new default).
 */

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import loadHighs from "highs";
import { generatedWriter } from "../scripts/source-snapshot";
import { jointCurveBound } from "../src/sim/curve-bound";
import type { QueueBoundReport } from "../src/sim/queue-bound";
import {
  type DefaultRecord,
  defaultRecord,
  renderTargetsBound,
  servedFloor,
  type TargetsBoundReport,
  type TargetsBoundScenario,
  targetsBoundSet,
} from "../src/sim/targets-bound";
import { boundEachScenario, EVALUATION_PATH, readEvaluation } from "./scenario-bound-runs";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
const reportPath = join(root, "docs/targets-bound.json");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);

const queueBound = JSON.parse(readFileSync(join(root, "docs/queue-bound.json"), "utf8")) as QueueBoundReport;
const highs = await loadHighs();
// The bound alone: the default's columns are added below, from the evaluation as it is when the report is written.
const scenarios = await boundEachScenario<Omit<TargetsBoundScenario, keyof DefaultRecord>>(
  "npm run eval:targets-bound",
  "docs/targets-bound.json",
  (result) => {
    const scenario = readScenario(result.name);
    const queueAware = queueBound.scenarios.find((s) => s.name === result.name);
    if (!queueAware)
      throw new Error(`eval:targets-bound: docs/queue-bound.json has no ${result.name}; run eval:queue-bound`);
    const set = targetsBoundSet(scenario, result);
    if (JSON.stringify(queueAware.target) !== JSON.stringify(set.target))
      throw new Error(
        `eval:targets-bound: docs/queue-bound.json's ${result.name} has other targets; run eval:queue-bound`,
      );
    const bound = jointCurveBound(highs, [set]);
    const p50S = result.curveBound?.withP50?.p50S;
    const held =
      p50S === undefined
        ? undefined
        : jointCurveBound(highs, [set], 0, 1, { medianWithin: { horizonS: p50S, share: 0.5 } });
    return {
      name: result.name,
      seeds: result.seeds,
      target: set.target,
      served: servedFloor(result),
      attemptsAtMost: set.attemptsAtMost as number,
      queueBound: set.queueBound as number,
      queueTimeoutS: scenario.router.queueTimeoutS,
      queueAwareMargin: queueAware.margin,
      margin: bound.margin,
      curve: bound.curves[0] as TargetsBoundScenario["curve"],
      servedShare: bound.servedShares[0] as number,
      ...(held && p50S !== undefined
        ? { withP50: { p50S, margin: held.margin, servedShare: held.servedShares[0] as number } }
        : {}),
      size: bound.size,
    };
  },
  (row) =>
    `margin ${(row.margin * 100).toFixed(1)} points${row.withP50 ? `, with p50 ${(row.withP50.margin * 100).toFixed(1)}` : ""}`,
);

// The default's record from docs/evaluation.json as it is now, with --render-only too (where the committed rows'
// record is replaced): a new default needs no new bound.
const evaluated = readEvaluation().scenarios;
const report: TargetsBoundReport = {
  generatedBy: "npm run eval:targets-bound",
  from: EVALUATION_PATH,
  scenarios: scenarios.map((row) => {
    const result = evaluated.find((r) => r.name === row.name);
    if (!result) throw new Error(`eval:targets-bound: ${EVALUATION_PATH} no longer has ${row.name}; run it again`);
    return { ...row, ...defaultRecord(result) };
  }),
};
writeGenerated(reportPath, `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/targets-bound.md"), renderTargetsBound(report));
console.log("wrote docs/targets-bound.json and docs/targets-bound.md");
