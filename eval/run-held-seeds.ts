/**
 * `npm run eval:held-seeds`: the default and the variants docs/retry-policy.md compares it with at length
 * (`HELD_SEEDS_VARIANTS`, src/sim/held-seeds.ts), against every other policy, on ten held-out seeds per scenario
 * (three seeds cannot tell a difference of a point or two from the seeds' own noise). Writes
 * docs/held-out-seeds.json, which `npm run eval` reads to fill those figures into docs/retry-policy.md (about seven
 * minutes). Run it again after a change to the default: a test fails while the file's record of the default on the
 * tuning seeds differs from docs/evaluation.json's.
 *
 * Flags: --seeds <n> (held-out seeds per scenario, default 10).
 */

import { join, resolve } from "node:path";
import { commandFlags, positiveIntFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { HELD_SEEDS_DEFAULT_COUNT, heldSeedsRun } from "../src/sim/held-seeds";
import { readScenarios } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const seedCount = commandFlags(
  "npm run eval:held-seeds -- [--seeds <n>]",
  { options: { seeds: { type: "string" } } },
  ({ values }) => positiveIntFlag("seeds", values.seeds, HELD_SEEDS_DEFAULT_COUNT),
);
const started = performance.now();
const run = heldSeedsRun(readScenarios(), seedCount, (name) =>
  console.log(`${name} (${((performance.now() - started) / 1000).toFixed(0)} s)`),
);
const file = join(root, "docs/held-out-seeds.json");
writeGenerated(file, `${JSON.stringify(run, null, 2)}\n`);
for (const s of run.summaries)
  console.log(
    `${s.id}: summed worst curve gaps ${s.worstCurveGapSumPts.toFixed(1)} pts; curve / served / oracle / attempts met ${s.met.curve} / ${s.met.served} / ${s.met.oracle} / ${s.met.attempts}`,
  );
console.log(`wrote docs/held-out-seeds.json (${((performance.now() - started) / 1000).toFixed(0)} s)`);
