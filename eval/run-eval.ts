/**
 * `npm run eval`: runs every scenario of eval/scenarios under every policy in the virtual-time simulator and
 * writes docs/evaluation.md, docs/evaluation.json and docs/figures/*.svg (the end-to-end figures, if
 * `npm run eval:e2e` wrote docs/evaluation-e2e.json, are included beside them).
 *
 * Flags: --seeds <n> (default 3), --only <scenario,...> (a subset; the report then holds only those).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { evaluateScenario, type ScenarioResult } from "../src/sim/evaluation";
import { EVAL_POLICIES } from "../src/sim/policies";
import { type E2eResult, renderReport } from "../src/sim/report-markdown";
import { type Scenario, scenarioSchema } from "../src/sim/scenario";
import { groupedBarChart, lineChart } from "../src/sim/svg-chart";

const ORDER = [
  "burst-3x",
  "burst-10x",
  "sustained-1.3x",
  "waves",
  "mixed-fleet",
  "router-restart",
  "sharded",
  "llm-sizes",
];
const COMPUTED = EVAL_POLICIES.filter((p) => p.retryAfterPolicy !== "static").map((p) => p.id);

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { seeds: { type: "string" }, only: { type: "string" } } });
const seedCount = Number(values.seeds ?? 3);
const only = values.only?.split(",");

const scenarioDir = join(root, "eval/scenarios");
const scenarios: Scenario[] = readdirSync(scenarioDir)
  .filter((f) => f.endsWith(".json"))
  .map((f) => scenarioSchema.parse(JSON.parse(readFileSync(join(scenarioDir, f), "utf8"))))
  .filter((s) => !only || only.includes(s.name))
  .sort(
    (a, b) => (ORDER.indexOf(a.name) + 1 || 99) - (ORDER.indexOf(b.name) + 1 || 99) || a.name.localeCompare(b.name),
  );

const started = performance.now();
const results: ScenarioResult[] = [];
for (const scenario of scenarios) {
  const t = performance.now();
  results.push(evaluateScenario(scenario, EVAL_POLICIES, seedCount));
  console.log(`${scenario.name}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

const docs = join(root, "docs");
const figuresDir = join(docs, "figures");
mkdirSync(figuresDir, { recursive: true });
const figures: Record<string, string[]> = { summary: ["figures/admitted-retry-rate.svg"] };
writeFileSync(
  join(figuresDir, "admitted-retry-rate.svg"),
  groupedBarChart({
    title: "X: admitted-retry rate per scenario and policy (no header: SDK-backoff retries)",
    categories: results.map((r) => r.name),
    series: (results[0]?.policies ?? []).map((p, i) => ({
      name: p.label,
      values: results.map((r) => {
        const m = r.policies[i]?.metrics;
        return m ? (m.admittedRetryRate ?? m.anyRetryAdmittedRate) : null;
      }),
    })),
    yMax: 1,
    yLabel: "admitted / retries",
  }),
);
for (const r of results) {
  const scenario = scenarios.find((s) => s.name === r.name) as Scenario;
  const shade: [number, number][] = [];
  let t = 0;
  for (const phase of scenario.phases) {
    if (phase.load > 1) shade.push([t, t + phase.durationS]);
    t += phase.durationS;
  }
  const file = `figures/retries-${r.name}.svg`;
  const shown = r.policies.filter((p) => p.id !== "none" && p.id !== "static-1");
  writeFileSync(
    join(docs, file),
    lineChart({
      title: `${r.name}: retries sent per ${shown[0]?.timeline.binS ?? 2} s (seed ${r.seeds[0]}; shaded: load above capacity)`,
      xStep: shown[0]?.timeline.binS ?? 2,
      series: shown.map((p) => ({ name: p.label, values: p.timeline.retries })),
      yLabel: "retries per bin",
      shade,
    }),
  );
  figures[r.name] = [file];
}

const e2ePath = join(docs, "evaluation-e2e.json");
const e2e: E2eResult[] = existsSync(e2ePath) ? (JSON.parse(readFileSync(e2ePath, "utf8")) as E2eResult[]) : [];
const json = {
  generatedBy: "npm run eval",
  seedsPerScenario: seedCount,
  policies: EVAL_POLICIES,
  scenarios: results,
  e2e,
};
writeFileSync(join(docs, "evaluation.json"), `${JSON.stringify(json, null, 1)}\n`);
writeFileSync(
  join(docs, "evaluation.md"),
  renderReport({
    results,
    computedIds: COMPUTED,
    method: readFileSync(join(root, "eval/method.md"), "utf8"),
    analysis: readFileSync(join(root, "eval/analysis.md"), "utf8"),
    e2e,
    figures,
  }),
);
console.log(
  `wrote docs/evaluation.md, docs/evaluation.json, docs/figures (${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
