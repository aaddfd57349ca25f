/**
 * `npm run eval:plan-replay`: can a router that knows the bound's schedule follow it? For a few scenarios of
 * docs/evaluation.json, the queue-aware bound's schedule (src/sim/queue-bound.ts), request by request, replayed in
 * the simulator by a router that knows it in advance (src/sim/plan-replay.ts), as the bound plans it, with a
 * planning margin, and re-planned against the completion times its own replays showed. Writes docs/plan-replay.json
 * and docs/plan-replay.md (about 12 minutes here).
 *
 * Flags: --scenario <name> (repeatable; default demo-burst-3x, burst-3x and waves), --margin-s <s> and --depth <n>
 * (the planning margin's setting; default 1.75 s and 4 starts), --plans <n> (the re-planned setting's plans in all;
 * default 4).
 */

import { join, resolve } from "node:path";
import loadHighs from "highs";
import { commandFlags, numberFlag, UsageError } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type BoundSet, jointCurveBound } from "../src/sim/curve-bound";
import { poolTraces } from "../src/sim/evaluation";
import { type CompletionCurve, computeMetrics, type RunMetrics } from "../src/sim/metrics";
import {
  PlannedRouter,
  type PlanReplayReport,
  type PlanReplayRow,
  type ReplaySetting,
  renderPlanReplay,
  replannedCompletionS,
} from "../src/sim/plan-replay";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../src/sim/policies";
import { queueBoundSet } from "../src/sim/queue-bound";
import { runSimulation } from "../src/sim/simulation";
import { generateWorkload } from "../src/sim/workload";
import { EVALUATION_PATH, readEvaluation } from "./scenario-bound-runs";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const { settings, evaluation, names } = commandFlags(
  "npm run eval:plan-replay -- [--scenario <name>]... [--margin-s <s>] [--depth <n>] [--plans <n>]",
  {
    options: {
      scenario: { type: "string", multiple: true },
      "margin-s": { type: "string" },
      depth: { type: "string" },
      plans: { type: "string" },
    },
  },
  ({ values }) => {
    const settings: ReplaySetting[] = [
      { name: "as bounded", marginS: 0 },
      {
        name: "planning margin",
        marginS: numberFlag("margin-s", values["margin-s"], 1.75, { min: 0 }),
        depth: Math.max(1, Math.round(numberFlag("depth", values.depth, 4, { min: 0 }))),
      },
      {
        name: "re-planned",
        marginS: 0,
        plans: Math.max(2, Math.round(numberFlag("plans", values.plans, 4, { min: 0 }))),
      },
    ];
    const evaluation = readEvaluation();
    const names = values.scenario ?? ["demo-burst-3x", "burst-3x", "waves"];
    // Checked before any scenario is replayed, not when the loop reaches the name.
    const unknown = names.filter((name) => !evaluation.scenarios.some((r) => r.name === name));
    if (unknown.length > 0)
      throw new UsageError(`--scenario: no scenario ${unknown.join(", ")} in ${EVALUATION_PATH}`, 2);
    return { settings, evaluation, names };
  },
);
const policy = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as (typeof EVAL_POLICIES)[number];
const highs = await loadHighs();
const rows: PlanReplayRow[] = [];
for (const name of names) {
  const result = evaluation.scenarios.find((r) => r.name === name);
  if (!result) throw new Error(`eval:plan-replay: no scenario "${name}" in ${EVALUATION_PATH}`);
  const scenario = readScenario(name);
  const staticThirty = result.policies.find((p) => p.id === "static-30")?.attemptsPerOffered;
  const own = result.policies.find((p) => p.id === result.defaultPolicy);
  if (staticThirty === undefined || !own) throw new Error(`eval:plan-replay: ${name} lacks static-30 or the default`);
  const workloads = result.seeds.map((seed) => generateWorkload({ ...scenario, seed }, result.capacityRps));
  const bounded = queueBoundSet(scenario, result, staticThirty);
  for (const setting of settings) {
    const started = performance.now();
    const leastS = bounded.instances.map((inst) => inst.jobs.map((job) => job.minCompletionS + setting.marginS));
    let completionS = leastS;
    const passes: Array<{ planMargin: number; replayedCurve: CompletionCurve }> = [];
    let last: { planCurve: CompletionCurve; replayed: RunMetrics } | undefined;
    for (let pass = 0; pass < (setting.plans ?? 1); pass++) {
      const set: BoundSet = {
        ...bounded,
        instances: bounded.instances.map((inst, k) => ({
          ...inst,
          ...(setting.depth !== undefined ? { burstStarts: setting.depth } : {}),
          jobs: inst.jobs.map((job, i) => ({ ...job, minCompletionS: completionS[k]?.[i] ?? job.minCompletionS })),
        })),
      };
      const bound = jointCurveBound(highs, [set], 0, 1, { preferSooner: true, plans: true });
      const replays = result.seeds.map((seed, k) => {
        const workload = workloads[k] as (typeof workloads)[number];
        const planned = bound.plans?.[0]?.[k] ?? [];
        const plan = new Map(workload.flatMap((request, i) => (planned[i] ? [[request.id, planned[i]] as const] : [])));
        const trace = runSimulation({ ...scenario, seed }, policy, workload, (setting) => [
          new PlannedRouter(setting, plan, scenario.router.queueTimeoutS),
        ]);
        const doneAt = new Map(trace.requests.map((r) => [r.id, r.completedAtMs]));
        const completedAtS = workload.map((request) => {
          const ms = doneAt.get(request.id);
          return ms === undefined ? undefined : ms / 1000;
        });
        return { trace, planned, completedAtS };
      });
      const replayed = computeMetrics(poolTraces(replays.map((r) => r.trace)));
      passes.push({ planMargin: bound.margin, replayedCurve: replayed.servedWithinS });
      last = { planCurve: bound.curves[0] ?? {}, replayed };
      completionS = replays.map((r, k) =>
        replannedCompletionS(leastS[k] ?? [], completionS[k] ?? [], r.planned, r.completedAtS),
      );
    }
    const lastPass = passes.at(-1);
    if (!last || !lastPass) throw new Error("eval:plan-replay: no plan made");
    const { replayed } = last;
    rows.push({
      scenario: name,
      setting,
      target: bounded.target,
      planMargin: lastPass.planMargin,
      planCurve: last.planCurve,
      replayed: {
        curve: replayed.servedWithinS,
        attemptsPerOffered: replayed.attemptsPerOffered,
        servedFraction: replayed.servedFraction,
      },
      defaultCurve: own.servedWithinS,
      defaultAttempts: own.attemptsPerOffered,
      staticThirtyAttempts: staticThirty,
      ...(setting.plans !== undefined ? { passes } : {}),
    });
    console.log(`${name}, ${setting.name}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

const report: PlanReplayReport = { generatedBy: "npm run eval:plan-replay", from: EVALUATION_PATH, rows };
writeGenerated(join(root, "docs/plan-replay.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/plan-replay.md"), renderPlanReplay(report));
console.log("wrote docs/plan-replay.json and docs/plan-replay.md");
