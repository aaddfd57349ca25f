import type { PolicyResult, ScenarioResult } from "./evaluation";
import { STATIC_POLICY_IDS } from "./policies";

/** Figures of the end-to-end confirmation (wrangler dev + engine servers + bench client), per scenario and policy. */
export interface E2eResult {
  scenario: string;
  description: string;
  policies: {
    id: string;
    requests: number;
    served: number;
    retries: number;
    admittedRetries: number;
    admittedRetryRate: number | null;
    attemptsPerSuccess: number | null;
    timeToSuccessP50S: number | null;
    timeToSuccessP99S: number | null;
    gaveUp: number;
  }[];
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? "n/a" : `${(v * 100).toFixed(1)}%`);
const num = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? "n/a" : v.toFixed(d));

/** The best static policy of a scenario by X (admitted-retry rate). */
export function bestStatic(result: ScenarioResult): PolicyResult | undefined {
  const statics = result.policies.filter((p) => (STATIC_POLICY_IDS as readonly string[]).includes(p.id));
  return statics.reduce<PolicyResult | undefined>(
    (best, p) => ((p.metrics.admittedRetryRate ?? -1) > (best?.metrics.admittedRetryRate ?? -1) ? p : best),
    undefined,
  );
}

function xCell(p: PolicyResult): string {
  if (p.metrics.admittedRetryRate === null) return `(${pct(p.metrics.anyRetryAdmittedRate)})`;
  const seeds = p.admittedRetryRateBySeed.filter((v): v is number => v !== null);
  const range = seeds.length > 1 ? ` [${pct(Math.min(...seeds))}-${pct(Math.max(...seeds))}]` : "";
  return `${pct(p.metrics.admittedRetryRate)}${range}`;
}

/** The summary table: X per scenario (rows) and policy (columns). */
export function summaryTable(results: readonly ScenarioResult[]): string {
  const ids = results[0]?.policies.map((p) => p.id) ?? [];
  const lines = [`| scenario | ${ids.join(" | ")} |`, `| --- | ${ids.map(() => "---").join(" | ")} |`];
  for (const r of results) lines.push(`| ${r.name} | ${r.policies.map(xCell).join(" | ")} |`);
  return lines.join("\n");
}

/** The full metrics table of one scenario. */
export function scenarioTable(result: ScenarioResult): string {
  const lines = [
    "| policy | X (admitted-retry rate) | any retry admitted | retries | attempts / success | time to success p50 / p99 (s) | served | goodput (req/s) | give-ups | idle while waiting | drain err median (signed) | abs err median / p90 | samples |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const p of result.policies) {
    const m = p.metrics;
    lines.push(
      `| ${p.id} | ${xCell(p)} | ${pct(m.anyRetryAdmittedRate)} | ${m.retries} | ${num(m.attemptsPerSuccess)} | ${num(m.timeToSuccessP50S, 1)} / ${num(m.timeToSuccessP99S, 1)} | ${pct(m.servedFraction)} | ${num(m.goodputRps)} | ${m.gaveUp} | ${pct(m.idleWhileWaitingFraction)} | ${num(m.drainRelErrorMedian)} | ${num(m.drainAbsRelErrorMedian)} / ${num(m.drainAbsRelErrorP90)} | ${m.drainSamples} |`,
    );
  }
  return lines.join("\n");
}

/** One line per computed policy: its X against the best static value's, with the difference. */
export function computedVsStatic(result: ScenarioResult, computedIds: readonly string[]): string {
  const best = bestStatic(result);
  if (!best) return "";
  return computedIds
    .map((id) => result.policies.find((p) => p.id === id))
    .filter((p): p is PolicyResult => p !== undefined)
    .map((p) => {
      const a = p.metrics.admittedRetryRate ?? 0;
      const b = best.metrics.admittedRetryRate ?? 0;
      const verdict = a > b + 0.005 ? "beats" : a < b - 0.005 ? "loses to" : "ties";
      return `- \`${p.id}\` ${verdict} the best static (\`${best.id}\`) on X: ${pct(a)} vs ${pct(b)}; time to success p50 ${num(p.metrics.timeToSuccessP50S, 1)} s vs ${num(best.metrics.timeToSuccessP50S, 1)} s, p99 ${num(p.metrics.timeToSuccessP99S, 1)} s vs ${num(best.metrics.timeToSuccessP99S, 1)} s; served ${pct(p.metrics.servedFraction)} vs ${pct(best.metrics.servedFraction)}.`;
    })
    .join("\n");
}

/** The end-to-end section's table. */
export function e2eTable(e2e: E2eResult): string {
  const lines = [
    "| policy | requests | served | retries | X (admitted-retry rate) | attempts / success | time to success p50 / p99 (s) | give-ups |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const p of e2e.policies) {
    lines.push(
      `| ${p.id} | ${p.requests} | ${p.served} | ${p.retries} | ${pct(p.admittedRetryRate)} | ${num(p.attemptsPerSuccess)} | ${num(p.timeToSuccessP50S, 1)} / ${num(p.timeToSuccessP99S, 1)} | ${p.gaveUp} |`,
    );
  }
  return lines.join("\n");
}

/**
 * The whole report (docs/evaluation.md): method, the X summary, per-scenario tables and figures, the
 * end-to-end confirmation and the committed analysis text.
 *
 * @example
 * ```ts
 * writeFileSync("docs/evaluation.md", renderReport({ results, computedIds: ["router_queue_drain_rate"], method, analysis }));
 * ```
 */
export function renderReport(input: {
  results: readonly ScenarioResult[];
  computedIds: readonly string[];
  method: string;
  analysis: string;
  e2e: readonly E2eResult[];
  figures: Record<string, string[]>;
}): string {
  const out: string[] = [];
  out.push("# Evaluation: how good are the Retry-After hints?\n");
  out.push(
    "Generated by `npm run eval` (virtual-time simulator) and `npm run eval:e2e` (real stack); do not edit by hand. The same figures are in `docs/evaluation.json`.\n",
  );
  out.push(input.method.trim(), "");
  out.push("## X: the admitted-retry rate, per scenario and policy\n");
  out.push(
    "Share of the retries made at the suggested time that were admitted on that attempt, pooled over the seeds, with the range over seeds in brackets. For the no-header policy there is no suggested time: its cell, in parentheses, is the admitted share of its SDK-backoff retries.\n",
  );
  out.push(summaryTable(input.results), "");
  for (const f of input.figures.summary ?? []) out.push(`![](${f})`, "");
  out.push("## Scenarios\n");
  for (const r of input.results) {
    out.push(`### ${r.name}: ${r.title}\n`);
    out.push(
      `${r.description} Capacity measured at ${r.capacityRps.toFixed(2)} req/s; ${r.offeredRequests} requests over ${r.seeds.length} seeds (${r.seeds.join(", ")}); ${r.trafficS} s of traffic plus ${r.spanS - r.trafficS} s of tail each.\n`,
    );
    if (r.bound) {
      out.push(
        `**The 60 s bound.** About ${Math.round(r.bound.refusedEstimate)} requests of the burst are refused; their first retries, each within 60 s, can share at most 60 s of the fleet's capacity: at most ${pct(r.bound.firstRetryBound)} of them can be admitted on the first retry whatever the hint, and at most ${pct(r.bound.firstRetryBoundWithBaseline)} if the baseline keeps its own share of those 60 s.\n`,
      );
    }
    out.push(scenarioTable(r), "");
    out.push(computedVsStatic(r, input.computedIds), "");
    for (const f of input.figures[r.name] ?? []) out.push(`![](${f})`, "");
  }
  out.push("## End-to-end confirmation (wrangler dev + engine servers + bench client)\n");
  if (input.e2e.length === 0) out.push("Not run yet: `npm run eval:e2e` writes `docs/evaluation-e2e.json`.\n");
  for (const e of input.e2e) {
    out.push(`### ${e.scenario}\n`, e.description, "", e2eTable(e), "");
  }
  out.push(input.analysis.trim(), "");
  return `${out.join("\n")}\n`;
}
