/**
 * `npm run eval`: runs every scenario of eval/scenarios under every policy in the virtual-time simulator, then
 * the queue-bound sweep, and writes docs/evaluation.md, docs/evaluation.json, docs/retry-policy.md and
 * docs/figures/*.svg (the end-to-end figures, if `npm run eval:e2e` wrote docs/evaluation-e2e.json, are
 * included beside them). Every figure in the two documents comes from the results written to the JSON, except
 * docs/retry-policy.md's figures of ten held-out seeds, read from docs/held-out-seeds.json (`npm run
 * eval:held-seeds`) while that file's default matches this run's.
 *
 * Flags: --seeds <n> (default 3), --only <scenario,...> (a subset; the report then holds only those),
 * --no-sweep (skip the queue-bound sweep), --no-variants (skip the default policy's variants, src/sim/variants.ts),
 * --no-bound (skip the clairvoyant curve bound, src/sim/curve-bound.ts), --no-held-out (skip the run on held-out
 * seeds, src/sim/held-out.ts), --render-only (no simulation: re-render the documents from the results
 * docs/evaluation.json holds, with the end-to-end runs' JSON and the templates read again - for a change to those;
 * after a change to the code, run without it).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import loadHighs, { type Highs } from "highs";
import { commandFlags, positiveIntFlag, UsageError } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type ArrivalCurves, arrivalCurves, binReleases } from "../src/sim/arrival-bins";
import { measureCapacity } from "../src/sim/capacity";
import { curveBound, scenarioBoundSet, scenarioCurveBound } from "../src/sim/curve-bound";
import { evaluatePolicy, evaluateScenario, type ScenarioResult } from "../src/sim/evaluation";
import { HELD_OUT_SEED_OFFSET, type HeldOutRun, heldOutScenario } from "../src/sim/held-out";
import type { HeldSeedsRun } from "../src/sim/held-seeds";
import { COMPLETION_HORIZONS_S } from "../src/sim/metrics";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../src/sim/policies";
import { staleScenarios } from "../src/sim/report-held-seeds";
import {
  type E2eOpenAiRun,
  type E2eResult,
  renderReport,
  SUSTAINED_P50_TARGET_S,
  type SweepPoint,
} from "../src/sim/report-markdown";
import { renderPolicyDoc } from "../src/sim/report-policy";
import type { Scenario } from "../src/sim/scenario";
import { groupedBarChart, lineChart } from "../src/sim/svg-chart";
import { checkTargets, type TargetCheck } from "../src/sim/targets";
import { DEFAULT_POLICY_VARIANTS, defaultSummary, summarizeVariant, type VariantSummary } from "../src/sim/variants";
import { readScenarios } from "./scenario-files";
import { SWEEP_DRAIN_S, SWEEP_SCENARIOS, sweepQueueBound } from "./sweep";

const ORDER = [
  "demo-burst-3x",
  "burst-3x",
  "burst-10x",
  "sustained-1.3x",
  "waves",
  "capacity-halves",
  "mixed-fleet",
  "router-restart",
  "sharded",
  "sharded-16",
  "llm-sizes",
  "burst-3x-legacy-clients",
];

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const { values, seedCount, only } = commandFlags(
  "npm run eval -- [--seeds <n>] [--only <scenario,...>] [--no-sweep] [--no-variants] [--no-bound] [--no-held-out] [--render-only]",
  {
    options: {
      seeds: { type: "string" },
      only: { type: "string" },
      "no-sweep": { type: "boolean" },
      "no-variants": { type: "boolean" },
      "no-bound": { type: "boolean" },
      "no-held-out": { type: "boolean" },
      "render-only": { type: "boolean" },
    },
  },
  ({ values }) => {
    const only = values.only?.split(",");
    // A name that is no scenario would leave the report without it (or empty) rather than stop the run.
    const known = new Set(readScenarios().map((s) => s.name));
    const unknown = only?.filter((name) => !known.has(name)) ?? [];
    if (unknown.length > 0) throw new UsageError(`--only: no scenario ${unknown.join(", ")} in eval/scenarios`, 2);
    return { values, seedCount: positiveIntFlag("seeds", values.seeds, 3), only };
  },
);

const scenarios: Scenario[] = readScenarios()
  .filter((s) => !only || only.includes(s.name))
  .sort(
    (a, b) => (ORDER.indexOf(a.name) + 1 || 99) - (ORDER.indexOf(b.name) + 1 || 99) || a.name.localeCompare(b.name),
  );

const started = performance.now();
const docs = join(root, "docs");

/** What the simulator measures: every scenario and policy, the bound, the sweep, the variants, the held-out run. */
interface Simulated {
  results: ScenarioResult[];
  checks: TargetCheck[];
  sweeps: SweepPoint[];
  variants: VariantSummary[];
  heldOut: HeldOutRun | undefined;
  seedsPerScenario: number;
  arrivals: ArrivalCurves[] | undefined;
}

/** The scenarios whose requests docs/evaluation.md shows by first arrival, and the bins' width (seconds). */
const ARRIVALS = [
  { scenario: "burst-3x", binS: 10 },
  { scenario: "waves", binS: 15 },
] as const;

/**
 * The default, the policies that are best at 15, 30 or 60 s in that scenario (where the default's gaps are), and
 * static 30 s, by first arrival; with the bound's schedule unless the run skips the bound.
 */
function arrivalsOf(
  results: readonly ScenarioResult[],
  highs: Highs | undefined,
  shown: (typeof ARRIVALS)[number],
): ArrivalCurves | undefined {
  const index = results.findIndex((r) => r.name === shown.scenario);
  const result = results[index];
  const scenario = scenarios[index];
  if (!result || !scenario) return undefined;
  const others = result.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
  const best = [15, 30, 60].map(
    (h) => others.reduce((a, b) => ((b.servedWithinS[String(h)] ?? 0) > (a.servedWithinS[String(h)] ?? 0) ? b : a)).id,
  );
  const ids = [DEFAULT_POLICY_ID, ...new Set([...best, "static-30"])];
  const specs = ids.map((id) => EVAL_POLICIES.find((p) => p.id === id) as (typeof EVAL_POLICIES)[number]);
  const curves = arrivalCurves(scenario, result, specs, shown.binS);
  if (!highs) return curves;
  const { instances, target } = scenarioBoundSet(scenario, result);
  const bound = curveBound(highs, instances, target, 1, { preferSooner: true });
  return { ...curves, bound: binReleases(bound.byRelease, shown.binS) };
}

async function simulate(): Promise<Simulated> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const t = performance.now();
    results.push(evaluateScenario(scenario, EVAL_POLICIES, seedCount));
    console.log(`${scenario.name}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const checks = results.map(checkTargets);
  const highs = values["no-bound"] ? undefined : await loadHighs();
  const arrivals = ARRIVALS.flatMap((shown) => arrivalsOf(results, highs, shown) ?? []);

  if (highs) {
    results.forEach((r, i) => {
      const t = performance.now();
      // The sustained overload is held to a p50 time to success as well: the bound is solved again with it.
      const p50S = r.name === "sustained-1.3x" ? SUSTAINED_P50_TARGET_S : undefined;
      r.curveBound = scenarioCurveBound(highs, scenarios[i] as Scenario, r, p50S);
      console.log(`${r.name}: curve bound ${((performance.now() - t) / 1000).toFixed(1)} s`);
    });
  }

  const sweeps: SweepPoint[] = [];
  if (!values["no-sweep"]) {
    for (const scenario of scenarios.filter((s) => SWEEP_SCENARIOS.includes(s.name))) {
      const capacity = measureCapacity(scenario);
      for (const drainS of SWEEP_DRAIN_S) {
        const t = performance.now();
        const maxQueuedRequests = sweepQueueBound(drainS, capacity);
        const variant = { ...scenario, router: { ...scenario.router, maxQueuedRequests } };
        const r = evaluateScenario(variant, EVAL_POLICIES, seedCount);
        sweeps.push({
          scenario: scenario.name,
          maxQueuedRequests,
          queueDrainS: r.queueDrainS,
          oracle: { servedFraction: r.oracle.servedFraction, servedWithinS: r.oracle.servedWithinS },
          policies: r.policies.map((p) => ({
            id: p.id,
            servedFraction: p.servedFraction,
            attemptsPerOffered: p.attemptsPerOffered,
            hintCoverage: p.hintCoverage,
            servedWithinS: p.servedWithinS,
            timeToSuccessP50S: p.metrics.timeToSuccessP50S,
          })),
          targets: checkTargets(r),
        });
        console.log(`${scenario.name} @ queue ${maxQueuedRequests}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
      }
    }
  }

  /** The default and each of its variants (src/sim/variants.ts), scored on `results`' seeds. */
  function scoreVariants(label: string, results: readonly ScenarioResult[]): VariantSummary[] {
    const scored = [defaultSummary(results)];
    for (const v of DEFAULT_POLICY_VARIANTS) {
      const t = performance.now();
      const own = scenarios.map((s, i) => {
        const result = results[i] as ScenarioResult;
        return evaluatePolicy(s, result.seeds, result.capacityRps, v.spec);
      });
      scored.push(summarizeVariant(v, results, own));
      console.log(`variant ${v.id}${label}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    return scored;
  }
  const variants = values["no-variants"] ? [] : scoreVariants("", results);

  // The same scenarios on seeds no tuning looked at (src/sim/held-out.ts).
  let heldOut: HeldOutRun | undefined;
  if (!values["no-held-out"]) {
    const heldResults = scenarios.map((scenario) => {
      const t = performance.now();
      const r = evaluateScenario({ ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET }, EVAL_POLICIES, seedCount);
      console.log(`${scenario.name} (held-out seeds): ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return r;
    });
    heldOut = {
      seedOffset: HELD_OUT_SEED_OFFSET,
      scenarios: heldResults.map(heldOutScenario),
      variants: values["no-variants"] ? [] : scoreVariants(" (held-out seeds)", heldResults),
    };
  }
  return { results, checks, sweeps, variants, heldOut, seedsPerScenario: seedCount, arrivals };
}

/** --render-only: the simulated results docs/evaluation.json holds, for a change to the templates or end-to-end runs. */
function previousRun(): Simulated {
  const prior = JSON.parse(readFileSync(join(docs, "evaluation.json"), "utf8"));
  const names = new Set(scenarios.map((s) => s.name));
  const results = (prior.scenarios as ScenarioResult[]).filter((r) => names.has(r.name));
  if (results.length !== scenarios.length || prior.defaultPolicy !== DEFAULT_POLICY_ID)
    throw new Error("--render-only: docs/evaluation.json does not hold these scenarios and default; run npm run eval");
  return {
    results,
    checks: results.map(checkTargets),
    sweeps: prior.sweeps,
    variants: prior.variants,
    heldOut: prior.heldOut ?? undefined,
    seedsPerScenario: prior.seedsPerScenario,
    arrivals: prior.arrivals ?? undefined,
  };
}

const { results, checks, sweeps, variants, heldOut, seedsPerScenario, arrivals } = values["render-only"]
  ? previousRun()
  : await simulate();

const figuresDir = join(docs, "figures");
mkdirSync(figuresDir, { recursive: true });
const figures: Record<string, string[]> = { summary: ["figures/served-within-30s.svg"] };
writeGenerated(
  join(figuresDir, "served-within-30s.svg"),
  groupedBarChart({
    title: "Share of offered requests served within 30 s of their first attempt, per scenario and policy",
    categories: results.map((r) => r.name),
    series: (results[0]?.policies ?? []).map((p, i) => ({
      name: p.label,
      values: results.map((r) => r.policies[i]?.metrics.servedWithinS["30"] ?? null),
    })),
    yMax: 1,
    yLabel: "served within 30 s / offered",
  }),
);
for (const r of results) {
  const scenario = scenarios.find((s) => s.name === r.name) as Scenario;
  const shade: [number, number][] = [];
  let t = 0;
  for (const phase of scenario.phases) {
    if (phase.load > 1) shade.push([t, t + phase.durationS]);
    t += phase.durationS;
  }
  const file = `figures/retries-${r.name}.svg`;
  const shown = r.policies.filter((p) => p.id !== "none" && p.id !== "static-1");
  writeGenerated(
    join(docs, file),
    lineChart({
      title: `${r.name}: retries sent per ${shown[0]?.timeline.binS ?? 2} s (seed ${r.seeds[0]}; shaded: load above capacity)`,
      xStep: shown[0]?.timeline.binS ?? 2,
      series: shown.map((p) => ({ name: p.label, values: p.timeline.retries })),
      yLabel: "retries per bin",
      shade,
    }),
  );
  figures[r.name] = [file];
}

/** A JSON document the docs quote, if a run has written it. */
function readJsonIfAny<T>(path: string): T | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as T) : undefined;
}

const e2e = readJsonIfAny<E2eResult[]>(join(docs, "evaluation-e2e.json")) ?? [];
const e2eOpenAi = readJsonIfAny<E2eOpenAiRun>(join(docs, "evaluation-e2e-openai.json"));
// The headline run made again with the same code on the same seeds (eval/e2e-openai.ts --out), rendered beside it:
// run 18, run 17's twin (runs 13 to 16, the defaults before it, are in docs/benchmarks.md).
const e2eAgainFile = "docs/evaluation-e2e-openai-run18.json";
const e2eOpenAiAgain = readJsonIfAny<E2eOpenAiRun>(join(root, e2eAgainFile));
// Every policy on arrival seeds other than the headline run's (eval/e2e-openai.ts --first-seed 3026), rendered after
// them: the second run on them, today's default (the first, docs/evaluation-e2e-openai-held.json, is in
// docs/benchmarks.md).
const e2eHeldFile = "docs/evaluation-e2e-openai-held2.json";
const e2eOpenAiHeld = readJsonIfAny<E2eOpenAiRun>(join(root, e2eHeldFile));
// The default alone on the headline run's seeds with the code of a later commit (eval/e2e-openai.ts --policies
// booked_capacity): the headline run's evidence checked against code changed since, without running every policy.
const e2eDefaultLaterFile = "docs/evaluation-e2e-openai-run31.json";
const e2eOpenAiDefaultLater = readJsonIfAny<E2eOpenAiRun>(join(root, e2eDefaultLaterFile));
const json = {
  generatedBy: "npm run eval",
  seedsPerScenario,
  defaultPolicy: DEFAULT_POLICY_ID,
  completionHorizonsS: COMPLETION_HORIZONS_S,
  policies: EVAL_POLICIES,
  scenarios: results,
  targets: checks,
  sweeps,
  variants,
  e2e,
  e2eOpenAi: e2eOpenAi ?? null,
  e2eOpenAiAgain: e2eOpenAiAgain ?? null,
  e2eOpenAiHeld: e2eOpenAiHeld ?? null,
  e2eOpenAiDefaultLater: e2eOpenAiDefaultLater ?? null,
  heldOut: heldOut ?? null,
  arrivals: arrivals ?? null,
};
writeGenerated(join(docs, "evaluation.json"), `${JSON.stringify(json, null, 1)}\n`);
writeGenerated(
  join(docs, "evaluation.md"),
  renderReport({
    results,
    checks,
    sweeps,
    defaultPolicy: DEFAULT_POLICY_ID,
    seeds: seedsPerScenario,
    method: readFileSync(join(root, "eval/method.md"), "utf8"),
    analysis: readFileSync(join(root, "eval/analysis.md"), "utf8"),
    e2e,
    e2eOpenAi,
    e2eOpenAiAgain: e2eOpenAiAgain && { run: e2eOpenAiAgain, file: e2eAgainFile },
    e2eOpenAiHeld: e2eOpenAiHeld && { run: e2eOpenAiHeld, file: e2eHeldFile },
    e2eOpenAiDefaultLater: e2eOpenAiDefaultLater && { run: e2eOpenAiDefaultLater, file: e2eDefaultLaterFile },
    heldOut,
    arrivals,
    figures,
  }),
);
// Ten held-out seeds per scenario (`npm run eval:held-seeds`): quoted only while written by the same default.
const heldSeedsRun = readJsonIfAny<HeldSeedsRun>(join(docs, "held-out-seeds.json"));
const staleHeldSeeds = heldSeedsRun ? staleScenarios(heldSeedsRun, results, DEFAULT_POLICY_ID) : [];
if (staleHeldSeeds.length > 0)
  console.warn(
    `docs/held-out-seeds.json is stale (the default's curve differs in ${staleHeldSeeds.join(", ")}): run npm run eval:held-seeds, then npm run eval -- --render-only`,
  );
writeGenerated(
  join(docs, "retry-policy.md"),
  renderPolicyDoc({
    template: readFileSync(join(root, "eval/retry-policy.md"), "utf8"),
    results,
    checks,
    sweeps,
    variants,
    heldOutVariants: heldOut?.variants,
    heldOutScenarios: heldOut?.scenarios,
    defaultPolicy: DEFAULT_POLICY_ID,
    twin: readJsonIfAny(join(docs, "e2e-twin.json")),
    queueRefillAb: {
      before: readJsonIfAny(join(docs, "evaluation-e2e-openai-before-queue-refill.json")),
      after: readJsonIfAny(join(docs, "evaluation-e2e-openai-queue-refill-floor.json")),
    },
    medianFloorAb: {
      before: readJsonIfAny(join(docs, "evaluation-e2e-openai-lowest-floor.json")),
      after: readJsonIfAny(join(docs, "evaluation-e2e-openai-median-floor.json")),
    },
    // Run 10 (the default until the median floor with a 2 s fade) against run 11 (with them), every policy.
    fastFadeAb: {
      before: readJsonIfAny(join(docs, "evaluation-e2e-openai-run10.json")),
      after: readJsonIfAny(join(docs, "evaluation-e2e-openai-run11.json")),
    },
    heldSeeds: staleHeldSeeds.length === 0 ? heldSeedsRun : undefined,
  }),
);
console.log(
  `wrote docs/evaluation.md, docs/evaluation.json, docs/retry-policy.md, docs/figures (${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
