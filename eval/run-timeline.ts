/**
 * `npm run eval:timeline -- <scenario> [--seed <n>] [--policy <policy id | variant id | JSON overrides>] [--bin <s>]`:
 * one simulated run cut into bins of time (src/sim/timeline.ts): first attempts, refusals and how far their hints
 * sent clients, admissions, completions and how late, and how busy the fleet was. Where the completion curve
 * says a policy serves late, this shows when: the fleet idle while refused clients sleep, or busy with requests
 * already past a horizon. The policy is one of docs/evaluation.md's (`static-30`, ...), one of the default's
 * variants (src/sim/variants.ts) or JSON overrides of the default as `npm run eval:variant` takes them; the seed
 * is the scenario's own unless given. Writes nothing (a few seconds).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { measureCapacity } from "../src/sim/capacity";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../src/sim/policies";
import { scenarioSchema } from "../src/sim/scenario";
import { runSimulation } from "../src/sim/simulation";
import { timelineOf } from "../src/sim/timeline";
import { parseVariantSpec } from "../src/sim/variant-spec";
import { generateWorkload } from "../src/sim/workload";
import { positiveIntFlag } from "./cli-flags";

const root = resolve(import.meta.dirname, "..");
const { values, positionals } = parseArgs({
  options: { seed: { type: "string" }, policy: { type: "string" }, bin: { type: "string" } },
  allowPositionals: true,
});
if (positionals.length !== 1) {
  console.error("usage: npm run eval:timeline -- <scenario> [--seed <n>] [--policy <id | JSON overrides>] [--bin <s>]");
  process.exit(2);
}
const name = positionals[0] as string;
const file = join(root, "eval/scenarios", `${name}.json`);
let text: string;
try {
  text = readFileSync(file, "utf8");
} catch {
  throw new Error(`no scenario ${name} in eval/scenarios`);
}
const scenario = scenarioSchema.parse(JSON.parse(text));
const seeded = {
  ...scenario,
  seed: values.seed === undefined ? scenario.seed : positiveIntFlag("seed", values.seed, 1),
};
const policyText = values.policy ?? DEFAULT_POLICY_ID;
const policy = EVAL_POLICIES.find((p) => p.id === policyText) ?? parseVariantSpec(policyText);
const binS = positiveIntFlag("bin", values.bin, 10);

const capacityRps = measureCapacity(seeded);
const run = runSimulation(seeded, policy, generateWorkload(seeded, capacityRps));
const idle = run.idleWhileWaitingSlotS / (run.fleetSlots * run.spanS);
console.log(`${name}, seed ${seeded.seed}, ${policy.label}: idle while waiting ${(100 * idle).toFixed(1)}%\n`);
console.log(
  "| from (s) | first attempts | refusals | mean hint (s) | hints > 30 s | admitted: first / retries | served | of them > 30 s / > 120 s after the first attempt | fleet busy |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of timelineOf(run, binS))
  console.log(
    `| ${r.fromS} | ${r.firstAttempts} | ${r.refusals} | ${r.meanHintS === undefined ? "-" : r.meanHintS.toFixed(1)} | ${r.hintsOver30s} | ${r.admittedFirst} / ${r.admittedRetries} | ${r.served} | ${r.servedAfter30s} / ${r.servedAfter120s} | ${Math.round(100 * r.busyShare)}% |`,
  );
