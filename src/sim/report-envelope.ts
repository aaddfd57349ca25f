import type { PolicyResult } from "./evaluation";
import { COMPLETION_HORIZONS_S } from "./metrics";
import { pts } from "./report-format";
import { TARGET_TOLERANCE, withinTolerance } from "./targets";

/** What the rows read of a scenario's (or a sweep point's) results: each policy's completion curve. */
export interface CurveRun {
  name: string;
  policies: ReadonlyArray<Pick<PolicyResult, "id" | "servedWithinS">>;
}

const curveAt = (p: Pick<PolicyResult, "servedWithinS">, h: number) => p.servedWithinS[String(h)] ?? 0;

/**
 * One policy held to the curve target as the default is: in each scenario, its completion curve against the best
 * of all the *other* policies at each horizon (the envelope; the default among them when the policy is not the
 * default).
 */
export interface EnvelopeRow {
  policy: string;
  scenarios: number;
  /** Scenarios where its worst gap is within the curve target's 2 points. */
  curveWithin: number;
  /** Scenarios where its worst gap is the smallest of all policies' (ties count for each). */
  nearest: number;
  /** Its worst gaps summed over the scenarios (a share; negative: behind). */
  worstSum: number;
  /** Its worst gap over every scenario and horizon. */
  worst: { gap: number; scenario: string; horizonS: number };
}

/**
 * A policy's worst gap in one scenario: its curve less the best other policy's (but `leftOut`), at the horizon where
 * that is least.
 */
function worstGap(result: CurveRun, policy: string, leftOut?: string): { gap: number; horizonS: number } {
  const own = result.policies.find((p) => p.id === policy);
  const others = result.policies.filter((p) => p.id !== policy && p.id !== leftOut);
  let worst = { gap: Number.POSITIVE_INFINITY, horizonS: COMPLETION_HORIZONS_S[0] as number };
  if (!own || others.length === 0) return worst;
  for (const h of COMPLETION_HORIZONS_S) {
    const gap = curveAt(own, h) - Math.max(...others.map((p) => curveAt(p, h)));
    if (gap < worst.gap) worst = { gap, horizonS: h };
  }
  return worst;
}

/**
 * Every policy (in the results' order) held to the curve target against all the others, as the default is. The
 * target's envelope takes each horizon's best from a different policy if need be; these rows say whether any
 * policy, constant or computed, comes near such an envelope of the rest, and which comes nearest. With `leftOut`,
 * that policy is neither held to the target nor part of anyone's envelope (the baselines among themselves).
 *
 * @example
 * ```ts
 * envelopeRows(results).find((r) => r.policy === "static-30")?.curveWithin; // e.g. 0
 * envelopeRows(results, "booked_capacity").map((r) => r.policy); // every policy but the default
 * ```
 */
export function envelopeRows(results: readonly CurveRun[], leftOut?: string): EnvelopeRow[] {
  const ids = results[0]?.policies.map((p) => p.id).filter((id) => id !== leftOut) ?? [];
  const gaps = results.map((r) => new Map(ids.map((id) => [id, worstGap(r, id, leftOut)])));
  return ids.map((policy) => {
    const row: EnvelopeRow = {
      policy,
      scenarios: 0,
      curveWithin: 0,
      nearest: 0,
      worstSum: 0,
      worst: { gap: Number.POSITIVE_INFINITY, scenario: "", horizonS: COMPLETION_HORIZONS_S[0] },
    };
    results.forEach((r, i) => {
      const byPolicy = gaps[i] as Map<string, { gap: number; horizonS: number }>;
      const own = byPolicy.get(policy);
      if (!own || !Number.isFinite(own.gap)) return;
      row.scenarios += 1;
      row.worstSum += own.gap;
      if (withinTolerance(own.gap, TARGET_TOLERANCE.curve)) row.curveWithin += 1;
      // Ties count for each: two worst gaps of exactly 2 points may differ by float noise.
      if (withinTolerance(own.gap - Math.max(...[...byPolicy.values()].map((g) => g.gap).filter(Number.isFinite)), 0))
        row.nearest += 1;
      if (own.gap < row.worst.gap) row.worst = { gap: own.gap, scenario: r.name, horizonS: own.horizonS };
    });
    return row;
  });
}

/**
 * docs/evaluation.md's paragraph "Every policy held to the curve target": `envelopeRows` as a table, nearest first,
 * with the sentence that reads it. Every figure comes from the results passed in.
 *
 * @example
 * ```ts
 * envelopeSection(results, "booked_capacity", json.sweeps); // "**Every policy held to the curve target.** ...\n\n| policy | ... |"
 * ```
 */
export function envelopeSection(
  results: readonly CurveRun[],
  defaultPolicy: string,
  sweep: ReadonlyArray<{ scenario: string; maxQueuedRequests: number; policies: CurveRun["policies"] }> = [],
): string {
  const rows = [...envelopeRows(results)].sort((a, b) => b.worstSum - a.worstSum);
  const amongBaselines = new Map(envelopeRows(results, defaultPolicy).map((r) => [r.policy, r]));
  const baselinesWithin = Math.max(0, ...[...amongBaselines.values()].map((r) => r.curveWithin));
  const scenarios = rows[0]?.scenarios ?? 0;
  const mostWithin = Math.max(0, ...rows.map((r) => r.curveWithin));
  const def = rows.find((r) => r.policy === defaultPolicy);
  const nextOther = rows.find((r) => r.policy !== defaultPolicy);
  const lines = [
    "| policy | curve within 2 pts of the others' best at every horizon | nearest of all policies | worst curve gaps, summed | furthest behind (scenario, horizon) | the default left out: within 2 pts / summed |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) => {
      const without = amongBaselines.get(r.policy);
      const baselineCells = without
        ? `${without.curveWithin} of ${without.scenarios} / ${pts(without.worstSum)} pts`
        : "-";
      return `| ${r.policy === defaultPolicy ? `**${r.policy}**` : r.policy} | ${r.curveWithin} of ${r.scenarios} | ${r.nearest} of ${r.scenarios} | ${pts(r.worstSum)} pts | ${pts(r.worst.gap)} (${r.worst.scenario}, ${r.worst.horizonS} s) | ${baselineCells} |`;
    }),
  ];
  const nearer = rows.filter((r) => def && r.policy !== defaultPolicy && r.worstSum > def.worstSum);
  const reading = !def
    ? ""
    : nearer.length === 0
      ? ` ${mostWithin === 0 ? `No policy meets it in any of the ${scenarios} scenarios` : `No policy meets it in more than ${mostWithin} of ${scenarios} scenarios`}. The default's worst gaps are the smallest in ${def.nearest} of ${scenarios} and sum to ${pts(def.worstSum)} points; the next nearest policy's, ${nextOther?.policy ?? "-"}'s, to ${pts(nextOther?.worstSum ?? 0)}. Held to the rest, every evaluated policy, constant or computed, misses the target by more than the default does. Nor is it the default that puts the target out of the others' reach: held to one another without it (last column), the other policies meet it ${baselinesWithin === 0 ? "in none of them" : `in at most ${baselinesWithin} of ${scenarios} scenarios`}.`
      : ` ${mostWithin === 0 ? `No policy meets it in any of the ${scenarios} scenarios` : `No policy meets it in more than ${mostWithin} of ${scenarios} scenarios`}. The default's worst gaps sum to ${pts(def.worstSum)} points; nearer than the default: ${nearer.map((r) => `${r.policy} (${pts(r.worstSum)})`).join(", ")}.`;
  const sweepRows = envelopeRows(
    sweep.map((point) => ({ name: `${point.scenario}/${point.maxQueuedRequests}`, ...point })),
  );
  const sweepDefault = sweepRows.find((r) => r.policy === defaultPolicy);
  const sweepOthersWithin = Math.max(
    0,
    ...sweepRows.filter((r) => r.policy !== defaultPolicy).map((r) => r.curveWithin),
  );
  const sweepLine = sweepDefault
    ? ` Across the queue-bound sweep's ${sweepDefault.scenarios} points (below), the other policies meet it ${sweepOthersWithin === 0 ? "at none" : `at ${sweepOthersWithin} at most`}, the default at ${sweepDefault.curveWithin}, and the default's worst gap is the smallest at ${sweepDefault.nearest} of them.`
    : "";
  return [
    `**Every policy held to the curve target.** The curve target holds the default to the best of all other policies at each horizon. Held to the same target against the rest (the default among them), each policy's worst gaps over the ${scenarios} scenarios above (tuning seeds).${reading}${sweepLine}\n`,
    lines.join("\n"),
  ].join("\n");
}
