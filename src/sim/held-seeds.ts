import { measureCapacity } from "./capacity";
import { evaluatePolicy, evaluateScenario, type PolicyResult, type ScenarioResult } from "./evaluation";
import { HELD_OUT_SEED_OFFSET } from "./held-out";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "./policies";
import type { Scenario } from "./scenario";
import { DEFAULT_POLICY_VARIANTS, defaultSummary, summarizeVariant, type VariantSummary } from "./variants";

/**
 * The variants whose figures on many held-out seeds docs/retry-policy.md quotes: a difference of a point or two
 * between the default and one of them is within three seeds' noise, so the prose quotes ten.
 */
export const HELD_SEEDS_VARIANTS = [
  "demoted-headroom-1",
  "horizon-pack",
  "fifo-while-standing",
  "sdk-room-off",
  "forget-when-queued",
  "fast-floor-only",
  "recurring-best-effort-off",
  "demoted-quiet-60",
] as const;

/** The held-out seeds per scenario that `npm run eval:held-seeds` runs unless told otherwise. */
export const HELD_SEEDS_DEFAULT_COUNT = 10;

/** One policy (the default or a variant) on the held-out seeds (its header-less clients' gap in `perScenario`). */
export type HeldSeedsSummary = VariantSummary;

/** What `npm run eval:held-seeds` writes (docs/held-out-seeds.json). */
export interface HeldSeedsRun {
  generatedBy: string;
  seedOffset: number;
  seedsPerScenario: number;
  /** Each scenario's held-out seeds. */
  scenarios: { name: string; seeds: number[] }[];
  /**
   * The default's completion curve on the tuning seeds at the time of the run, per scenario: equal to
   * docs/evaluation.json's unless the default changed since (then this file is stale; a test checks it).
   */
  defaultOnTuningSeeds: Record<string, Record<string, number>>;
  /** The default first, then each of {@link HELD_SEEDS_VARIANTS}. */
  summaries: HeldSeedsSummary[];
}

/**
 * Runs every policy and the quoted variants on `seedCount` held-out seeds of each scenario (the seeds of
 * `npm run eval:variant -- <variant> --held --seeds <n>`), and the default on the tuning seeds (to date the run).
 * Deterministic: the same code gives the same figures.
 *
 * @example
 * ```ts
 * const run = heldSeedsRun(readScenarios(), 10, (name) => console.log(name));
 * run.summaries[0]?.worstCurveGapSumPts; // the default's summed worst curve gaps on ten held-out seeds
 * ```
 */
export function heldSeedsRun(
  scenarios: readonly Scenario[],
  seedCount: number,
  progress: (scenario: string) => void = () => {},
): HeldSeedsRun {
  if (!Number.isInteger(seedCount) || seedCount < 1)
    throw new Error(`seedCount must be a positive integer, got ${seedCount}`);
  const variants = HELD_SEEDS_VARIANTS.map((id) => {
    const v = DEFAULT_POLICY_VARIANTS.find((x) => x.id === id);
    if (!v) throw new Error(`no variant ${id} in src/sim/variants.ts`);
    return v;
  });
  const defaultSpec = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;
  const results: ScenarioResult[] = [];
  const own: PolicyResult[][] = variants.map(() => []);
  const defaultOnTuningSeeds: HeldSeedsRun["defaultOnTuningSeeds"] = {};
  for (const scenario of scenarios) {
    progress(scenario.name);
    const result = evaluateScenario(
      { ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET },
      EVAL_POLICIES,
      seedCount,
    );
    results.push(result);
    variants.forEach((v, i) => {
      own[i]?.push(evaluatePolicy(scenario, result.seeds, result.capacityRps, v.spec));
    });
    // The tuning seeds as `npm run eval` runs them (three, from the scenario's own seed, its own capacity).
    const tuningSeeds = [0, 1, 2].map((i) => scenario.seed + i);
    defaultOnTuningSeeds[scenario.name] = evaluatePolicy(
      scenario,
      tuningSeeds,
      measureCapacity(scenario),
      defaultSpec,
    ).servedWithinS;
  }
  return {
    generatedBy: "npm run eval:held-seeds",
    seedOffset: HELD_OUT_SEED_OFFSET,
    seedsPerScenario: seedCount,
    scenarios: results.map((r) => ({ name: r.name, seeds: r.seeds })),
    defaultOnTuningSeeds,
    summaries: [defaultSummary(results), ...variants.map((v, i) => summarizeVariant(v, results, own[i] ?? []))],
  };
}
