import type { PolicyResult, ScenarioResult } from "./evaluation";
import { headerClientShares } from "./header-clients";
import { checkTargets, type TargetCheck } from "./targets";
import type { VariantSummary } from "./variants";

/**
 * Every tunable of the default, and every variant it was chosen against, was compared on each scenario's own
 * seeds (`seed`, `seed + 1`, ...). `npm run eval` checks the same targets again on seeds this far away, which no
 * tuning ever looked at: a choice that only fits the tuning seeds' arrivals shows up as a difference between the
 * two runs.
 */
export const HELD_OUT_SEED_OFFSET = 1000;

/** One scenario on the held-out seeds: the default's targets, and what it was scored on. */
export interface HeldOutScenario {
  name: string;
  seeds: number[];
  check: TargetCheck;
  /** The default's final served share, the best other policy's, and the oracle's. */
  served: { default: number; bestOther: number; oracle: number };
  /** Attempts per offered request: the default's and static 30 s's. */
  attempts: { default: number; static30: number | null };
  /** The default's served shares by what clients send (src/sim/header-clients.ts); null: none of that kind. */
  headerClients: { sdk: number; headerless: number | null; python: number | null };
}

/** What `npm run eval` records of the held-out seeds (`heldOut` in docs/evaluation.json). */
export interface HeldOutRun {
  seedOffset: number;
  scenarios: HeldOutScenario[];
  /** The default and each variant, scored on the held-out seeds (the same ids as `variants`). */
  variants: VariantSummary[];
}

/**
 * Summarises one scenario's result on the held-out seeds.
 *
 * @example
 * ```ts
 * const held = heldOutScenario(evaluateScenario({ ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET }, EVAL_POLICIES, 3));
 * held.check.met.curve; // the curve target on seeds nothing was tuned on
 * ```
 */
export function heldOutScenario(result: ScenarioResult): HeldOutScenario {
  const def = result.policies.find((p) => p.id === result.defaultPolicy) as PolicyResult;
  const others = result.policies.filter((p) => p.id !== result.defaultPolicy);
  const static30 = result.policies.find((p) => p.id === "static-30");
  const shares = headerClientShares(result, result.defaultPolicy);
  return {
    name: result.name,
    seeds: result.seeds,
    check: checkTargets(result),
    served: {
      default: def.metrics.servedFraction,
      bestOther: Math.max(...others.map((p) => p.metrics.servedFraction)),
      oracle: result.oracle.servedFraction,
    },
    attempts: { default: def.metrics.attemptsPerOffered, static30: static30?.metrics.attemptsPerOffered ?? null },
    headerClients: { sdk: shares.sdk, headerless: shares.headerless ?? null, python: shares.python ?? null },
  };
}

/**
 * Scenarios meeting each target, of `checks`.
 *
 * @example
 * ```ts
 * metCounts(json.targets); // { curve: 1, served: 12, oracle: 8, attempts: 11 }
 * ```
 */
export function metCounts(checks: readonly TargetCheck[]): VariantSummary["met"] {
  const count = (key: keyof TargetCheck["met"]) => checks.filter((c) => c.met[key]).length;
  return { curve: count("curve"), served: count("served"), oracle: count("oracle"), attempts: count("attempts") };
}
