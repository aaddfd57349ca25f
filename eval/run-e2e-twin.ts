/**
 * `npm run eval:e2e-twin`: the simulator's twin of `npm run eval:e2e`. It runs demo-burst-3x's stack and clients
 * under the end-to-end runs' phases (`E2E_PHASES`: 10 s of baseline before the burst, where the scenario has 60 s),
 * twice: from a cold router, and after a quiet spell (40 s at 0.02x: an end-to-end run follows its warm-up, or the
 * previous seed's tail). The policies are the end-to-end ones, plus the default's variants that touch its reading
 * of a burst (`burst-persistence`, `no-queue-refill`, `no-overload-floor`, `lowest-overload-floor`, `burst-fade-5s`,
 * `before-median-floor`, `before-queue-refill`, `slow-burst-rate`) and the others whose summed worst curve gaps in
 * `npm run eval` are smaller than the default's on both seed sets (`two-step`, `demote-after-10s`).
 *
 * Why: the ledger's baseline and burst fade read the router's recent history, and an end-to-end run starts with
 * little of it. The twin says how much of the gap between the simulator and the end-to-end figures that explains.
 *
 * Then the same twins again replaying the end-to-end runs' own arrivals (run 11's seeds' schedules, `replay`): the
 * twins above draw theirs from demo-burst-3x's seeds, and were far from the real runs for every policy alike; the
 * replaying ones are near them, and are the twins the end-to-end targets are checked on (`eval:variant`,
 * docs/retry-policy.md). With them: how far each twin is from runs 11 and 12, the default on one router through the
 * six runs, and the cold twin's answers per second while the burst saturates the fleet, which the end-to-end run
 * measures too (`saturatedRps`).
 *
 * Last, run 24's twin (`spikes`): the cold twin under the spike train (`E2E_SCHEDULES.spikes`: 10 s at 0.5x, ten
 * 0.2 s spikes at 15.5x 3 s apart, 20 s at 0.5x) replaying run 24's own arrivals (its seeds and capacity), the
 * end-to-end policies, and how far it is from run 24: does the simulator predict the run where the default loses?
 * Writes docs/e2e-twin.json, which docs/benchmarks.md quotes (tested).
 *
 * Flags: --seeds <n> (default 6: the scenario's seed and the next ones; the replaying twins use the run's seeds).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandFlags, positiveIntFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { measureCapacity } from "../src/sim/capacity";
import { evaluatePolicy, type PolicyResult } from "../src/sim/evaluation";
import { COMPLETION_HORIZONS_S } from "../src/sim/metrics";
import { EVAL_POLICIES, type PolicySpec } from "../src/sim/policies";
import type { E2eOpenAiRun } from "../src/sim/report-markdown";
import { runSimulation } from "../src/sim/simulation";
import { type CurveFigures, twinFit } from "../src/sim/twin-fit";
import { DEFAULT_POLICY_VARIANTS } from "../src/sim/variants";
import { E2E_SATURATED_WINDOW_S, E2E_SCHEDULES } from "./e2e-schedule";
import {
  chainedRunStartsS,
  E2E_REPLAY_RUN_FILE,
  E2E_REQUEST_SIZES,
  e2eChainedTwin,
  e2eReplayTwins,
  e2eTwinScenarios,
  replayWorkload,
  runSchedules,
} from "./e2e-twin-scenarios";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
/** The full end-to-end runs every twin is compared with. */
const REAL_RUN_FILES = ["docs/evaluation-e2e-openai-run11.json", "docs/evaluation-e2e-openai-run12.json"];
/**
 * The end-to-end runs of today's default (runs 17 and 18: the same arrival seeds, and the Worker and router code the
 * twin runs), against which the replayed twins are fitted again: runs 11 and 12 ran an earlier default.
 */
const LATEST_RUN_FILES = ["docs/evaluation-e2e-openai.json", "docs/evaluation-e2e-openai-run18.json"];
/** The end-to-end run of today's default on arrival seeds other than the runs above (`--first-seed`), if any. */
const HELD_RUN_FILE = "docs/evaluation-e2e-openai-held2.json";
/** Run 24: every end-to-end policy on the spike train (`--schedule spikes`), which the `spikes` twin replays. */
const SPIKES_RUN_FILE = "docs/evaluation-e2e-openai-spikes.json";

const seedCount = commandFlags(
  "npm run eval:e2e-twin -- [--seeds <n>]",
  { options: { seeds: { type: "string" } } },
  ({ values }) => positiveIntFlag("seeds", values.seeds, 6),
);

const E2E_POLICY_IDS = ["booked_capacity", "router_queue_drain_rate", "retry_schedule", "static-30"];

const demo = readScenario("demo-burst-3x");
const twins = e2eTwinScenarios(demo);
/**
 * The default's variants that touch the ledger's reading of a burst, which the router's short history affects, and
 * those ahead of the default on the simulator's summed curve gaps: the twin says what they do end to end.
 */
const TWIN_VARIANT_IDS = [
  "burst-persistence",
  "no-queue-refill",
  "no-overload-floor",
  "lowest-overload-floor",
  "burst-fade-5s",
  "floor-before-rise",
  "floor-before-rise-fade-5s",
  "floor-before-rise-persistence",
  "before-median-floor",
  "before-queue-refill",
  "slow-burst-rate",
  "two-step",
  "demote-after-10s",
  "no-burst-fade",
  "best-effort-second-half",
  "best-effort-no-age",
  "clairvoyant-forecast",
  "known-capacity",
  "newest-first-order",
  "sdk-room-off",
  "demoted-headroom-1",
  "demoted-headroom-2",
  "demoted-headroom-4",
  "demoted-timeout-off",
  "demoted-quiet-off",
  "demoted-quiet-60",
  "backlog-at-drain-rate",
  "horizon-pack",
  "no-delay-target",
  "fifo-while-standing",
  "forget-when-queued",
  "fast-floor-only",
  "probe-every-overload",
  "probe-beyond-30s",
  "recurring-best-effort-off",
  "draining-ignores-demoted",
  "fresh-past-target",
  "candidates-combined",
  "candidates-unpacked",
];
const variants = TWIN_VARIANT_IDS.map((id) => {
  const variant = DEFAULT_POLICY_VARIANTS.find((v) => v.id === id);
  if (!variant) throw new Error(`no ${id} variant`);
  return { ...variant.spec, id: `booked_capacity:${variant.id}` };
});
const policies: PolicySpec[] = [
  ...E2E_POLICY_IDS.map((id) => EVAL_POLICIES.find((p) => p.id === id) as PolicySpec),
  ...variants,
];

// The capacity of the stack, as the end-to-end runs scale their load (the same fleet and sizes).
const capacityRps = measureCapacity(demo);
const seeds = Array.from({ length: seedCount }, (_, i) => demo.seed + i);
/** What a twin records of a policy: its curve and attempts, its refused attempts and booked_capacity's promises. */
const figuresOf = (policy: PolicySpec, r: PolicyResult) => ({
  id: policy.id,
  servedFraction: r.servedFraction,
  servedWithinS: r.servedWithinS,
  attemptsPerOffered: r.attemptsPerOffered,
  // The end-to-end run reads the real router's counts of both from /spillway/overview.
  refusals: r.metrics.refusals,
  ...(r.metrics.ledger ? { ledger: r.metrics.ledger } : {}),
});
const results = twins.map((t) => ({
  id: t.id,
  description: t.description,
  phases: t.scenario.phases,
  policies: policies.map((policy) => figuresOf(policy, evaluatePolicy(t.scenario, seeds, capacityRps, policy))),
}));
// The default as the end-to-end run's router lives it: six bursts on one router (one per seed), 60 s of quiet
// between them (a seed's tail and the pause). Its promises and refusals beside the real router's
// (docs/benchmarks.md, "The ledger's promises, end to end").
const CHAIN = { bursts: 6, quietS: 60 };
const chainedRun = evaluatePolicy(
  e2eChainedTwin(demo, CHAIN.bursts, CHAIN.quietS),
  seeds,
  capacityRps,
  EVAL_POLICIES.find((p) => p.id === E2E_POLICY_IDS[0]) as PolicySpec,
);
const chained = {
  ...CHAIN,
  policy: E2E_POLICY_IDS[0],
  refusalsPerBurst: chainedRun.metrics.refusals / (CHAIN.bursts * seeds.length),
  attemptsPerOffered: chainedRun.attemptsPerOffered,
  ledger: chainedRun.metrics.ledger,
};
// The same twins replaying the end-to-end runs' own arrivals (their seeds' schedules, which the twins above do not
// draw: they use demo-burst-3x's seeds), every policy and variant, and the default on one router through the six
// runs as their router lives them. How far each twin is from the real runs says which arrivals a twin should use
// (docs/benchmarks.md, "The twin replays the run's arrivals").
const read = (file: string) => JSON.parse(readFileSync(join(root, file), "utf8")) as E2eOpenAiRun;
const replayRun = read(E2E_REPLAY_RUN_FILE);
const schedules = runSchedules(replayRun);
const e2ePolicies = policies.slice(0, E2E_POLICY_IDS.length);
// Every policy of the twins above, the variants too: the replaying twins are the end-to-end targets' twin.
const replayTwins = e2eReplayTwins(demo, replayRun, capacityRps);
/** Each replaying twin run with `specs`, its figures per policy. */
const runReplayTwins = (twinsToRun: typeof replayTwins, specs: readonly PolicySpec[]) =>
  twinsToRun.map((t) => ({
    id: t.id,
    policies: specs.map((policy) =>
      figuresOf(policy, evaluatePolicy(t.scenario, t.seeds, capacityRps, policy, t.workloads)),
    ),
  }));
const replayed = runReplayTwins(replayTwins, policies);
const chain = e2eChainedTwin(demo, schedules.length, CHAIN.quietS);
const chainRun = evaluatePolicy(chain, [demo.seed], capacityRps, e2ePolicies[0] as PolicySpec, [
  replayWorkload(
    { ...chain, seed: demo.seed },
    capacityRps,
    schedules,
    chainedRunStartsS(schedules.length, CHAIN.quietS),
    E2E_REQUEST_SIZES,
  ),
]);
// The fleet's pace: answers per second while the burst saturates the fleet (the schedule's E2E_SATURATED_WINDOW_S),
// the replayed cold twin's default, beside what the end-to-end run measured the same way (`saturatedRps`).
const [fromS, toS] = E2E_SATURATED_WINDOW_S;
const coldReplay = replayTwins[0] as (typeof replayTwins)[number];
const saturatedAnswers = coldReplay.seeds.reduce((sum, seed, i) => {
  const trace = runSimulation(
    { ...coldReplay.scenario, seed },
    e2ePolicies[0] as PolicySpec,
    coldReplay.workloads[i] ?? [],
  );
  const inWindow = (ms: number | undefined) => ms !== undefined && ms >= fromS * 1000 && ms < toS * 1000;
  return sum + trace.requests.filter((r) => inWindow(r.completedAtMs)).length;
}, 0);
const realRuns = REAL_RUN_FILES.map(read);
const latestRuns = LATEST_RUN_FILES.map(read);
const fitOf = (
  twin: { id: string; policies: CurveFigures[] },
  arrivals: "own" | "replayed",
  runs: readonly E2eOpenAiRun[] = realRuns,
) => ({
  twin: twin.id,
  arrivals,
  ...twinFit(
    twin.policies.filter((p) => E2E_POLICY_IDS.includes(p.id)),
    runs,
  ),
});
// The replayed twins on the held-out run's arrivals, the end-to-end policies only, fitted to that run: how well the
// twin predicts a run on arrivals that no variant it guards was checked on.
const heldRun = existsSync(join(root, HELD_RUN_FILE)) ? read(HELD_RUN_FILE) : undefined;
const heldTwins = heldRun ? runReplayTwins(e2eReplayTwins(demo, heldRun, capacityRps), e2ePolicies) : undefined;
const replay = {
  runFile: E2E_REPLAY_RUN_FILE,
  runSeeds: replayRun.seeds,
  realRuns: REAL_RUN_FILES,
  twins: replayed,
  chained: {
    ...CHAIN,
    bursts: schedules.length,
    policy: E2E_POLICY_IDS[0],
    servedWithinS: chainRun.servedWithinS,
    refusalsPerBurst: chainRun.metrics.refusals / schedules.length,
    attemptsPerOffered: chainRun.attemptsPerOffered,
    ledger: chainRun.metrics.ledger,
  },
  fit: [...results.map((t) => fitOf(t, "own")), ...replayed.map((t) => fitOf(t, "replayed"))],
  latestRuns: LATEST_RUN_FILES,
  latestFit: replayed.map((t) => fitOf(t, "replayed", latestRuns)),
  // The yardstick: how far the first of those runs is from the second, the same code on the same seeds.
  latestRunsApart: twinFit(
    (latestRuns[0] as E2eOpenAiRun).policies.filter((p) => E2E_POLICY_IDS.includes(p.id)),
    latestRuns.slice(1),
  ),
  saturated: { windowS: E2E_SATURATED_WINDOW_S, twinRps: saturatedAnswers / ((toS - fromS) * schedules.length) },
  held:
    heldRun && heldTwins
      ? {
          runFile: HELD_RUN_FILE,
          runSeeds: heldRun.seeds,
          twins: heldTwins,
          fit: heldTwins.map((t) => fitOf(t, "replayed", [heldRun])),
        }
      : undefined,
};
// Run 24's twin: from a cold router (as the replaying twin nearest runs 11 and 12), under the spike train, replaying
// run 24's arrivals (runSchedules refuses a run whose recorded phases are not the train's).
const spikesRun = read(SPIKES_RUN_FILE);
const spikesPhases = E2E_SCHEDULES.spikes.phases;
const spikesCold = e2eReplayTwins(demo, spikesRun, capacityRps, spikesPhases).find((t) => t.id === "cold");
if (!spikesCold) throw new Error("no cold twin");
const [spikesTwin] = runReplayTwins([spikesCold], e2ePolicies);
if (!spikesTwin) throw new Error("no spikes twin");
const spikes = {
  runFile: SPIKES_RUN_FILE,
  schedule: "spikes",
  runSeeds: spikesRun.seeds,
  twin: spikesTwin.id,
  seeds: spikesCold.seeds,
  policies: spikesTwin.policies,
  fit: twinFit(spikesTwin.policies, [spikesRun]),
};
const out = {
  generatedBy: "npm run eval:e2e-twin",
  seeds,
  capacityRps,
  horizonsS: COMPLETION_HORIZONS_S,
  twins: results,
  chained,
  replay,
  spikes,
};
writeGenerated(join(root, "docs/e2e-twin.json"), `${JSON.stringify(out, null, 1)}\n`);
const pct = (v: number | undefined) => `${(100 * (v ?? Number.NaN)).toFixed(1)}%`;
type TableFigures = CurveFigures & { servedFraction: number };
/** A twin's figures per policy as a table; with `run`, each cell "twin / run" (a policy the run lacks: "-"). */
function printTable(title: string, policies: readonly TableFigures[], run?: { policies: readonly TableFigures[] }) {
  console.log(`\n${title}\n`);
  console.log("| policy | served | <= 5 s | <= 15 s | <= 30 s | <= 60 s | attempts per offered |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const p of policies) {
    const r = run?.policies.find((x) => x.id === p.id);
    const cell = (f: (x: TableFigures) => string) => (run ? `${f(p)} / ${r ? f(r) : "-"}` : f(p));
    const curve = [5, 15, 30, 60].map((h) => cell((x) => pct(x.servedWithinS[h])));
    console.log(
      `| ${p.id} | ${cell((x) => pct(x.servedFraction))} | ${curve.join(" | ")} | ${cell((x) => x.attemptsPerOffered.toFixed(3))} |`,
    );
  }
}
for (const t of results) printTable(`${t.id}: ${t.description}`, t.policies);
for (const [fits, runs] of [
  [replay.fit, "runs 11 and 12"],
  [replay.latestFit, "runs 17 and 18"],
] as const)
  for (const f of fits)
    console.log(
      `${f.twin}, ${f.arrivals} arrivals: ${f.curveAbsErrPts.toFixed(1)} points from ${runs} (summed over the policies at 5 to 60 s; bias ${f.curveBiasPts.toFixed(1)}), attempts ${f.attemptsBias.toFixed(3)}`,
    );
console.log(`run 17 from run 18: ${replay.latestRunsApart.curveAbsErrPts.toFixed(1)} points`);
for (const f of replay.held?.fit ?? [])
  console.log(
    `${f.twin}, replaying ${HELD_RUN_FILE}: ${f.curveAbsErrPts.toFixed(1)} points from it (bias ${f.curveBiasPts.toFixed(1)}), attempts ${f.attemptsBias.toFixed(3)}`,
  );
printTable(
  `run 24's twin (${SPIKES_RUN_FILE}'s arrivals, from a cold router), twin / run:`,
  spikes.policies,
  spikesRun,
);
console.log(
  `spikes twin: ${spikes.fit.curveAbsErrPts.toFixed(1)} points from run 24 (bias ${spikes.fit.curveBiasPts.toFixed(1)}), attempts ${spikes.fit.attemptsBias.toFixed(3)}`,
);
console.log("\nwrote docs/e2e-twin.json");
