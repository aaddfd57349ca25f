/**
 * `npm run eval:wave-period`: is static 30 s's lead in the `waves` sweep the waves' period? Runs `waves` with wave
 * and trough half-periods of 15 to 45 s at the queue-bound sweep's queue bounds, every policy on the same arrivals
 * (3 seeds), and writes docs/wave-period.json and docs/wave-period.md (about 6 minutes here).
 */

import { join, resolve } from "node:path";
import { commandLine } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { measureCapacity } from "../src/sim/capacity";
import { renderWavePeriod, type WavePeriodPoint, wavesWithHalfPeriod } from "../src/sim/wave-period";
import { readScenario } from "./scenario-files";
import { atSweepQueueBounds } from "./sweep";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
// No flags: --help prints the usage and any flag is refused, rather than taken for a run that rewrites docs/.
commandLine("npm run eval:wave-period", { options: {} });
const HALF_PERIODS_S = [15, 20, 25, 30, 35, 40, 45];
const SEEDS = 3;

const waves = readScenario("waves");
const ownHalfPeriodS = waves.phases[1]?.durationS as number;
const points: WavePeriodPoint[] = [];
let seeds: number[] = [];
for (const halfPeriodS of HALF_PERIODS_S) {
  const scenario = wavesWithHalfPeriod(waves, halfPeriodS);
  const capacity = measureCapacity(scenario);
  for (const { maxQueuedRequests, result: r } of atSweepQueueBounds(
    scenario,
    capacity,
    SEEDS,
    `half-period ${halfPeriodS} s`,
  )) {
    seeds = r.seeds;
    points.push({
      halfPeriodS,
      maxQueuedRequests,
      queueDrainS: r.queueDrainS,
      served: Object.fromEntries(r.policies.map((p) => [p.id, p.servedFraction])),
    });
  }
}
const report = { generatedBy: "npm run eval:wave-period", scenario: waves.name, seeds, ownHalfPeriodS, points };
writeGenerated(join(root, "docs/wave-period.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/wave-period.md"), renderWavePeriod(report));
console.log("wrote docs/wave-period.json and docs/wave-period.md");
