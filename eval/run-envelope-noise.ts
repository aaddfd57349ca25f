/**
 * `npm run eval:envelope-noise`: how much of the curve target's gap is the envelope's pick of its seeds' noise?
 * Runs every policy on each scenario's held-out seeds (those of `npm run eval`'s held-out run) and reads their
 * tuning-seed curves from docs/evaluation.json, then writes docs/envelope-noise.json and docs/envelope-noise.md
 * (src/sim/envelope-noise.ts; a few minutes).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type EnvelopeNoiseReport, renderEnvelopeNoise, type SeedSetCurves } from "../src/sim/envelope-noise";
import { evaluateScenario, type ScenarioResult } from "../src/sim/evaluation";
import { HELD_OUT_SEED_OFFSET } from "../src/sim/held-out";
import { EVAL_POLICIES } from "../src/sim/policies";
import { readScenarios } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
// No flags: --help prints the usage and any flag is refused, rather than taken for a run that rewrites docs/.
commandLine("npm run eval:envelope-noise", { options: {} });
const evaluation = JSON.parse(readFileSync(join(root, "docs/evaluation.json"), "utf8")) as {
  seedsPerScenario: number;
  scenarios: ScenarioResult[];
};

const curvesOf = (result: ScenarioResult) =>
  result.policies.map((p) => ({ id: p.id, curve: { ...p.metrics.servedWithinS } }));

const scenarios: SeedSetCurves[] = [];
for (const scenario of readScenarios()) {
  const tuning = evaluation.scenarios.find((s) => s.name === scenario.name);
  if (!tuning) throw new Error(`${scenario.name} is not in docs/evaluation.json: run npm run eval`);
  const started = performance.now();
  const held = evaluateScenario(
    { ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET },
    EVAL_POLICIES,
    evaluation.seedsPerScenario,
  );
  console.log(`${scenario.name} (held-out seeds): ${((performance.now() - started) / 1000).toFixed(1)} s`);
  scenarios.push({
    scenario: scenario.name,
    defaultPolicy: held.defaultPolicy,
    tuningSeeds: tuning.seeds,
    heldOutSeeds: held.seeds,
    tuning: curvesOf(tuning),
    heldOut: curvesOf(held),
  });
}
const report: EnvelopeNoiseReport = { generatedBy: "npm run eval:envelope-noise", scenarios };
writeGenerated(join(root, "docs/envelope-noise.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/envelope-noise.md"), renderEnvelopeNoise(report));
console.log("wrote docs/envelope-noise.json and docs/envelope-noise.md");
