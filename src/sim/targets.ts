import type { PolicyResult, ScenarioResult } from "./evaluation";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";

/** Issue 15's simulator targets for the default policy, checked per scenario (or sweep point). */
export interface TargetCheck {
  scenario: string;
  /** Per horizon: the default's served-within share minus the best other policy's (negative: it loses). */
  curveGap: Record<string, number>;
  /** The horizon where the default loses most, and by how much. */
  worstCurveGap: { horizonS: number; gap: number; bestOther: string };
  /** Final served share: default minus the best other policy's, and the oracle's minus the default's. */
  servedGap: number;
  oracleGap: number;
  /** Attempts per offered request: default minus static 30 s's. */
  attemptsVsStatic30: number;
  met: { curve: boolean; served: boolean; oracle: boolean; attempts: boolean };
}

/** The tolerances of the targets (fractions): curve within 2 points, served within 1, oracle within 5. */
export const TARGET_TOLERANCE = { curve: 0.02, served: 0.01, oracle: 0.05 } as const;

/**
 * Float noise allowed when a gap is held to a tolerance. Shares are counts over the offered requests, so a gap of
 * exactly 2 points is met; subtracting two decimal shares can miss it by 1e-17 (0.30 - 0.32 is -0.020000000000000018).
 * Far below one request in any run (1e-12 of a share is one request in a trillion).
 */
export const TARGET_EPS = 1e-12;

/**
 * Whether `gap` (negative: behind) is at least `-tolerance`, float noise aside.
 *
 * @example
 * ```ts
 * withinTolerance(0.3 - 0.32, TARGET_TOLERANCE.curve); // true: exactly 2 points behind
 * withinTolerance(-0.021, TARGET_TOLERANCE.curve);     // false
 * ```
 */
export function withinTolerance(gap: number, tolerance: number): boolean {
  return gap >= -tolerance - TARGET_EPS;
}

/**
 * A policy's completion curve at one horizon: the share of offered requests served within `h` seconds.
 *
 * @example
 * ```ts
 * curveOf(policy, 30); // 0.85
 * ```
 */
export const curveOf = (p: PolicyResult, h: number): number => p.metrics.servedWithinS[String(h)] ?? 0;

/**
 * The best of the policies other than the default at each horizon (each horizon's best may be a different
 * policy): what the curve target measures the default against.
 *
 * @example
 * ```ts
 * bestOtherCurve(result); // { "5": 0.6, "15": 0.76, "30": 0.89, "60": 0.96, "120": 0.98 }
 * ```
 */
export function bestOtherCurve(result: ScenarioResult): CompletionCurve {
  const others = result.policies.filter((p) => p.id !== result.defaultPolicy);
  return Object.fromEntries(
    COMPLETION_HORIZONS_S.map((h) => [String(h), Math.max(...others.map((p) => curveOf(p, h)))]),
  );
}

/**
 * A scenario's result with the default policy's figures replaced by `own` (a variant's or a candidate's, run on the
 * same seeds): what the targets check a variant on, against the same other policies.
 *
 * @example
 * ```ts
 * checkTargets(withDefault(result, evaluatePolicy(scenario, result.seeds, result.capacityRps, variant.spec)));
 * ```
 */
export function withDefault(result: ScenarioResult, own: PolicyResult): ScenarioResult {
  return {
    ...result,
    policies: result.policies.map((p) => (p.id === result.defaultPolicy ? { ...own, id: p.id } : p)),
  };
}

/**
 * The default policy against every other policy of a scenario's result, on issue 15's targets.
 *
 * @example
 * ```ts
 * const check = checkTargets(result);
 * check.met.curve; // true when the default is within 2 points of the best other policy at every horizon
 * ```
 */
export function checkTargets(result: ScenarioResult): TargetCheck {
  const def = result.policies.find((p) => p.id === result.defaultPolicy);
  if (!def) throw new Error(`no result for the default policy ${result.defaultPolicy}`);
  const others = result.policies.filter((p) => p.id !== def.id);
  const curveGap: Record<string, number> = {};
  let worst = { horizonS: COMPLETION_HORIZONS_S[0] as number, gap: Number.POSITIVE_INFINITY, bestOther: "" };
  for (const h of COMPLETION_HORIZONS_S) {
    const best = others.reduce((a, b) => (curveOf(b, h) > curveOf(a, h) ? b : a));
    const gap = curveOf(def, h) - curveOf(best, h);
    curveGap[String(h)] = gap;
    if (gap < worst.gap) worst = { horizonS: h, gap, bestOther: best.id };
  }
  const bestServed = Math.max(...others.map((p) => p.metrics.servedFraction));
  const static30 = result.policies.find((p) => p.id === "static-30");
  const servedGap = def.metrics.servedFraction - bestServed;
  const oracleGap = result.oracle.servedFraction - def.metrics.servedFraction;
  const attemptsVsStatic30 = static30 ? def.metrics.attemptsPerOffered - static30.metrics.attemptsPerOffered : 0;
  return {
    scenario: result.name,
    curveGap,
    worstCurveGap: worst,
    servedGap,
    oracleGap,
    attemptsVsStatic30,
    met: {
      curve: withinTolerance(worst.gap, TARGET_TOLERANCE.curve),
      served: withinTolerance(servedGap, TARGET_TOLERANCE.served),
      oracle: withinTolerance(-oracleGap, TARGET_TOLERANCE.oracle),
      attempts: withinTolerance(-attemptsVsStatic30, 0),
    },
  };
}
