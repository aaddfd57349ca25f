import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import { pts } from "./report-format";
import { TARGET_TOLERANCE, withinTolerance } from "./targets";

/** One policy's completion curve on one set of seeds. */
export interface PolicyCurve {
  id: string;
  curve: CompletionCurve;
}

/** One scenario's policies on two disjoint sets of seeds: the tuning seeds and the held-out ones. */
export interface SeedSetCurves {
  scenario: string;
  defaultPolicy: string;
  tuningSeeds: number[];
  heldOutSeeds: number[];
  tuning: PolicyCurve[];
  heldOut: PolicyCurve[];
}

/** The default's worst curve gap on one set of seeds, to the envelope chosen on those seeds and on the other set. */
export interface CrossGap {
  /**
   * To the best other policy at each horizon on the same seeds: the curve target's check. The best of several
   * policies on a few seeds is partly the luckiest of them on those seeds.
   */
  sameSeeds: { horizonS: number; gap: number; policy: string };
  /**
   * To the other policy that was best at each horizon on the other set of seeds, scored on these: which policy
   * the default is held to at each horizon is chosen on seeds other than those it is scored on.
   */
  otherSeeds: { horizonS: number; gap: number; policy: string };
}

/** One scenario: its cross gaps scored on each set. */
export interface EnvelopeNoiseRow {
  scenario: string;
  heldOut: CrossGap;
  tuning: CrossGap;
}

/** What `npm run eval:envelope-noise` writes (docs/envelope-noise.json). */
export interface EnvelopeNoiseReport {
  generatedBy: string;
  scenarios: SeedSetCurves[];
}

const shareAt = (p: PolicyCurve, h: number): number => p.curve[String(h)] ?? 0;

/** The policy other than the default that serves the most within `h` (the first listed of a tie), on one set. */
function bestOtherAt(set: readonly PolicyCurve[], defaultPolicy: string, h: number): PolicyCurve {
  const others = set.filter((p) => p.id !== defaultPolicy);
  if (others.length === 0) throw new Error("no other policy to hold the default to");
  return others.reduce((a, b) => (shareAt(b, h) > shareAt(a, h) ? b : a));
}

/** The default's worst gap on `scored`, each horizon's opponent picked (as the best other policy) on `picked`. */
function worstGap(
  defaultPolicy: string,
  picked: readonly PolicyCurve[],
  scored: readonly PolicyCurve[],
): CrossGap["sameSeeds"] {
  const own = scored.find((p) => p.id === defaultPolicy);
  if (!own) throw new Error(`no curve for the default policy ${defaultPolicy}`);
  let worst = { horizonS: COMPLETION_HORIZONS_S[0] as number, gap: Number.POSITIVE_INFINITY, policy: "" };
  for (const h of COMPLETION_HORIZONS_S) {
    const best = bestOtherAt(picked, defaultPolicy, h);
    const opponent = scored.find((p) => p.id === best.id);
    if (!opponent) throw new Error(`${best.id} has no curve on the seeds it is scored on`);
    const gap = shareAt(own, h) - shareAt(opponent, h);
    if (gap < worst.gap) worst = { horizonS: h, gap, policy: best.id };
  }
  return worst;
}

/**
 * Issue 15's curve target holds the default, at each horizon, to the best other policy *on the same seeds*: the
 * maximum of several policies' noisy shares, which picks up whichever was luckiest there. Scoring each side on
 * seeds the choice did not see separates the two: per set of seeds, the default's worst gap to that set's own
 * best (the target's check) and to the policies that were best on the other set, scored on this one.
 *
 * @example
 * ```ts
 * const row = envelopeNoise(curves); // curves: one scenario's policies on the tuning and held-out seeds
 * row.heldOut.sameSeeds.gap;  // e.g. -0.049: the target's check on the held-out seeds
 * row.heldOut.otherSeeds.gap; // e.g. -0.041: held to the tuning seeds' best at each horizon instead
 * ```
 */
export function envelopeNoise(curves: SeedSetCurves): EnvelopeNoiseRow {
  const { defaultPolicy, tuning, heldOut } = curves;
  return {
    scenario: curves.scenario,
    heldOut: {
      sameSeeds: worstGap(defaultPolicy, heldOut, heldOut),
      otherSeeds: worstGap(defaultPolicy, tuning, heldOut),
    },
    tuning: {
      sameSeeds: worstGap(defaultPolicy, tuning, tuning),
      otherSeeds: worstGap(defaultPolicy, heldOut, tuning),
    },
  };
}

/**
 * Over every scenario and horizon: in how many the best other policy is the same on both sets of seeds, of how many,
 * and, where it differs, the most that picking it on the seeds scored gains over picking it on the other set
 * (a share; 0 when it never differs).
 *
 * @example
 * ```ts
 * envelopeAgreement(report.scenarios); // e.g. { same: 58, of: 60, largestPick: 0.0069 }
 * ```
 */
export function envelopeAgreement(curves: readonly SeedSetCurves[]): { same: number; of: number; largestPick: number } {
  let same = 0;
  let of = 0;
  let largestPick = 0;
  for (const c of curves) {
    for (const h of COMPLETION_HORIZONS_S) {
      const [onTuning, onHeld] = [
        bestOtherAt(c.tuning, c.defaultPolicy, h),
        bestOtherAt(c.heldOut, c.defaultPolicy, h),
      ];
      of += 1;
      if (onTuning.id === onHeld.id) {
        same += 1;
        continue;
      }
      const scoredOn = (set: readonly PolicyCurve[], id: string) =>
        shareAt(set.find((p) => p.id === id) as PolicyCurve, h);
      largestPick = Math.max(
        largestPick,
        shareAt(onHeld, h) - scoredOn(c.heldOut, onTuning.id),
        shareAt(onTuning, h) - scoredOn(c.tuning, onHeld.id),
      );
    }
  }
  return { same, of, largestPick };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const within = (gap: number) => withinTolerance(gap, TARGET_TOLERANCE.curve);
const cell = (g: CrossGap["sameSeeds"]) => `${pts(g.gap)} (${g.horizonS} s, ${g.policy})`;

/**
 * docs/envelope-noise.md from the report: per scenario and set of seeds, the default's worst curve gap to the best
 * other policy picked on the same seeds and on the other set, and what the difference says.
 *
 * @example
 * ```ts
 * writeFileSync("docs/envelope-noise.md", renderEnvelopeNoise(report));
 * ```
 */
export function renderEnvelopeNoise(report: EnvelopeNoiseReport): string {
  const rows = report.scenarios.map(envelopeNoise);
  const n = rows.length;
  const totals = {
    heldSame: sum(rows.map((r) => r.heldOut.sameSeeds.gap)),
    heldOther: sum(rows.map((r) => r.heldOut.otherSeeds.gap)),
    tuningSame: sum(rows.map((r) => r.tuning.sameSeeds.gap)),
    tuningOther: sum(rows.map((r) => r.tuning.otherSeeds.gap)),
  };
  const met = {
    heldSame: rows.filter((r) => within(r.heldOut.sameSeeds.gap)).length,
    heldOther: rows.filter((r) => within(r.heldOut.otherSeeds.gap)).length,
    tuningSame: rows.filter((r) => within(r.tuning.sameSeeds.gap)).length,
    tuningOther: rows.filter((r) => within(r.tuning.otherSeeds.gap)).length,
  };
  const lines = [
    "# How much of the curve target's gap is the envelope's pick of its seeds' noise?",
    "",
    `Generated by \`${report.generatedBy}\`; the data is \`docs/envelope-noise.json\`.`,
    "",
    "Issue 15's curve target holds the default, at each horizon, to the best of the other policies on the same seeds. With three seeds per scenario each policy's share carries its seeds' noise, and the best of seven noisy shares is partly the luckiest of them: a policy a little worse than another can be best at a horizon because these seeds happened to suit it. The default is one policy and gets no such pick. Here every policy runs on the scenario's held-out seeds (those of `docs/evaluation.md`'s held-out run, which no tuning looked at) beside its tuning-seed figures of `docs/evaluation.json`, and the default's worst gap on each set is measured twice: to that set's own best at each horizon (the target's check), and to the policy that was best at that horizon on the other set, scored on this one. The second is chosen without seeing the seeds it is scored on, so the seeds' luck no longer favours it. The default's own tunables were chosen on the tuning seeds, so on them the default has a pick of its own; the held-out columns are the fair ones.",
    "",
    "The default's worst curve gap, in points (horizon, the policy it is held to there); the target asks for at least -2.0:",
    "",
    "| scenario | held-out seeds: to their own best | to the tuning seeds' best | tuning seeds: to their own best | to the held-out seeds' best |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const r of rows)
    lines.push(
      `| ${r.scenario} | ${cell(r.heldOut.sameSeeds)} | ${cell(r.heldOut.otherSeeds)} | ${cell(r.tuning.sameSeeds)} | ${cell(r.tuning.otherSeeds)} |`,
    );
  lines.push(
    `| summed | ${pts(totals.heldSame)} | ${pts(totals.heldOther)} | ${pts(totals.tuningSame)} | ${pts(totals.tuningOther)} |`,
    `| within 2 points | ${met.heldSame} of ${n} | ${met.heldOther} of ${n} | ${met.tuningSame} of ${n} | ${met.tuningOther} of ${n} |`,
  );
  const stillMissed = n - met.heldOther;
  const agreement = envelopeAgreement(report.scenarios);
  const differs = agreement.of - agreement.same;
  // A pick worth under a point at every horizon cannot carry a gap the target allows 2 points for.
  const smallPick = agreement.largestPick < TARGET_TOLERANCE.curve / 2;
  const reading =
    stillMissed === 0
      ? "Held to policies chosen on other seeds, the default meets the curve target in every scenario on the held-out seeds: its misses are the envelope's pick of its seeds' noise."
      : smallPick
        ? `So the curve target's gap is not the envelope's pick of its seeds' noise: the same policies lead at the same horizons on seeds the pick did not see, and held to them the default still misses the target in ${stillMissed} of ${n} scenarios on the held-out seeds (${met.heldOther} met; ${met.heldSame} held to their own best).`
        : `Part of the gap is the envelope's pick of its seeds' noise, but held to policies chosen on other seeds the default still misses the target in ${stillMissed} of ${n} scenarios on the held-out seeds (${met.heldOther} met; ${met.heldSame} held to their own best).`;
  lines.push(
    "",
    `What it says: the best other policy at a horizon is the same policy on both sets of seeds in ${agreement.same} of ${agreement.of} scenarios and horizons${
      differs > 0
        ? `; where it differs, picking it on the seeds scored gains at most ${pts(agreement.largestPick)} points over picking it on the other set`
        : ""
    }. Picked on the other set, the envelope leaves the summed worst gaps at ${pts(totals.heldOther)} points on the held-out seeds (held to their own best: ${pts(totals.heldSame)}) and at ${pts(totals.tuningOther)} on the tuning seeds (${pts(totals.tuningSame)}). ${reading} Three seeds a scenario are few; this tests the pick, not each share's exact value.`,
    "",
  );
  return lines.join("\n");
}
