/**
 * `npm run eval:burst-length`: are the bursts' curve gaps their burst length's? Runs `burst-3x` and `burst-10x` with
 * bursts of 5 to 60 s, every policy on the same arrivals (their seeds), and writes docs/burst-length.json and
 * docs/burst-length.md (about 2 minutes here).
 */

import { join, resolve } from "node:path";
import { commandLine } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type BurstLengthRow, renderBurstLength, withBurstLength } from "../src/sim/burst-length";
import { evaluateScenario } from "../src/sim/evaluation";
import { EVAL_POLICIES } from "../src/sim/policies";
import { checkTargets } from "../src/sim/targets";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
// No flags: --help prints the usage and any flag is refused, rather than taken for a run that rewrites docs/.
commandLine("npm run eval:burst-length", { options: {} });
const SCENARIOS = ["burst-3x", "burst-10x"];
const BURSTS_S = [5, 10, 20, 30, 45, 60];
const SEEDS = 3;

const rows: BurstLengthRow[] = [];
const scenarios: Array<{ name: string; ownBurstS: number; seeds: number[] }> = [];
for (const name of SCENARIOS) {
  const scenario = readScenario(name);
  const ownBurstS = scenario.phases.find((p) => p.load > 1)?.durationS as number;
  let seeds: number[] = [];
  for (const burstS of [...new Set([...BURSTS_S, ownBurstS])].sort((a, b) => a - b)) {
    const started = performance.now();
    const result = evaluateScenario(withBurstLength(scenario, burstS), EVAL_POLICIES, SEEDS);
    const check = checkTargets(result);
    seeds = result.seeds;
    rows.push({ scenario: name, burstS, curveGap: check.curveGap, worst: check.worstCurveGap });
    console.log(`${name}, burst ${burstS} s: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  scenarios.push({ name, ownBurstS, seeds });
}
const report = { generatedBy: "npm run eval:burst-length", scenarios, rows };
writeGenerated(join(root, "docs/burst-length.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/burst-length.md"), renderBurstLength(report));
console.log("wrote docs/burst-length.json and docs/burst-length.md");
