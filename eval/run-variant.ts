/**
 * `npm run eval:variant -- <variant>`: one variant of the default policy against issue 15's targets, in about 15 s
 * instead of `npm run eval`'s twenty minutes. `<variant>` is the id of one of the default's variants
 * (src/sim/variants.ts) or a JSON object of overrides, e.g. `'{"ledger":{"burstFadeS":5}}'` (the ledger's
 * tunables, `CapacityBookingOptions`, the router's `booking` settings, and the simulator's counterfactuals
 * `"clairvoyantForecast": true` and `"knownCapacity": true`: src/sim/variant-spec.ts).
 *
 * It prints, beside the default's: each scenario's gaps to the best other policy at every horizon, served share,
 * attempts, oracle gap, how far header-less clients' served share is behind the SDK clients', the mean wait (what
 * the curve does not count: a change that serves requests later within their horizons shows it there) and the share
 * of the ledger's promises that ended broken (docs/evaluation.md, "The ledger's promises"); the summed
 * worst curve gaps and mean waits and the targets met; and the end-to-end targets in the simulator's twins of the
 * end-to-end run, replaying its arrivals (as `npm run eval:e2e-twin` checks them). The other policies' results are
 * docs/evaluation.json's (the tuning seeds), so that file must match the code: the default is run again first, and
 * the command stops if its figures differ (run `npm run eval`). With --held every policy is run on the held-out
 * seeds instead (about three times longer). Writes nothing: a figure worth quoting goes through a variant in
 * src/sim/variants.ts and `npm run eval`.
 *
 * Flags: --held (the held-out seeds), --seeds <n> (with --held: that many held-out seeds, default 3; more seeds tell
 * a small difference from the seeds' own noise), --only <scenario,...> (a subset), --bins <scenario>[:<seconds>] (that
 * scenario's completion curve by when requests first arrived, default and variant side by side, in bins of 5 s or
 * the given seconds: which requests a change serves sooner or later, src/sim/arrival-bins.ts; beside them the
 * schedule of the clairvoyant curve bound, src/sim/curve-bound.ts, which shows whom a schedule near every
 * horizon's best serves when), --bins-with <policy,...> (with --bins: those other policies' curves by first attempt
 * too, e.g. `none,static-5`: whom the policy that leads at a horizon serves within it that the default does not),
 * --sweep (also the queue-bound sweep's points, as `npm run eval` runs them: issue 15 asks
 * for the targets across the sweep; the other policies' figures are docs/evaluation.json's, as for the scenarios).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import loadHighs from "highs";
import { commandFlags, numberFlag, positiveIntFlag, UsageError } from "../scripts/command-line";
import { promisesEnded } from "../src/core/capacity-booking";
import { binReleases, curveByArrival } from "../src/sim/arrival-bins";
import { measureCapacity } from "../src/sim/capacity";
import { curveBound, scenarioBoundSet } from "../src/sim/curve-bound";
import {
  evaluatePolicy,
  evaluateScenario,
  type PolicyResult,
  policyTraces,
  type ScenarioResult,
} from "../src/sim/evaluation";
import { headerClientShares } from "../src/sim/header-clients";
import { HELD_OUT_SEED_OFFSET, metCounts } from "../src/sim/held-out";
import { COMPLETION_HORIZONS_S } from "../src/sim/metrics";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../src/sim/policies";
import type { SweepPoint } from "../src/sim/report-markdown";
import { E2E_TWINS, twinTargets } from "../src/sim/report-twin-targets";
import type { Scenario } from "../src/sim/scenario";
import { checkTargets, type TargetCheck, withDefault } from "../src/sim/targets";
import { parseVariantSpec } from "../src/sim/variant-spec";
import { defaultSummary, summarizeVariant } from "../src/sim/variants";
import { E2E_REPLAY_RUN_FILE, type E2eRunArrivals, e2eReplayTwins } from "./e2e-twin-scenarios";
import { readScenario, readScenarios } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
const { values, spec, only, scenarios, heldSeeds, bins } = commandFlags(
  "npm run eval:variant -- <variant id | JSON overrides> [--held [--seeds <n>]] [--only <scenario,...>] [--bins <scenario>[:<s>] [--bins-with <policy,...>]] [--sweep]",
  {
    options: {
      held: { type: "boolean" },
      seeds: { type: "string" },
      only: { type: "string" },
      bins: { type: "string" },
      "bins-with": { type: "string" },
      sweep: { type: "boolean" },
    },
    allowPositionals: true,
  },
  ({ values, positionals }) => {
    let spec: PolicySpec;
    try {
      spec = parseVariantSpec(positionals[0] as string);
    } catch (error) {
      throw new UsageError((error as Error).message, 2);
    }
    const only = values.only?.split(",");
    const scenarios: Scenario[] = readScenarios().filter((s) => !only || only.includes(s.name));
    const unknown = only?.filter((name) => !scenarios.some((s) => s.name === name)) ?? [];
    if (unknown.length > 0) throw new UsageError(`--only: no scenario ${unknown.join(", ")} in eval/scenarios`, 2);
    if (values.seeds !== undefined && !values.held)
      throw new UsageError("--seeds: only with --held (the tuning seeds are docs/evaluation.json's)", 2);
    if (values.sweep && values.held)
      throw new UsageError("--sweep: the tuning seeds only (docs/evaluation.json's sweep)", 2);
    // --bins <scenario>[:<s>]: checked now, not after the whole run has been simulated.
    const [binsName, binText] = values.bins?.split(":") ?? [];
    if (binsName !== undefined && !scenarios.some((s) => s.name === binsName))
      throw new UsageError(`--bins: no scenario ${binsName} among those run`, 2);
    const withIds = values["bins-with"]?.split(",") ?? [];
    if (withIds.length > 0 && binsName === undefined) throw new UsageError("--bins-with: only with --bins", 2);
    const others = withIds.map((id) => {
      const policy = EVAL_POLICIES.find((p) => p.id === id && p.id !== DEFAULT_POLICY_ID);
      if (!policy)
        throw new UsageError(
          `--bins-with: no other policy ${id} (one of ${EVAL_POLICIES.filter((p) => p.id !== DEFAULT_POLICY_ID)
            .map((p) => p.id)
            .join(", ")})`,
          2,
        );
      return policy;
    });
    const bins =
      binsName === undefined
        ? undefined
        : { name: binsName, binS: numberFlag("bins", binText, 5, { above: 0 }), others };
    return { values, spec, only, scenarios, heldSeeds: positiveIntFlag("seeds", values.seeds, 3), bins };
  },
);
const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;

const evaluation = JSON.parse(readFileSync(join(root, "docs/evaluation.json"), "utf8")) as {
  scenarios: ScenarioResult[];
  sweeps: SweepPoint[];
};

/** The same figures, to the last digit: the simulator is deterministic, so any difference is a change of code. */
const sameFigures = (a: PolicyResult, b: PolicyResult) =>
  a.attemptsPerOffered === b.attemptsPerOffered &&
  COMPLETION_HORIZONS_S.every((h) => a.servedWithinS[String(h)] === b.servedWithinS[String(h)]);

const results: ScenarioResult[] = scenarios.map((scenario) => {
  if (values.held)
    return evaluateScenario({ ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET }, EVAL_POLICIES, heldSeeds);
  const prior = evaluation.scenarios.find((s) => s.name === scenario.name);
  if (!prior) throw new Error(`docs/evaluation.json has no ${scenario.name}: run npm run eval first`);
  const again = evaluatePolicy(scenario, prior.seeds, prior.capacityRps, base);
  const recorded = prior.policies.find((p) => p.id === DEFAULT_POLICY_ID) as PolicyResult;
  if (!sameFigures(again, recorded))
    throw new Error(`docs/evaluation.json does not match the code (the default on ${scenario.name}): run npm run eval`);
  return prior;
});
const own = results.map((r, i) => evaluatePolicy(scenarios[i] as Scenario, r.seeds, r.capacityRps, spec));
const variant = { id: spec.id, change: spec.label, spec };

const pts = (share: number) => `${share >= 0 ? "+" : ""}${(100 * share).toFixed(1)}`;
console.log(`${spec.label}, ${values.held ? `${heldSeeds} held-out` : "tuning"} seeds\n`);
console.log(
  `| scenario | worst curve gap: variant (default) | gap at ${COMPLETION_HORIZONS_S.join(" / ")} s | served | attempts - static 30 s | oracle - served | header-less behind SDK: variant (default) | mean wait: variant (default) | promises broken: variant (default) |`,
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
// The mean wait (what the curve does not count); "n/a" for a default result written before it was recorded.
const wait = (p: PolicyResult | undefined) =>
  p?.metrics.meanWaitS === undefined ? "n/a" : `${p.metrics.meanWaitS.toFixed(1)} s`;
// The share of the ledger's promises that ended broken (docs/evaluation.md, "The ledger's promises"): a change that
// promises better breaks fewer; "n/a" where none ended or for a default result written before it was recorded.
const broken = (p: PolicyResult | undefined) => {
  const l = p?.metrics.ledger;
  const ended = l ? promisesEnded(l) : 0;
  return l && ended > 0 ? `${((100 * l.broken) / ended).toFixed(1)}%` : "n/a";
};
// Issue 15 holds header-less clients within 5 points of the SDK clients on served share; "-" where the mix has none.
const headerlessBehind = (result: ScenarioResult) => {
  const { sdk, headerless } = headerClientShares(result, DEFAULT_POLICY_ID);
  return headerless === undefined ? "-" : (100 * (sdk - headerless)).toFixed(1);
};
results.forEach((result, i) => {
  const mine = own[i] as PolicyResult;
  const def = result.policies.find((p) => p.id === DEFAULT_POLICY_ID);
  const check = checkTargets(withDefault(result, mine));
  const before = checkTargets(result);
  const gaps = COMPLETION_HORIZONS_S.map((h) => pts(check.curveGap[String(h)] ?? 0)).join(" / ");
  console.log(
    `| ${result.name} | ${pts(check.worstCurveGap.gap)} at ${check.worstCurveGap.horizonS} s (${pts(before.worstCurveGap.gap)}) | ${gaps} | ${(100 * mine.servedFraction).toFixed(1)}% | ${check.attemptsVsStatic30.toFixed(3)} | ${pts(check.oracleGap)} | ${headerlessBehind(withDefault(result, mine))} (${headerlessBehind(result)}) | ${wait(mine)} (${wait(def)}) | ${broken(mine)} (${broken(def)}) |`,
  );
});

const summaries = [defaultSummary(results), summarizeVariant(variant, results, own)];
console.log(
  "\n| policy | summed worst curve gaps | curve / served / oracle / attempts targets met | sustained-1.3x p50 | summed mean wait |",
);
console.log("| --- | --- | --- | --- | --- |");
for (const s of summaries) {
  const p50 = s.perScenario["sustained-1.3x"]?.timeToSuccessP50S;
  const { curve, served, oracle, attempts } = s.met;
  console.log(
    `| ${s.id === "default" ? "default" : "variant"} | ${s.worstCurveGapSumPts.toFixed(1)} pts | ${curve} / ${served} / ${oracle} / ${attempts} of ${s.scenarios} | ${p50 == null ? "-" : `${p50.toFixed(2)} s`} | ${Number.isFinite(s.meanWaitSumS) ? `${s.meanWaitSumS.toFixed(1)} s` : "n/a"} |`,
  );
}

// The end-to-end targets in the twins of the end-to-end run, replaying its own arrivals (run 11's seeds, as
// `npm run eval:e2e-twin` records them): the reference policies, the default and the variant.
const demo = readScenario("demo-burst-3x");
const capacityRps = measureCapacity(demo);
const e2eRun = JSON.parse(readFileSync(join(root, E2E_REPLAY_RUN_FILE), "utf8")) as E2eRunArrivals;
const twinPolicies = [
  ...["static-30", "router_queue_drain_rate", "retry_schedule"].map(
    (id) => EVAL_POLICIES.find((p) => p.id === id) as PolicySpec,
  ),
  base,
  spec,
];
const twin = {
  twins: e2eReplayTwins(demo, e2eRun, capacityRps).map((t) => ({
    id: t.id,
    policies: twinPolicies.map((policy) => ({
      ...evaluatePolicy(t.scenario, t.seeds, capacityRps, policy, t.workloads),
      id: policy.id,
    })),
  })),
};
console.log("\n| policy | twin | served | worst curve gap (horizon) | attempts | served / curve / attempts targets |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const policy of [base, spec])
  for (const { id, label } of E2E_TWINS) {
    const check = twinTargets(twin, id, policy.id, DEFAULT_POLICY_ID);
    if (!check) throw new Error(`no twin ${id}`);
    const met = (ok: boolean) => (ok ? "met" : "**missed**");
    console.log(
      `| ${policy === base ? "default" : "variant"} | ${label} | ${(100 * check.servedFraction).toFixed(1)}% | ${pts(check.worst.gap)} (${check.worst.horizonS} s) | ${check.attemptsPerOffered.toFixed(3)} | ${met(check.met.served)} / ${met(check.met.curve)} / ${met(check.met.attempts)} |`,
    );
  }

// --bins: one scenario's curve by when its requests first arrived, the default's beside the variant's.
if (bins) {
  const { name, binS, others } = bins;
  const index = results.findIndex((r) => r.name === name);
  const scenario = scenarios[index];
  const result = results[index];
  if (!scenario || !result) throw new Error(`--bins: no scenario ${name} among those run`);
  const traces = (policy: PolicySpec) => policyTraces(scenario, result.seeds, result.capacityRps, policy);
  const [before, after] = [curveByArrival(traces(base), binS), curveByArrival(traces(spec), binS)];
  const theirs = others.map((p) => curveByArrival(traces(p), binS));
  const { instances, target } = scenarioBoundSet(scenario, result);
  const bound = binReleases(
    curveBound(await loadHighs(), instances, target, 1, { preferSooner: true }).byRelease,
    binS,
  );
  const curve = (c: Record<string, number> | undefined) =>
    COMPLETION_HORIZONS_S.map((h) => `${Math.round(100 * (c?.[String(h)] ?? 0))}`).join(" / ");
  console.log(`\n${name}: served within ${COMPLETION_HORIZONS_S.join(" / ")} s (%), by first attempt\n`);
  console.log(
    "The clairvoyant bound's schedule: of those that reach its margin, one serving the most within the horizons. It is a relaxation (it knows every arrival and starts a refused request at any moment of its window, alone on the fastest replica): where it serves a bin sooner, some schedule could; not necessarily a policy.\n",
  );
  const heads = others.map((p) => ` ${p.id} |`).join("");
  console.log(`| first attempt | requests | default | variant |${heads} clairvoyant bound |`);
  console.log(`| --- | --- | --- | --- |${" --- |".repeat(others.length)} --- |`);
  for (const bin of before) {
    const mine = after.find((b) => b.fromS === bin.fromS);
    const best = bound.find((b) => b.fromS === bin.fromS);
    const span = `${bin.fromS}-${bin.fromS + binS} s`;
    console.log(
      `| ${span} | ${bin.requests} | ${curve(bin.servedWithinS)} | ${curve(mine?.servedWithinS)} |${theirs.map((t) => ` ${curve(t.find((b) => b.fromS === bin.fromS)?.servedWithinS)} |`).join("")} ${curve(best?.servedWithinS)} |`,
    );
  }
}

// --sweep: the queue-bound sweep's points (docs/evaluation.md, "Queue bounds as operators set them"), the default's
// targets beside the variant's. The other policies' figures are the recorded ones, so the default is run again first.
if (values.sweep) {
  const points = evaluation.sweeps.filter((p) => !only || only.includes(p.scenario));
  const asResult = (point: SweepPoint, mine?: PolicyResult): ScenarioResult =>
    ({
      name: `${point.scenario} @ queue ${point.maxQueuedRequests}`,
      defaultPolicy: DEFAULT_POLICY_ID,
      oracle: point.oracle,
      policies: point.policies.map((p) =>
        p.id === DEFAULT_POLICY_ID && mine
          ? { ...mine, id: DEFAULT_POLICY_ID }
          : {
              ...p,
              metrics: {
                servedFraction: p.servedFraction,
                attemptsPerOffered: p.attemptsPerOffered,
                servedWithinS: p.servedWithinS,
              },
            },
      ),
    }) as unknown as ScenarioResult;
  console.log("\nThe queue-bound sweep (the default's figures in brackets)\n");
  console.log(
    "| scenario | queue | worst curve gap | served - best other | attempts - static 30 s | curve / served / oracle / attempts targets |",
  );
  console.log("| --- | --- | --- | --- | --- | --- |");
  const checks: { before: TargetCheck; after: TargetCheck }[] = [];
  for (const point of points) {
    const file = scenarios.find((s) => s.name === point.scenario);
    if (!file) continue;
    const scenario = { ...file, router: { ...file.router, maxQueuedRequests: point.maxQueuedRequests } };
    const capacity = measureCapacity(scenario);
    const seedsRun = Array.from({ length: evaluation.scenarios[0]?.seeds.length ?? 3 }, (_, i) => file.seed + i);
    const again = evaluatePolicy(scenario, seedsRun, capacity, base);
    const recorded = point.policies.find((p) => p.id === DEFAULT_POLICY_ID) as unknown as PolicyResult;
    if (!sameFigures(again, recorded))
      throw new Error(
        `docs/evaluation.json's sweep does not match the code (${point.scenario} @ ${point.maxQueuedRequests}): run npm run eval`,
      );
    const before = checkTargets(asResult(point));
    const after = checkTargets(asResult(point, evaluatePolicy(scenario, seedsRun, capacity, spec)));
    checks.push({ before, after });
    const met = (c: TargetCheck) =>
      ["curve", "served", "oracle", "attempts"]
        .map((k) => (c.met[k as keyof TargetCheck["met"]] ? "met" : "missed"))
        .join(" / ");
    console.log(
      `| ${point.scenario} | ${point.maxQueuedRequests} | ${pts(after.worstCurveGap.gap)} at ${after.worstCurveGap.horizonS} s (${pts(before.worstCurveGap.gap)}) | ${pts(after.servedGap)} (${pts(before.servedGap)}) | ${after.attemptsVsStatic30.toFixed(3)} (${before.attemptsVsStatic30.toFixed(3)}) | ${met(after)} (${met(before)}) |`,
    );
  }
  const sum = (key: "before" | "after") => checks.reduce((a, c) => a + c[key].worstCurveGap.gap, 0);
  const counts = (key: "before" | "after") => {
    const m = metCounts(checks.map((c) => c[key]));
    return `${m.curve} / ${m.served} / ${m.oracle} / ${m.attempts} of ${checks.length}`;
  };
  console.log(
    `\nSweep: summed worst curve gaps ${pts(sum("after"))} pts (default ${pts(sum("before"))}); targets met ${counts("after")} (default ${counts("before")})`,
  );
}
