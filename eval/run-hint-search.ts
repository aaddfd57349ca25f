/**
 * `npm run eval:hint-search`: can hint timing alone meet the curve target, with the default's admission? For the
 * bursts of docs/evaluation.json, a coordinate search (src/sim/hint-search.ts) over a table of hints by the refusal's
 * time (5 s buckets over the burst and the minute after it) and by whether it is the request's first refusal, in
 * place of the ledger's hints there, keeping the served and attempts targets; every run is the default's router,
 * queue and fleet. The same search runs beside it with static 30 s's FIFO router. It searches on the tuning seeds,
 * knowing their arrivals, then runs the tables found and every policy again on held-out seeds. Writes
 * docs/hint-search.json and docs/hint-search.md (about 20 minutes here).
 *
 * Flags: --scenario <name> (repeatable: only those, merged into the committed report), --sweeps <n> (default 2),
 * --render-only (no search: docs/hint-search.md again from the committed JSON).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandFlags, positiveIntFlag, UsageError } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { measureCapacity } from "../src/sim/capacity";
import { evaluatePolicy, evaluateScenario } from "../src/sim/evaluation";
import { HELD_OUT_SEED_OFFSET } from "../src/sim/held-out";
import { type HintSearchSettings, scoreAgainst, searchHintSchedule } from "../src/sim/hint-search";
import { type HintSearchReport, type HintSearchRow, renderHintSearch } from "../src/sim/hint-search-report";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../src/sim/policies";
import { bestOtherCurve, TARGET_TOLERANCE } from "../src/sim/targets";
import { generateWorkload } from "../src/sim/workload";
import { EVALUATION_PATH, readEvaluation } from "./scenario-bound-runs";
import { readScenario } from "./scenario-files";

const COMMAND = "npm run eval:hint-search";
const REPORT = "docs/hint-search.json";
/** The hints a cell may take (seconds), beside the ledger's. */
const VALUES = [1, 2, 3, 5, 7, 10, 15, 20, 30, 45, 60, 90, 120];
/** The bursts searched and their windows: the burst and the minute after it, where the ledger's hints miss. */
const WINDOWS: Record<string, { fromS: number; toS: number }> = {
  "demo-burst-3x": { fromS: 60, toS: 100 },
  "burst-3x": { fromS: 60, toS: 120 },
  "burst-10x": { fromS: 60, toS: 120 },
  "capacity-halves": { fromS: 60, toS: 120 },
};

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const { values, sweeps, only } = commandFlags(
  `${COMMAND} -- [--scenario <name>]... [--sweeps <n>] [--render-only]`,
  {
    options: {
      scenario: { type: "string", multiple: true },
      sweeps: { type: "string" },
      "render-only": { type: "boolean" },
    },
  },
  ({ values }) => {
    const only = values.scenario ?? [];
    for (const name of only)
      if (!(name in WINDOWS))
        throw new UsageError(`--scenario: no window for "${name}" (one of ${Object.keys(WINDOWS).join(", ")})`, 2);
    return { values, sweeps: positiveIntFlag("sweeps", values.sweeps, 2), only };
  },
);
const reportPath = join(root, REPORT);
if (values["render-only"]) {
  const committed = JSON.parse(readFileSync(reportPath, "utf8")) as HintSearchReport;
  writeGenerated(join(root, "docs/hint-search.md"), renderHintSearch(committed));
  console.log("wrote docs/hint-search.md");
  process.exit(0);
}
const evaluation = readEvaluation();
const defaultSpec = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID);
/** The other router searched: static 30 s's, a FIFO queue whose hint outside the table is the constant. */
const fifoSpec = EVAL_POLICIES.find((p) => p.id === "static-30");
if (!defaultSpec || !fifoSpec) throw new Error(`${COMMAND}: no default or static-30 policy`);
/** Static 30 s's attempts per offered request in a run: the attempts target's limit. */
const static30 = (r: { policies: { id: string; attemptsPerOffered: number }[] }) =>
  r.policies.find((p) => p.id === fifoSpec.id)?.attemptsPerOffered ?? Number.POSITIVE_INFINITY;
const previous: HintSearchRow[] =
  only.length > 0 && existsSync(reportPath)
    ? (JSON.parse(readFileSync(reportPath, "utf8")) as HintSearchReport).scenarios
    : [];

const rows: HintSearchRow[] = [];
for (const [name, window] of Object.entries(WINDOWS)) {
  if (only.length > 0 && !only.includes(name)) {
    const kept = previous.find((p) => p.name === name);
    if (kept) rows.push(kept);
    continue;
  }
  const started = performance.now();
  const result = evaluation.scenarios.find((r) => r.name === name);
  if (!result) throw new Error(`${COMMAND}: no scenario "${name}" in ${EVALUATION_PATH}`);
  const scenario = readScenario(name);
  const capacityRps = measureCapacity(scenario);
  const workloads = result.seeds.map((seed) => generateWorkload({ ...scenario, seed }, capacityRps));
  const others = result.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
  const settings: HintSearchSettings = {
    ...window,
    bucketS: 5,
    sweeps,
    values: VALUES,
    // The served and attempts targets, kept while the curve is searched.
    servedAtLeast: Math.max(...others.map((p) => p.servedFraction)) - TARGET_TOLERANCE.served,
    attemptsAtMost: static30(result),
  };
  const envelope = bestOtherCurve(result);
  const searchWith = (spec: PolicySpec) =>
    searchHintSchedule(
      (table) => evaluatePolicy(scenario, result.seeds, capacityRps, { ...spec, hintSchedule: table }, workloads),
      envelope,
      settings,
    );
  const search = searchWith(defaultSpec);
  const fifo = searchWith(fifoSpec);
  // The same table on seeds the search never saw, against every other policy run on them too.
  const held = { ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET };
  const heldPolicies = [
    ...EVAL_POLICIES,
    { ...defaultSpec, id: "hint-table", hintSchedule: search.table },
    { ...fifoSpec, id: "fifo-hint-table", hintSchedule: fifo.table },
  ];
  const heldResult = evaluateScenario(held, heldPolicies, result.seeds.length);
  const heldEnvelope = bestOtherCurve({
    ...heldResult,
    policies: heldResult.policies.filter((p) => p.id !== "hint-table" && p.id !== "fifo-hint-table"),
  });
  const heldScore = (id: string) => {
    const policy = heldResult.policies.find((p) => p.id === id);
    if (!policy) throw new Error(`${COMMAND}: no held-out run of ${id}`);
    return scoreAgainst(policy, heldEnvelope);
  };
  rows.push({
    name,
    seeds: result.seeds,
    heldSeeds: heldResult.seeds,
    settings,
    runs: search.evaluated,
    envelope,
    start: search.start,
    best: search.best,
    table: search.table,
    static30Attempts: static30(result),
    held: {
      envelope: heldEnvelope,
      start: heldScore(DEFAULT_POLICY_ID),
      table: heldScore("hint-table"),
      static30Attempts: static30(heldResult),
    },
    fifo: {
      policy: fifoSpec.id,
      runs: fifo.evaluated,
      start: fifo.start,
      best: fifo.best,
      table: fifo.table,
      held: { start: heldScore(fifoSpec.id), table: heldScore("fifo-hint-table") },
    },
  });
  console.log(
    `${name}: worst gap ${(search.start.worstGap * 100).toFixed(1)} -> ${(search.best.worstGap * 100).toFixed(1)} points, FIFO ${(fifo.start.worstGap * 100).toFixed(1)} -> ${(fifo.best.worstGap * 100).toFixed(1)} (${search.evaluated + fifo.evaluated} runs), ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

const report: HintSearchReport = { generatedBy: COMMAND, from: EVALUATION_PATH, scenarios: rows };
writeGenerated(reportPath, `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/hint-search.md"), renderHintSearch(report));
console.log("wrote docs/hint-search.json and docs/hint-search.md");
