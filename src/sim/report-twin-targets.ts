import { checkE2eTargets, type E2eTargetCheck } from "./e2e-targets";
import { num, pct, pts, yes } from "./report-format";
import type { E2eTwinRun } from "./report-policy";

/** The simulator's twins of the end-to-end run (`npm run eval:e2e-twin`), in the order the docs print them. */
export const E2E_TWINS = [
  { id: "cold", label: "from a cold router" },
  { id: "after-quiet", label: "after a quiet spell" },
] as const;

/** A twin's id (`docs/e2e-twin.json`). */
export type E2eTwinId = (typeof E2E_TWINS)[number]["id"];

/**
 * The twins the end-to-end targets are checked on: those replaying the end-to-end runs' own arrivals (`replay`), which
 * are nearest the real runs (docs/benchmarks.md, "The twin replays the run's arrivals"); a file written before them
 * has only the twins that draw their own.
 *
 * @example
 * ```ts
 * targetTwins(JSON.parse(readFileSync("docs/e2e-twin.json", "utf8"))).map((t) => t.id); // ["cold", "after-quiet"]
 * ```
 */
export function targetTwins(twin: E2eTwinRun): E2eTwinRun["twins"] {
  return twin.replay?.twins ?? twin.twins;
}

/**
 * Issue 15's end-to-end targets checked on one twin for `policyId` in the default's place (the twin's reference
 * policies unchanged); `undefined` when the twin lacks the policy.
 *
 * @example
 * ```ts
 * twinTargets(twin, "after-quiet", "booked_capacity:two-step", "booked_capacity")?.met; // { served, curve, attempts }
 * ```
 */
export function twinTargets(
  twin: E2eTwinRun,
  twinId: string,
  policyId: string,
  defaultPolicy: string,
): E2eTargetCheck | undefined {
  const run = targetTwins(twin).find((t) => t.id === twinId);
  const own = run?.policies.find((p) => p.id === policyId);
  if (!run || !own) return undefined;
  const others = run.policies.filter((p) => p.id !== defaultPolicy && p.id !== policyId);
  const figures = [...others, { ...own, id: defaultPolicy }].map((p) => ({ ...p, requests: 0 }));
  return checkE2eTargets(figures, defaultPolicy);
}

/** Whether `policyId` in the default's place meets every end-to-end target in every twin. */
export function meetsTwinTargets(twin: E2eTwinRun, policyId: string, defaultPolicy: string): boolean {
  return E2E_TWINS.every(({ id }) => {
    const met = twinTargets(twin, id, policyId, defaultPolicy)?.met;
    return met?.served === true && met.curve && met.attempts;
  });
}

/**
 * The default and the named variants of it (`booked_capacity:<id>` rows of the twin) against issue 15's end-to-end
 * targets in each twin: served share, worst curve gap against the reference policies (horizon), attempts per
 * offered request, and which targets are met.
 *
 * @example
 * ```ts
 * twinTargetsTable(twin, ["two-step"], "booked_capacity");
 * // "| policy | from a cold router: served / worst gap / attempts | targets ... |"
 * ```
 */
export function twinTargetsTable(twin: E2eTwinRun, variantIds: readonly string[], defaultPolicy: string): string {
  const lines = [
    `| policy | ${E2E_TWINS.map((t) => `${t.label}: served / worst curve gap / attempts | served / curve / attempts targets`).join(" | ")} |`,
    `| --- | ${E2E_TWINS.map(() => "--- | ---").join(" | ")} |`,
  ];
  for (const id of [defaultPolicy, ...variantIds.map((v) => `${defaultPolicy}:${v}`)]) {
    const cells = E2E_TWINS.map((t) => {
      const check = twinTargets(twin, t.id, id, defaultPolicy);
      if (!check) return "n/a | n/a";
      const figures = `${pct(check.servedFraction)} / ${pts(check.worst.gap)} (${check.worst.horizonS} s) / ${num(check.attemptsPerOffered, 3)}`;
      return `${figures} | ${[check.met.served, check.met.curve, check.met.attempts].map(yes).join(" / ")}`;
    });
    lines.push(`| ${id} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}
