/**
 * `npm run eval:burst-train`: how do the policies do when an overload comes as a train of short spikes? Runs
 * `burst-3x` with its burst replaced by 60 s at a mean 1.5x whose excess arrives as a 0.2 s spike every 1, 2, 4 or
 * 8 s (and, to compare, 60 s at a steady 1.5x), on its own fleet and on a small one (one replica of 4 slots, short
 * answers: `smallFleet`), at the queue-bound sweep's queue bounds for each fleet's capacity, every policy on the same
 * arrivals (3 seeds), and beside them the default told its fresh arrivals in advance (the counterfactual
 * `clairvoyant-forecast`: how much of its loss is its forecast's) and the default with one trust per lead time (the
 * variant `trust-by-lead`), and writes docs/burst-train.json and docs/burst-train.md (about two minutes here).
 */

import { join, resolve } from "node:path";
import { commandLine } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import {
  BURST_TRAIN_FLEETS,
  type BurstTrainFleetShape,
  type BurstTrainPoint,
  fleetShape,
  onFleet,
  type PromiseCounts,
  renderBurstTrain,
  spikeTrain,
  trainShape,
  type VariantFigures,
} from "../src/sim/burst-train";
import { measureCapacity } from "../src/sim/capacity";
import { evaluatePolicy } from "../src/sim/evaluation";
import type { LedgerMetrics } from "../src/sim/metrics";
import { DEFAULT_POLICY_ID, type PolicySpec } from "../src/sim/policies";
import { parseVariantSpec } from "../src/sim/variant-spec";
import { readScenario } from "./scenario-files";
import { atSweepQueueBounds } from "./sweep";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
// No flags: --help prints the usage and any flag is refused, rather than taken for a run that rewrites docs/.
commandLine("npm run eval:burst-train", { options: {} });
// 0: no spikes, the same mean load held steady.
const PERIODS_S = [0, 1, 2, 4, 8];
const SEEDS = 3;
// A counterfactual, run at every point beside the policies: the default told its fresh arrivals in advance.
const CLAIRVOYANT = parseVariantSpec("clairvoyant-forecast");
// A measured variant of the default, run at every point beside the policies: one trust per lead time.
const TRUST_BY_LEAD = parseVariantSpec("trust-by-lead");

/** A run's promises made and broken (none without a ledger). */
const promiseCounts = (ledger: LedgerMetrics | undefined): PromiseCounts => ({
  made: ledger?.made ?? 0,
  broken: ledger?.broken ?? 0,
});

const burst = readScenario("burst-3x");
const points: BurstTrainPoint[] = [];
const fleets: BurstTrainFleetShape[] = [];
let seeds: number[] = [];
for (const fleet of BURST_TRAIN_FLEETS) {
  const onIt = onFleet(burst, fleet);
  let capacityRps = 0;
  for (const periodS of PERIODS_S) {
    const scenario = spikeTrain(onIt, periodS);
    capacityRps = measureCapacity(scenario);
    for (const { maxQueuedRequests, result: r } of atSweepQueueBounds(
      scenario,
      capacityRps,
      SEEDS,
      `${fleet} fleet, period ${periodS} s`,
    )) {
      seeds = r.seeds;
      // A variant of the default on the point's arrivals, seeds, capacity and queue bound.
      const variant = (spec: PolicySpec): VariantFigures => {
        const v = evaluatePolicy(
          { ...scenario, router: { ...scenario.router, maxQueuedRequests } },
          r.seeds,
          r.capacityRps,
          spec,
        );
        return {
          served: v.servedFraction,
          servedWithinS: v.servedWithinS,
          idleWhileWaiting: v.metrics.idleWhileWaitingFraction,
          promises: promiseCounts(v.metrics.ledger),
        };
      };
      const byDefault = r.policies.find((p) => p.id === DEFAULT_POLICY_ID);
      points.push({
        fleet,
        periodS,
        maxQueuedRequests,
        queueDrainS: r.queueDrainS,
        offeredRequests: r.offeredRequests,
        served: Object.fromEntries(r.policies.map((p) => [p.id, p.servedFraction])),
        servedWithinS: Object.fromEntries(r.policies.map((p) => [p.id, p.servedWithinS])),
        idleWhileWaiting: Object.fromEntries(r.policies.map((p) => [p.id, p.metrics.idleWhileWaitingFraction])),
        defaultPromises: promiseCounts(byDefault?.metrics.ledger),
        clairvoyantDefault: variant(CLAIRVOYANT),
        trustByLead: variant(TRUST_BY_LEAD),
      });
    }
  }
  fleets.push(fleetShape(onIt, fleet, capacityRps));
}
const [leadIn, after] = [burst.phases[0], burst.phases[burst.phases.length - 1]] as [
  (typeof burst.phases)[number],
  (typeof burst.phases)[number],
];
const report = {
  generatedBy: "npm run eval:burst-train",
  scenario: burst.name,
  seeds,
  capacityRps: (fleets.find((f) => f.fleet === "burst-3x") as BurstTrainFleetShape).capacityRps,
  fleets,
  leadIn,
  after,
  tailS: burst.tailS,
  trains: PERIODS_S.map((p) => trainShape(spikeTrain(burst, p), p)),
  clairvoyantPolicy: CLAIRVOYANT.id,
  trustByLeadPolicy: TRUST_BY_LEAD.id,
  points,
};
writeGenerated(join(root, "docs/burst-train.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/burst-train.md"), renderBurstTrain(report));
console.log("wrote docs/burst-train.json and docs/burst-train.md");
