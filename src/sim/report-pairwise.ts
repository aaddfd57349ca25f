import type { ScenarioResult } from "./evaluation";
import { COMPLETION_HORIZONS_S } from "./metrics";
import { STATIC_POLICY_IDS } from "./policies";
import { pts } from "./report-format";
import { curveOf, TARGET_TOLERANCE, withinTolerance } from "./targets";

/**
 * The default against one other policy alone, over every scenario: how many scenarios it is within the curve
 * target's 2 points of that policy at every horizon, serves at least its share less the served target's point, and
 * makes no more attempts per offered request; and where it is furthest behind that policy's curve.
 */
export interface PairwiseRow {
  policy: string;
  scenarios: number;
  curveWithin: number;
  servedWithin: number;
  attemptsAtMost: number;
  /** The default's curve minus the policy's at the worst scenario and horizon (a share; negative: behind). */
  worst: { gap: number; scenario: string; horizonS: number };
}

/**
 * One row per other policy (in the results' order): the curve target asks for the best of all other policies at
 * every horizon at once, each horizon's best possibly a different one; these rows ask the plainer question the
 * mission asks of the hint - does it beat each constant (and each other policy) taken alone?
 *
 * @example
 * ```ts
 * pairwiseRows(results, "booked_capacity").find((r) => r.policy === "static-30")?.curveWithin; // e.g. 7
 * ```
 */
export function pairwiseRows(results: readonly ScenarioResult[], defaultPolicy: string): PairwiseRow[] {
  const ids = results[0]?.policies.map((p) => p.id).filter((id) => id !== defaultPolicy) ?? [];
  return ids.map((policy) => {
    const row: PairwiseRow = {
      policy,
      scenarios: 0,
      curveWithin: 0,
      servedWithin: 0,
      attemptsAtMost: 0,
      worst: { gap: Number.POSITIVE_INFINITY, scenario: "", horizonS: COMPLETION_HORIZONS_S[0] },
    };
    for (const r of results) {
      const def = r.policies.find((p) => p.id === defaultPolicy);
      const other = r.policies.find((p) => p.id === policy);
      if (!def || !other) continue;
      row.scenarios += 1;
      let worstHere = Number.POSITIVE_INFINITY;
      for (const h of COMPLETION_HORIZONS_S) {
        const gap = curveOf(def, h) - curveOf(other, h);
        worstHere = Math.min(worstHere, gap);
        if (gap < row.worst.gap) row.worst = { gap, scenario: r.name, horizonS: h };
      }
      if (withinTolerance(worstHere, TARGET_TOLERANCE.curve)) row.curveWithin += 1;
      if (withinTolerance(def.metrics.servedFraction - other.metrics.servedFraction, TARGET_TOLERANCE.served))
        row.servedWithin += 1;
      if (withinTolerance(other.metrics.attemptsPerOffered - def.metrics.attemptsPerOffered, 0))
        row.attemptsAtMost += 1;
    }
    return row;
  });
}

/** At one horizon, in how many scenarios the default is ahead of a policy, and behind it by more than the target's 2 points. */
export interface HorizonTally {
  horizonS: number;
  ahead: number;
  behind: number;
}

/**
 * The default against `policy` horizon by horizon, over every scenario: where the curve target's one number per
 * scenario (its worst horizon) hides on which side of a constant the default is at each horizon.
 *
 * @example
 * ```ts
 * horizonTallies(results, "booked_capacity", "static-30")[3]; // e.g. { horizonS: 60, ahead: 3, behind: 5 }
 * ```
 */
export function horizonTallies(
  results: readonly ScenarioResult[],
  defaultPolicy: string,
  policy: string,
): HorizonTally[] {
  return COMPLETION_HORIZONS_S.map((horizonS) => {
    const tally = { horizonS, ahead: 0, behind: 0 };
    for (const r of results) {
      const def = r.policies.find((p) => p.id === defaultPolicy);
      const other = r.policies.find((p) => p.id === policy);
      if (!def || !other) continue;
      const gap = curveOf(def, horizonS) - curveOf(other, horizonS);
      if (gap > 0) tally.ahead += 1;
      else if (!withinTolerance(gap, TARGET_TOLERANCE.curve)) tally.behind += 1;
    }
    return tally;
  });
}

/**
 * docs/evaluation.md's paragraph "Against each policy alone": `pairwiseRows` as a table, with the sentence that reads
 * it, then the static Retry-Afters horizon by horizon (`horizonTallies`). Every figure comes from the results passed
 * in.
 *
 * @example
 * ```ts
 * pairwiseSection(results, "booked_capacity"); // "**Against each policy alone.** ...\n\n| other policy | ... |"
 * ```
 */
export function pairwiseSection(results: readonly ScenarioResult[], defaultPolicy: string): string {
  const rows = pairwiseRows(results, defaultPolicy);
  const statics = rows.filter((r) => (STATIC_POLICY_IDS as readonly string[]).includes(r.policy));
  const beaten = statics.filter((r) => r.curveWithin === r.scenarios && r.attemptsAtMost === r.scenarios);
  const lines = [
    "| other policy | curve within 2 pts at every horizon | served at least its share less 1 pt | attempts per offered at most its | furthest behind its curve (scenario, horizon) |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.policy} | ${r.curveWithin} of ${r.scenarios} | ${r.servedWithin} of ${r.scenarios} | ${r.attemptsAtMost} of ${r.scenarios} | ${r.worst.gap >= 0 ? "never behind" : `${pts(r.worst.gap)} (${r.worst.scenario}, ${r.worst.horizonS} s)`} |`,
    ),
  ];
  const staticLine =
    beaten.length === statics.length
      ? "it stays within 2 points of every static Retry-After at every horizon, with no more attempts per offered request, in every scenario"
      : `of the static Retry-Afters (${statics.map((r) => r.policy).join(", ")}), it stays within 2 points ${beaten.length === 0 ? "of none" : `of ${beaten.map((r) => r.policy).join(", ")} only`} at every horizon, with no more attempts per offered request, in every scenario${furthestBehind(statics)}`;
  const n = rows[0]?.scenarios ?? 0;
  const byHorizon = [
    `| static Retry-After | ${COMPLETION_HORIZONS_S.map((h) => `${h} s`).join(" | ")} |`,
    `| --- | ${COMPLETION_HORIZONS_S.map(() => "---").join(" | ")} |`,
    ...statics.map(
      (r) =>
        `| ${r.policy} | ${horizonTallies(results, defaultPolicy, r.policy)
          .map((t) => `${t.ahead} / ${t.behind}`)
          .join(" | ")} |`,
    ),
  ];
  return [
    `**Against each policy alone.** The curve target holds the default to the best other policy at each horizon, a different one at each if need be. The mission asks a plainer question of the computed hint: does it beat each constant? Here the default (\`${defaultPolicy}\`) is held to each other policy alone, over the ${rows[0]?.scenarios ?? 0} scenarios above (tuning seeds): ${staticLine}.\n`,
    lines.join("\n"),
    `\nThe same constants horizon by horizon: in how many of the ${n} scenarios the default serves more requests within each horizon than the constant / fewer by more than 2 points.${horizonLine(results, defaultPolicy, "static-30")}\n`,
    byHorizon.join("\n"),
  ].join("\n");
}

/** What the horizon tallies against `policy` say, in words: " Against static-30 it is ahead at ...". */
function horizonLine(results: readonly ScenarioResult[], defaultPolicy: string, policy: string): string {
  const tallies = horizonTallies(results, defaultPolicy, policy);
  const n = results.length;
  const aheadEverywhere = tallies.filter((t) => t.ahead === n).map((t) => `${t.horizonS} s`);
  const behind = tallies.filter((t) => t.behind > 0).map((t) => `in ${t.behind} at ${t.horizonS} s`);
  if (aheadEverywhere.length === 0 && behind.length === 0) return "";
  const ahead = aheadEverywhere.length > 0 ? ` ahead in every scenario at ${inWords(aheadEverywhere)}` : "";
  const lost = behind.length > 0 ? `${ahead ? ", and" : ""} more than 2 points behind ${inWords(behind)}` : "";
  return ` Against ${policy} it is${ahead}${lost}.`;
}

/** "a", "a and b", "a, b and c". */
function inWords(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** Where the default falls furthest behind any of `rows`' policies: "; furthest behind static-5, -3.0 points (a, 30 s)". */
function furthestBehind(rows: readonly PairwiseRow[]): string {
  const behind = rows.filter((r) => r.worst.gap < 0);
  if (behind.length === 0) return "";
  const worst = behind.reduce((a, b) => (b.worst.gap < a.worst.gap ? b : a));
  return `; furthest behind ${worst.policy}, ${pts(worst.worst.gap)} points (${worst.worst.scenario}, ${worst.worst.horizonS} s)`;
}
