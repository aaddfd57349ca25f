import { resolve } from "node:path";
import { commandFlags, positiveIntFlag, UsageError } from "../scripts/command-line";
import { measureCapacity } from "../src/sim/capacity";
import { outcomesByClientStyle } from "../src/sim/client-outcomes";
import { firstAttemptsByArrival } from "../src/sim/first-attempt-fates";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../src/sim/policies";
import { runSimulation } from "../src/sim/simulation";
import { timelineOf } from "../src/sim/timeline";
import { parseVariantSpec } from "../src/sim/variant-spec";
import { generateWorkload } from "../src/sim/workload";
import { readScenario } from "./scenario-files";

const _root = resolve(import.meta.dirname, "..");
/** `read`'s value, or its error as a refused command line (an unknown scenario or policy), prefixed by `prefix`. */
function asUsage<T>(read: () => T, prefix = ""): T {
  try {
    return read();
  } catch (error) {
    throw new UsageError(`${prefix}${(error as Error).message}`, 2);
  }
}
const { name, seeded, policy, binS } = commandFlags(
  "npm run eval:timeline -- <scenario> [--seed <n>] [--policy <id | JSON overrides>] [--bin <s>] [--queue <n>]",
  {
    options: {
      seed: { type: "string" },
      policy: { type: "string" },
      bin: { type: "string" },
      queue: { type: "string" },
    },
    allowPositionals: true,
  },
  ({ values, positionals }) => {
    const name = positionals[0] as string;
    const scenario = asUsage(() => readScenario(name));
    // --queue: the router's queue bound, as the queue-bound sweep of `npm run eval` sets it.
    const seeded = {
      ...scenario,
      seed: values.seed === undefined ? scenario.seed : positiveIntFlag("seed", values.seed, 1),
      router: {
        ...scenario.router,
        maxQueuedRequests:
          values.queue === undefined
            ? scenario.router.maxQueuedRequests
            : positiveIntFlag("queue", values.queue, scenario.router.maxQueuedRequests),
      },
    };
    const policyText = values.policy ?? DEFAULT_POLICY_ID;
    const policy =
      EVAL_POLICIES.find((p) => p.id === policyText) ?? asUsage(() => parseVariantSpec(policyText), "--policy: ");
    return { name, seeded, policy, binS: positiveIntFlag("bin", values.bin, 10) };
  },
);

const capacityRps = measureCapacity(seeded);
const run = runSimulation(seeded, policy, generateWorkload(seeded, capacityRps), undefined, { capacityRps });
const idle = run.idleWhileWaitingSlotS / (run.fleetSlots * run.spanS);
console.log(`${name}, seed ${seeded.seed}, ${policy.label}: idle while waiting ${(100 * idle).toFixed(1)}%\n`);
const rows = timelineOf(run, binS);
// booked_capacity's ledger: promises made and how they ended in each bin, and its trust (absent for other policies).
const ledger = run.ledger !== undefined;
console.log(
  `| from (s) | first attempts | refusals | mean hint (s) | hints > 30 s | admitted: first / retries | served | of them > 30 s / > 120 s after the first attempt | fleet busy | first attempts served, p50: slot wait / on replica (s) |${ledger ? " promises made: kept / broken / no-show | trust |" : ""}`,
);
console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |${ledger ? " --- | --- |" : ""}`);
const seconds = (s: number | undefined) => (s === undefined ? "-" : s.toFixed(2));
const ledgerCells = (r: (typeof rows)[number]) =>
  r.promises === undefined
    ? ""
    : ` ${r.promises.made}: ${r.promises.kept} / ${r.promises.broken} / ${r.promises.noShow} | ${r.meanTrust === undefined ? "-" : r.meanTrust.toFixed(2)} |`;
for (const r of rows)
  console.log(
    `| ${r.fromS} | ${r.firstAttempts} | ${r.refusals} | ${r.meanHintS === undefined ? "-" : r.meanHintS.toFixed(1)} | ${r.hintsOver30s} | ${r.admittedFirst} / ${r.admittedRetries} | ${r.served} | ${r.servedAfter30s} / ${r.servedAfter120s} | ${Math.round(100 * r.busyShare)}% | ${seconds(r.firstSlotWaitP50S)} / ${seconds(r.firstOnReplicaP50S)} |${ledgerCells(r)}`,
  );

// Who was lost: which clients' requests the run did not serve (a backoff-only client or a no-show can be served only
// on its first attempts; a hint-honouring one whenever its hint lands on room).
// Attempts shed at the queue timeout waited the whole timeout for nothing (and cost the client a retry).
console.log(
  "\n| client style | requests | served | within 60 s | lost (points of all requests) | attempts per request | of them shed at the queue timeout |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
for (const o of outcomesByClientStyle(run))
  console.log(
    `| ${o.style} | ${o.requests} | ${pct(o.served)} | ${pct(o.servedWithin60s)} | ${(100 * o.lostOfAll).toFixed(1)} | ${o.attemptsPerRequest.toFixed(3)} | ${o.timedOutPerRequest.toFixed(3)} |`,
  );

// By first arrival: what became of each bin's first attempts - refused (how far their hints sent them) or admitted
// after waiting over 1 s for a slot - beside the share served within 5 s: why a bin misses the shortest horizon.
console.log(
  "\n| first arrived from (s) | requests | first attempt refused | their mean hint (s) | first attempt waited > 1 s for a slot | served within 5 s | lost | attempts per request |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const b of firstAttemptsByArrival(run, binS))
  console.log(
    `| ${b.fromS} | ${b.requests} | ${b.refused} | ${b.meanHintS === undefined ? "-" : b.meanHintS.toFixed(1)} | ${b.waitedLong} | ${b.servedWithin5s} | ${b.lost} | ${b.attemptsPerRequest.toFixed(2)} |`,
  );
