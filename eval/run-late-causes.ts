/**
 * `npm run eval:late-causes`: why the default serves requests late at the horizon where it is furthest behind the
 * best other policy, beside why that policy does. Runs the default and each scenario's leader there on the seeds of
 * docs/evaluation.json, checks that their curves are the file's (the figures must come from the code on disk), and
 * writes docs/late-causes.json and docs/late-causes.md (src/sim/late-causes.ts; about 15 s).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { policyTraces, type ScenarioResult } from "../src/sim/evaluation";
import { lateCauses } from "../src/sim/late-causes";
import { type LateCausesReport, type LateCausesRow, renderLateCauses } from "../src/sim/late-causes-report";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../src/sim/policies";
import type { Scenario } from "../src/sim/scenario";
import type { TargetCheck } from "../src/sim/targets";
import { readScenarios } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
// No flags: --help prints the usage and any flag is refused, rather than taken for a run that rewrites docs/.
commandLine("npm run eval:late-causes", { options: {} });
const evaluation = JSON.parse(readFileSync(join(root, "docs/evaluation.json"), "utf8")) as {
  seedsPerScenario: number;
  scenarios: ScenarioResult[];
  targets: TargetCheck[];
};

/** The policy's late requests at `horizonS`, its seeds pooled, checked against docs/evaluation.json's curve. */
function lateOf(scenario: Scenario, result: ScenarioResult, policyId: string, horizonS: number) {
  const policy = EVAL_POLICIES.find((p) => p.id === policyId) as PolicySpec | undefined;
  if (!policy) throw new Error(`${policyId} is not an evaluated policy`);
  const requests = policyTraces(scenario, result.seeds, result.capacityRps, policy).flatMap((t) => t.requests);
  const counts = lateCauses(requests, horizonS);
  const recorded = result.policies.find((p) => p.id === policyId)?.servedWithinS[String(horizonS)];
  const measured = 1 - counts.late / counts.offered;
  if (recorded === undefined || Math.abs(recorded - measured) > 1e-9)
    throw new Error(
      `${scenario.name}, ${policyId}: ${measured} served within ${horizonS} s here, ${recorded} in docs/evaluation.json: run npm run eval`,
    );
  return counts;
}

const rows: LateCausesRow[] = [];
for (const scenario of readScenarios()) {
  const result = evaluation.scenarios.find((s) => s.name === scenario.name);
  const targets = evaluation.targets.find((t) => t.scenario === scenario.name);
  if (!result || !targets) throw new Error(`${scenario.name} is not in docs/evaluation.json: run npm run eval`);
  const { horizonS, bestOther } = targets.worstCurveGap;
  const started = performance.now();
  rows.push({
    scenario: scenario.name,
    horizonS,
    leader: bestOther,
    default: lateOf(scenario, result, DEFAULT_POLICY_ID, horizonS),
    leaderCounts: lateOf(scenario, result, bestOther, horizonS),
  });
  console.log(`${scenario.name} at ${horizonS} s: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
const report: LateCausesReport = {
  generatedBy: "npm run eval:late-causes",
  seedsPerScenario: evaluation.seedsPerScenario,
  scenarios: rows,
};
writeGenerated(join(root, "docs/late-causes.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/late-causes.md"), renderLateCauses(report));
console.log("wrote docs/late-causes.json and docs/late-causes.md");
