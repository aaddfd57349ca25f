/**
 * `npm run eval:batch-bound`: is batching what the curve target asks for? For every scenario of
 * docs/evaluation.json, the clairvoyant curve bound with each request served in any batch size, slower and cheaper
 * in a bigger one (src/sim/batch-bound.ts), against the same targets and seeds. Writes docs/batch-bound.json and
 * docs/batch-bound.md (about 6 minutes here: its linear programs are about twice the clairvoyant bound's).
 *
 * Flags: --scenario <name> (repeatable: only those, merged into the committed report); --render-only (no bound:
 * the page written again from the committed JSON).
 */

import { join, resolve } from "node:path";
import loadHighs from "highs";
import { generatedWriter } from "../scripts/source-snapshot";
import { batchBoundInstance, batchSizes } from "../src/sim/batch-bound";
import { type BatchBoundReport, type BatchBoundScenario, renderBatchBound } from "../src/sim/batch-bound-report";
import { curveBound, seedInstances } from "../src/sim/curve-bound";
import { bestOtherCurve, checkTargets } from "../src/sim/targets";
import { boundEachScenario, EVALUATION_PATH } from "./scenario-bound-runs";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const highs = await loadHighs();
const scenarios = await boundEachScenario<BatchBoundScenario>(
  "npm run eval:batch-bound",
  "docs/batch-bound.json",
  (result) => {
    const scenario = readScenario(result.name);
    const instances = seedInstances(scenario, result, batchBoundInstance);
    const target = bestOtherCurve(result);
    const bound = curveBound(highs, instances, target);
    if (!result.curveBound)
      throw new Error(`eval:batch-bound: ${EVALUATION_PATH} has no curve bound for ${result.name}`);
    return {
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
    };
  },
  (row) => `margin ${(row.batchMargin * 100).toFixed(1)} points`,
);

const report: BatchBoundReport = { generatedBy: "npm run eval:batch-bound", from: EVALUATION_PATH, scenarios };
writeGenerated(join(root, "docs/batch-bound.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/batch-bound.md"), renderBatchBound(report));
console.log("wrote docs/batch-bound.json and docs/batch-bound.md");
