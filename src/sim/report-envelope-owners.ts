import type { PolicyResult } from "./evaluation";
import { COMPLETION_HORIZONS_S } from "./metrics";
import { pct } from "./report-format";
import { withinTolerance } from "./targets";

/** What the owners read of a scenario's results: each policy's completion curve and final served share. */
export interface OwnersRun {
  name: string;
  policies: ReadonlyArray<Pick<PolicyResult, "id" | "servedWithinS" | "servedFraction">>;
}

/**
 * Within this share of its final served share, a policy's curve at a horizon counts as final: it serves (almost)
 * nobody later. Half a point: the curve's own rounding in the tables.
 */
export const FINAL_WITHIN = 0.005;

/** Who sets the curve target at one horizon: the best other policy of each scenario there. */
export interface HorizonOwners {
  horizonS: number;
  /** Each policy that is the best other at this horizon somewhere, with the scenarios where it is. */
  owners: { policy: string; scenarios: string[] }[];
  /** Scenarios where the best other policy's share at this horizon is its final served share: it serves nobody later. */
  finalThere: string[];
  /** The best other policies' final served shares over the scenarios of `finalThere` (undefined when none). */
  finalServed?: { min: number; max: number };
  /** The best other policies' final served shares over every scenario. */
  bestServed: { min: number; max: number };
}

/**
 * For each completion horizon, which policy is the best of those other than the default in each scenario (the
 * envelope the curve target holds the default to), and in how many of them that policy's curve has already reached
 * its final served share there: a policy that gives up on the rest. The curve target asks the default to be
 * within 2 points of that share at that horizon while also serving, by 120 s, about what the policy best there
 * serves.
 *
 * @example
 * ```ts
 * const at30 = envelopeOwners(results, "booked_capacity").find((o) => o.horizonS === 30);
 * at30?.finalThere.length; // scenarios where the best other policy at 30 s serves nobody after 30 s
 * ```
 */
export function envelopeOwners(results: readonly OwnersRun[], defaultPolicy: string): HorizonOwners[] {
  return COMPLETION_HORIZONS_S.map((horizonS) => {
    const byPolicy = new Map<string, string[]>();
    const finalThere: string[] = [];
    const finals: number[] = [];
    const served: number[] = [];
    for (const result of results) {
      const others = result.policies.filter((p) => p.id !== defaultPolicy);
      const at = (p: (typeof others)[number]) => p.servedWithinS[String(horizonS)] ?? 0;
      const best = others.reduce<(typeof others)[number] | undefined>(
        (a, p) => (!a || at(p) > at(a) ? p : a),
        undefined,
      );
      if (!best) continue;
      byPolicy.set(best.id, [...(byPolicy.get(best.id) ?? []), result.name]);
      served.push(best.servedFraction);
      if (withinTolerance(at(best) - best.servedFraction, FINAL_WITHIN)) {
        finalThere.push(result.name);
        finals.push(best.servedFraction);
      }
    }
    const owners = [...byPolicy]
      .map(([policy, scenarios]) => ({ policy, scenarios }))
      .sort((a, b) => b.scenarios.length - a.scenarios.length || a.policy.localeCompare(b.policy));
    return {
      horizonS,
      owners,
      finalThere,
      bestServed: { min: Math.min(...served), max: Math.max(...served) },
      ...(finals.length > 0 ? { finalServed: { min: Math.min(...finals), max: Math.max(...finals) } } : {}),
    };
  });
}

/**
 * docs/evaluation.md's account of who sets the curve target: a table of `envelopeOwners` and what it means.
 *
 * @example
 * ```ts
 * out.push(envelopeOwnersSection(results, "booked_capacity"));
 * ```
 */
export function envelopeOwnersSection(results: readonly OwnersRun[], defaultPolicy: string): string {
  const rows = envelopeOwners(results, defaultPolicy);
  const n = results.length;
  const out = [
    `**Who sets the curve target.** At each horizon, the best of the policies other than the default in each of the ${n} scenarios (tuning seeds), and in how many of them that policy's share at the horizon is already its final served share (within ${100 * FINAL_WITHIN} point): it serves nobody later, because the requests it has not served by then are lost.\n`,
    "| horizon | best other policy (scenarios) | its share there is its final share | their final served shares |",
    "| --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    const owners = r.owners.map((o) => `${o.policy} (${o.scenarios.length})`).join(", ");
    const finals = r.finalServed ? `${pct(r.finalServed.min)} to ${pct(r.finalServed.max)}` : "-";
    out.push(`| ${r.horizonS} s | ${owners} | ${r.finalThere.length} of ${n} | ${finals} |`);
  }
  const last = rows.at(-1);
  const mostFinal = rows
    .slice(0, -1)
    .reduce<HorizonOwners | undefined>((a, r) => (!a || r.finalThere.length > a.finalThere.length ? r : a), undefined);
  if (mostFinal && last && mostFinal.finalServed) {
    const lead = mostFinal.owners[0];
    out.push(
      "",
      `So the target holds the default, at ${mostFinal.horizonS} s, to policies that give up: in ${mostFinal.finalThere.length} of ${n} scenarios the best other policy there (most often ${lead?.policy}, in ${lead?.scenarios.length}) has served by ${mostFinal.horizonS} s every request it will ever serve, ${pct(mostFinal.finalServed.min)} to ${pct(mostFinal.finalServed.max)} of them; and at ${last.horizonS} s to ${last.owners.map((o) => o.policy).join(", ")}, ${last.owners.length === 1 ? "which serves" : "which serve"} ${pct(last.bestServed.min)} to ${pct(last.bestServed.max)} in the end. To meet both, the default must serve within ${mostFinal.horizonS} s about as many requests as a policy that drops the rest, and still serve the rest by ${last.horizonS} s.`,
    );
  }
  return out.join("\n");
}
