/**
 * `npm run eval:batch-bound`: is batching what the curve target asks for? For every scenario of
 * docs/evaluation.json, the clairvoyant curve bound with each request served in any batch size, slower and cheaper
 * in a bigger one (src/sim/batch-bound.ts), against the same targets and seeds. Writes docs/batch-bound.json and
 * docs/batch-bound.md (about 6 minutes here: its linear programs are about twice the clairvoyant bound's).
 *
 * Flags: --scenario <name> (repeatable: only those, merged into the committed report).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import loadHighs from "highs";
import { commandLine } from "../scripts/command-line";
import { batchBoundInstance, batchSizes } from "../src/sim/batch-bound";
import { type BatchBoundReport, type BatchBoundScenario, renderBatchBound } from "../src/sim/batch-bound-report";
import { curveBound, seedInstances } from "../src/sim/curve-bound";
import type { ScenarioResult } from "../src/sim/evaluation";
import { bestOtherCurve, checkTargets } from "../src/sim/targets";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
const { values } = commandLine("npm run eval:batch-bound -- [--scenario <name>]...", {
  options: { scenario: { type: "string", multiple: true } },
});
const evaluationPath = "docs/evaluation.json";
const evaluation = JSON.parse(readFileSync(join(root, evaluationPath), "utf8")) as { scenarios: ScenarioResult[] };
const only = values.scenario ?? [];
for (const name of only)
  if (!evaluation.scenarios.some((r) => r.name === name))
    throw new Error(`eval:batch-bound: no scenario "${name}" in ${evaluationPath}`);

const reportPath = join(root, "docs/batch-bound.json");
const previous: BatchBoundScenario[] =
  only.length > 0 && existsSync(reportPath)
    ? (JSON.parse(readFileSync(reportPath, "utf8")) as BatchBoundReport).scenarios
    : [];
const highs = await loadHighs();
const scenarios: BatchBoundScenario[] = [];
for (const result of evaluation.scenarios) {
  if (only.length > 0 && !only.includes(result.name)) {
    const kept = previous.find((p) => p.name === result.name);
    if (kept) scenarios.push(kept);
    continue;
  }
  const started = performance.now();
  const scenario = readScenario(result.name);
  const instances = seedInstances(scenario, result, batchBoundInstance);
  const target = bestOtherCurve(result);
  const bound = curveBound(highs, instances, target);
  if (!result.curveBound) throw new Error(`eval:batch-bound: ${evaluationPath} has no curve bound for ${result.name}`);
  scenarios.push({
    name: result.name,
    seeds: result.seeds,
    target,
    aloneMargin: result.curveBound.margin,
    batchMargin: bound.margin,
    batchCurve: bound.curve,
    defaultWorstGap: checkTargets(result).worstCurveGap.gap,
    batchSizes: batchSizes(scenario.fleet.maxOngoingRequests),
    fullBatchRps: instances[0]?.fullBatchRps ?? 0,
    measuredRps: result.capacityRps,
    size: bound.size,
  });
  console.log(
    `${result.name}: margin ${(bound.margin * 100).toFixed(1)} points, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

const report: BatchBoundReport = { generatedBy: "npm run eval:batch-bound", from: evaluationPath, scenarios };
writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(root, "docs/batch-bound.md"), renderBatchBound(report));
console.log("wrote docs/batch-bound.json and docs/batch-bound.md");
