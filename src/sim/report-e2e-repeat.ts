import {
  checkE2eTargets,
  E2E_REFERENCE_POLICIES,
  type E2eFigures,
  type E2eTargetCheck,
  E2E_TARGET_HORIZONS_S as horizons,
  poolE2eFigures,
} from "./e2e-targets";
import { num, pct, pts, yes } from "./report-format";
import type { E2eOpenAiRun } from "./report-markdown";

/**
 * One line of issue 15's end-to-end targets, as the evaluation report prints it.
 *
 * @example
 * ```ts
 * e2eTargetsLine(check, run.policies);
 * // "served >= 99%: met (99.6%); at 5, 15, 30 and 60 s at least the best of ... minus 2 points: met (worst -1.1 at
 * // 15 s); attempts per offered <= 1.5: **missed** (1.512)"
 * ```
 */
export function e2eTargetsLine(check: E2eTargetCheck, policies: readonly { id: string }[]): string {
  const refs = policies.filter((p) => E2E_REFERENCE_POLICIES.includes(p.id)).map((p) => p.id);
  return `served >= 99%: ${yes(check.met.served)} (${pct(check.servedFraction)}); at 5, 15, 30 and 60 s at least the best of ${refs.join(", ")} minus 2 points: ${yes(check.met.curve)} (worst ${pts(check.worst.gap)} at ${check.worst.horizonS} s); attempts per offered <= 1.5: ${yes(check.met.attempts)} (${num(check.attemptsPerOffered, 3)})`;
}

/** Each seed's figures of every policy in a run that recorded them (`perSeed`), seed by seed. */
export function seedsOf(run: E2eOpenAiRun): { seed: number; policies: E2eFigures[] }[] {
  const seeds = run.seeds ?? [];
  return seeds.map((seed) => ({
    seed,
    policies: run.policies.flatMap((p) => {
      const own = p.perSeed?.find((s) => s.seed === seed);
      return own ? [{ id: p.id, ...own }] : [];
    }),
  }));
}

/** The commits the two runs ran, where they recorded them: ", with the code of commit `x`" (and the first run's, if another). */
function codeOf(first: E2eOpenAiRun, again: E2eOpenAiRun): string {
  if (!again.commit) return "";
  const firstOwn = first.commit && first.commit !== again.commit ? ` (the run above: \`${first.commit}\`)` : "";
  return `, with the code of commit \`${again.commit}\`${firstOwn}`;
}

/**
 * The end-to-end run made again (`again`, on the same seeds as `first`): both runs' figures side by side, the
 * targets on each and on both pooled, and - where `again` recorded them - each seed's own figures and targets.
 *
 * @example
 * ```ts
 * e2eRepeatSection(run9, run10, "booked_capacity", "docs/evaluation-e2e-openai-run10.json");
 * ```
 */
export function e2eRepeatSection(
  first: E2eOpenAiRun,
  again: E2eOpenAiRun,
  defaultPolicy: string,
  againFile: string,
): string {
  const out: string[] = [];
  out.push(
    `\`${again.generatedBy}\` (\`${againFile}\`) made the run above again${codeOf(first, again)}: the same ${again.seeds?.length ?? 1} seeds, so the same arrivals, and each seed's figures recorded. Figures move from run to run with the timing of a shared machine, and from seed to seed with each seed's arrivals.\n`,
  );
  out.push(...sideBySide(first, again), "");
  out.push(...targetsAloneAndPooled(first, again, defaultPolicy, ["on this run alone", "Pooled over both runs"]));
  out.push(...seedBySeed(again, defaultPolicy));
  return out.join("\n");
}

/**
 * The default alone run again on the same seeds as `reference` (`eval/e2e-openai.ts --policies <default>`), typically
 * with later code: its figures beside the reference run's default, and its targets against the reference run's other
 * policies, which were not run again - pooled and seed by seed. A run on other seeds, or without the default, says so.
 *
 * @example
 * ```ts
 * e2eDefaultLaterSection(run17, run19, "booked_capacity", "docs/evaluation-e2e-openai-run19.json");
 * ```
 */
export function e2eDefaultLaterSection(
  reference: E2eOpenAiRun,
  later: E2eOpenAiRun,
  defaultPolicy: string,
  laterFile: string,
): string {
  const own = later.policies.find((p) => p.id === defaultPolicy);
  const sameSeeds = JSON.stringify(later.seeds ?? []) === JSON.stringify(reference.seeds ?? []);
  if (!own || !sameSeeds)
    return `\`${laterFile}\` is not quoted: it is not a run of the default on the headline run's seeds.\n`;
  // The reference run's other policies stand beside the later default: they were not run again.
  const merged = { ...later, policies: [...reference.policies.filter((p) => p.id !== defaultPolicy), own] };
  const check = checkE2eTargets(merged.policies, defaultPolicy);
  const out = [
    `\`${later.generatedBy}\` (\`${laterFile}\`) ran the default alone again${later.commit ? `, with the code of commit \`${later.commit}\`` : ""}${reference.commit ? ` (the headline run: \`${reference.commit}\`)` : ""}, on the headline run's ${later.seeds?.length ?? 1} seeds. The other policies were not run again: the targets below hold the default to their figures in the headline run ("above" in the table).\n`,
    ...sideBySide(reference, { ...later, policies: [own] }),
    "",
  ];
  if (check)
    out.push(`Issue 15's end-to-end targets for the default on this run: ${e2eTargetsLine(check, merged.policies)}.\n`);
  out.push(...seedBySeed(merged, defaultPolicy));
  return out.join("\n");
}

/** `again`'s policies beside the same policies in `first`: served share, completion curve and attempts. */
function sideBySide(first: E2eOpenAiRun, again: E2eOpenAiRun): string[] {
  const pair = (a: number | undefined, b: number | undefined, f: (v: number) => string) =>
    `${a === undefined ? "n/a" : f(a)} / ${b === undefined ? "n/a" : f(b)}`;
  return [
    `| policy | served: above / again | ${horizons.map((h) => `<= ${h} s`).join(" | ")} | attempts per offered |`,
    `| --- | --- | ${horizons.map(() => "---").join(" | ")} | --- |`,
    ...again.policies.map((p) => {
      const q = first.policies.find((x) => x.id === p.id);
      return `| ${p.id} | ${pair(q?.servedFraction, p.servedFraction, pct)} | ${horizons.map((h) => pair(q?.servedWithinS[String(h)], p.servedWithinS[String(h)], pct)).join(" | ")} | ${pair(q?.attemptsPerOffered, p.attemptsPerOffered, (v) => num(v, 3))} |`;
    }),
  ];
}

/**
 * An end-to-end run on arrival seeds other than the headline run's (`--first-seed`), beside it: its figures, the
 * targets on it alone and pooled with the headline run (twice the seeds), and each seed's own.
 *
 * @example
 * ```ts
 * e2eHeldSection(run17, held2, "booked_capacity", "docs/evaluation-e2e-openai-held2.json");
 * ```
 */
export function e2eHeldSection(
  headline: E2eOpenAiRun,
  held: E2eOpenAiRun,
  defaultPolicy: string,
  heldFile: string,
): string {
  const out: string[] = [];
  const seeds = held.seeds ?? [];
  out.push(
    `\`${held.generatedBy}\` (\`${heldFile}\`${held.commit ? `, commit \`${held.commit}\`` : ""}) ran every policy on ${seeds.length} other seeds (${seeds.join(", ")}), other than the run above's: arrivals that neither the tuning of the default nor the simulator's twin that guards its variants uses.\n`,
    `| policy | served | ${horizons.map((h) => `<= ${h} s`).join(" | ")} | attempts per offered |`,
    `| --- | --- | ${horizons.map(() => "---").join(" | ")} | --- |`,
    ...held.policies.map(
      (p) =>
        `| ${p.id} | ${pct(p.servedFraction)} | ${horizons.map((h) => pct(p.servedWithinS[String(h)])).join(" | ")} | ${num(p.attemptsPerOffered, 3)} |`,
    ),
    "",
  );
  out.push(...targetsAloneAndPooled(headline, held, defaultPolicy, ["on these seeds", "Pooled with the headline run"]));
  out.push(...seedBySeed(held, defaultPolicy));
  return out.join("\n");
}

/** Issue 15's end-to-end targets on `run` alone and pooled with `other`, one line; none without the default or a reference. */
function targetsAloneAndPooled(
  other: E2eOpenAiRun,
  run: E2eOpenAiRun,
  defaultPolicy: string,
  [aloneLabel, pooledLabel]: [string, string],
): string[] {
  const alone = checkE2eTargets(run.policies, defaultPolicy);
  const pooled = poolE2eFigures([other.policies, run.policies]);
  const both = checkE2eTargets(pooled, defaultPolicy);
  if (!alone || !both) return [];
  const requests = pooled.find((p) => p.id === defaultPolicy)?.requests ?? 0;
  return [
    `Issue 15's end-to-end targets for the default ${aloneLabel}: ${e2eTargetsLine(alone, run.policies)}. ${pooledLabel} (${requests} requests per policy): ${e2eTargetsLine(both, run.policies)}.\n`,
  ];
}

/** The default seed by seed in `run`, with its targets against the other policies on the same seed; none without `perSeed`. */
function seedBySeed(run: E2eOpenAiRun, defaultPolicy: string): string[] {
  const out: string[] = [];
  const seeds = seedsOf(run).filter((s) => s.policies.some((p) => p.id === defaultPolicy));
  const checks = seeds.flatMap((s) => {
    const check = checkE2eTargets(s.policies, defaultPolicy);
    const def = s.policies.find((p) => p.id === defaultPolicy);
    return check && def ? [{ seed: s.seed, check, def }] : [];
  });
  if (checks.length > 0) {
    out.push(
      "The default seed by seed in this run (its own figures, and its targets against the other policies' figures on the same seed):\n",
      `| seed | requests | served | ${horizons.map((h) => `<= ${h} s`).join(" | ")} | attempts per offered | worst curve gap | served / curve / attempts targets |`,
      `| --- | --- | --- | ${horizons.map(() => "---").join(" | ")} | --- | --- | --- |`,
    );
    for (const { seed, check, def } of checks)
      out.push(
        `| ${seed} | ${def.requests} | ${pct(def.servedFraction)} | ${horizons.map((h) => pct(def.servedWithinS[String(h)])).join(" | ")} | ${num(def.attemptsPerOffered, 3)} | ${pts(check.worst.gap)} (${check.worst.horizonS} s) | ${[check.met.served, check.met.curve, check.met.attempts].map(yes).join(" / ")} |`,
      );
    const attempts = checks.map((c) => c.check.attemptsPerOffered);
    const gaps = checks.map((c) => c.check.worst.gap);
    const count = (k: keyof E2eTargetCheck["met"]) => checks.filter((c) => c.check.met[k]).length;
    out.push(
      "",
      `Seed by seed the default's attempts per offered request run from ${num(Math.min(...attempts), 3)} to ${num(Math.max(...attempts), 3)} (at most 1.5 in ${count("attempts")} of ${checks.length} seeds) and its worst curve gap from ${pts(Math.min(...gaps))} to ${pts(Math.max(...gaps))} points (within 2 points in ${count("curve")} of ${checks.length}); it serves at least 99% in ${count("served")} of ${checks.length}.\n`,
    );
  }
  return out;
}
