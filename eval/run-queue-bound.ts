/**
 * `npm run eval:queue-bound`: do the queue's bound and issue 15's attempts target keep a policy from the curve
 * target? For every scenario of docs/evaluation.json, the clairvoyant curve bound holding first attempts to the
 * queue's bound and timeout and the attempts per offered request to static 30 s's (src/sim/queue-bound.ts), against
 * the same targets and seeds. Writes docs/queue-bound.json and docs/queue-bound.md (about 7 minutes here).
 *
 * Flags: --scenario <name> (repeatable: only those, merged into the committed report); --render-only (no bound:
 * the page written again from the committed JSON).
 */

import { join, resolve } from "node:path";
import loadHighs from "highs";
import { generatedWriter } from "../scripts/source-snapshot";
import { jointCurveBound } from "../src/sim/curve-bound";
import {
  type QueueBoundReport,
  type QueueBoundScenario,
  queueBoundSet,
  renderQueueBound,
} from "../src/sim/queue-bound";
import { checkTargets } from "../src/sim/targets";
import { boundEachScenario, EVALUATION_PATH } from "./scenario-bound-runs";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const highs = await loadHighs();
const scenarios = await boundEachScenario<QueueBoundScenario>(
  "npm run eval:queue-bound",
  "docs/queue-bound.json",
  (result) => {
    const scenario = readScenario(result.name);
    const staticThirty = result.policies.find((p) => p.id === "static-30");
    if (!staticThirty) throw new Error(`eval:queue-bound: ${EVALUATION_PATH} has no static-30 run of ${result.name}`);
    if (!result.curveBound)
      throw new Error(`eval:queue-bound: ${EVALUATION_PATH} has no curve bound for ${result.name}`);
    const set = queueBoundSet(scenario, result, staticThirty.attemptsPerOffered);
    const bound = jointCurveBound(highs, [set]);
    return {
      name: result.name,
      seeds: result.seeds,
      target: set.target,
      aloneMargin: result.curveBound.margin,
      queueBound: set.queueBound as number,
      queueTimeoutS: scenario.router.queueTimeoutS,
      attemptsAtMost: staticThirty.attemptsPerOffered,
      margin: bound.margin,
      curve: bound.curves[0] as QueueBoundScenario["curve"],
      defaultWorstGap: checkTargets(result).worstCurveGap.gap,
      size: bound.size,
    };
  },
  (row) => `margin ${(row.margin * 100).toFixed(1)} points`,
);

const report: QueueBoundReport = { generatedBy: "npm run eval:queue-bound", from: EVALUATION_PATH, scenarios };
writeGenerated(join(root, "docs/queue-bound.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/queue-bound.md"), renderQueueBound(report));
console.log("wrote docs/queue-bound.json and docs/queue-bound.md");
