/**
 * `npm run eval:queue-bound`: do the queue's bound and issue 15's attempts target keep a policy from the curve
 * target? For every scenario of docs/evaluation.json, the clairvoyant curve bound holding first attempts to the
 * queue's bound and timeout and the attempts per offered request to static 30 s's (src/sim/queue-bound.ts), against
 * the same targets and seeds. Writes docs/queue-bound.json and docs/queue-bound.md (about 7 minutes here).
 *
 * Flags: --scenario <name> (repeatable: only those, merged into the committed report).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import loadHighs from "highs";
import { commandLine } from "../scripts/command-line";
import { jointCurveBound } from "../src/sim/curve-bound";
import type { ScenarioResult } from "../src/sim/evaluation";
import {
  type QueueBoundReport,
  type QueueBoundScenario,
  queueBoundSet,
  renderQueueBound,
} from "../src/sim/queue-bound";
import { checkTargets } from "../src/sim/targets";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
const { values } = commandLine("npm run eval:queue-bound -- [--scenario <name>]...", {
  options: { scenario: { type: "string", multiple: true } },
});
const evaluationPath = "docs/evaluation.json";
const evaluation = JSON.parse(readFileSync(join(root, evaluationPath), "utf8")) as { scenarios: ScenarioResult[] };
const only = values.scenario ?? [];
for (const name of only)
  if (!evaluation.scenarios.some((r) => r.name === name))
    throw new Error(`eval:queue-bound: no scenario "${name}" in ${evaluationPath}`);

const reportPath = join(root, "docs/queue-bound.json");
const previous: QueueBoundScenario[] =
  only.length > 0 && existsSync(reportPath)
    ? (JSON.parse(readFileSync(reportPath, "utf8")) as QueueBoundReport).scenarios
    : [];
const highs = await loadHighs();
const scenarios: QueueBoundScenario[] = [];
for (const result of evaluation.scenarios) {
  if (only.length > 0 && !only.includes(result.name)) {
    const kept = previous.find((p) => p.name === result.name);
    if (kept) scenarios.push(kept);
    continue;
  }
  const started = performance.now();
  const scenario = readScenario(result.name);
  const staticThirty = result.policies.find((p) => p.id === "static-30");
  if (!staticThirty) throw new Error(`eval:queue-bound: ${evaluationPath} has no static-30 run of ${result.name}`);
  if (!result.curveBound) throw new Error(`eval:queue-bound: ${evaluationPath} has no curve bound for ${result.name}`);
  const set = queueBoundSet(scenario, result, staticThirty.attemptsPerOffered);
  const bound = jointCurveBound(highs, [set]);
  scenarios.push({
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
  });
  console.log(
    `${result.name}: margin ${(bound.margin * 100).toFixed(1)} points, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

const report: QueueBoundReport = { generatedBy: "npm run eval:queue-bound", from: evaluationPath, scenarios };
writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(root, "docs/queue-bound.md"), renderQueueBound(report));
console.log("wrote docs/queue-bound.json and docs/queue-bound.md");
