import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { E2E_SATURATED_WINDOW_S, E2E_SCHEDULES } from "../../../eval/e2e-schedule";
import { DEFAULT_CAPACITY_BOOKING_OPTIONS, type PromiseOutcomes } from "../../../src/core/capacity-booking";
import { DEFAULT_BOOKING_ADMISSION } from "../../../src/core/router-options";
import { routerSettingsSchema } from "../../../src/core/router-schema";
import { parseConfig } from "../../../src/edge/config";
import type { ArrivalCurves } from "../../../src/sim/arrival-bins";
import {
  type BurstTrainReport,
  burstTrainSummary,
  clairvoyantSummary,
  trustByLeadSummary,
} from "../../../src/sim/burst-train";
import { checkE2eTargets } from "../../../src/sim/e2e-targets";
import type { ScenarioResult } from "../../../src/sim/evaluation";
import { headerClientShares, headerlessMet } from "../../../src/sim/header-clients";
import { HELD_OUT_SEED_OFFSET, type HeldOutRun, metCounts } from "../../../src/sim/held-out";
import { HELD_SEEDS_VARIANTS, type HeldSeedsRun } from "../../../src/sim/held-seeds";
import { COMPLETION_HORIZONS_S, type LedgerMetrics } from "../../../src/sim/metrics";
import { DEFAULT_POLICY_ID } from "../../../src/sim/policies";
import { seedsOf } from "../../../src/sim/report-e2e-repeat";
import { envelopeRows, envelopeSection } from "../../../src/sim/report-envelope";
import { envelopeOwners } from "../../../src/sim/report-envelope-owners";
import { heldSeedsFills, staleScenarios } from "../../../src/sim/report-held-seeds";
import {
  type E2eOpenAiPolicy,
  type E2eOpenAiRun,
  type E2eResult,
  e2eOrderings,
  meanWaitSection,
  renderReport,
  type SweepPoint,
} from "../../../src/sim/report-markdown";
import { horizonTallies, pairwiseRows, pairwiseSection } from "../../../src/sim/report-pairwise";
import { type E2eTwinRun, renderPolicyDoc } from "../../../src/sim/report-policy";
import { E2E_TWINS, meetsTwinTargets, targetTwins, twinTargets } from "../../../src/sim/report-twin-targets";
import { bestOtherCurve, checkTargets, type TargetCheck } from "../../../src/sim/targets";
import { type TwinFit, twinFit } from "../../../src/sim/twin-fit";
import { DEFAULT_POLICY_VARIANTS, defaultSummary, type VariantSummary, variantsAhead } from "../../../src/sim/variants";

const root = resolve(import.meta.dirname, "../../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");
/** One end-to-end run's JSON, and the default policy's row of it. */
const runOf = (path: string) => JSON.parse(read(path)) as E2eOpenAiRun;
const defaultOf = (r: E2eOpenAiRun) =>
  r.policies.find((p) => p.id === DEFAULT_POLICY_ID) as E2eOpenAiRun["policies"][number];

/** Two default-only end-to-end runs on the same seeds, both tabled in docs/benchmarks.md: their default rows. */
function defaultRowsOfAb(bench: string, beforePath: string, afterPath: string) {
  const [before, after] = [runOf(beforePath), runOf(afterPath)];
  expectBenchmarkRows(bench, before);
  expectBenchmarkRows(bench, after);
  expect(before.seeds).toEqual(after.seeds);
  return [defaultOf(before), defaultOf(after)] as const;
}
const json = JSON.parse(read("docs/evaluation.json")) as {
  seedsPerScenario: number;
  defaultPolicy: string;
  scenarios: ScenarioResult[];
  targets: TargetCheck[];
  sweeps: SweepPoint[];
  variants: VariantSummary[];
  e2e: E2eResult[];
  e2eOpenAi: E2eOpenAiRun | null;
  e2eOpenAiAgain: E2eOpenAiRun | null;
  e2eOpenAiHeld: E2eOpenAiRun | null;
  e2eOpenAiDefaultLater: E2eOpenAiRun | null;
  heldOut: HeldOutRun | null;
  arrivals: ArrivalCurves[] | null;
};

const WORDS = [
  "none",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
];
/** How many scenarios `own` meets a target in beside `base`, in words: "two fewer", "as many", "one more". */
const moreOrFewer = (own: number, base: number) =>
  own === base ? "as many" : `${WORDS[Math.abs(own - base)]} ${own > base ? "more" : "fewer"}`;

/** A variant's summaries beside the default's, on the tuning seeds and on the held-out seeds. */
function besideDefault(id: string): Record<"def" | "own" | "heldDef" | "heldOwn", VariantSummary | undefined> {
  const held = (json.heldOut as HeldOutRun).variants;
  const of = (list: readonly VariantSummary[]) => list.find((v) => v.id === id);
  return { def: json.variants[0], own: of(json.variants), heldDef: held[0], heldOwn: of(held) };
}

/** The scenarios where the default leaves more of the fleet idle while clients wait than every other policy. */
function scenariosWhereDefaultIdlesMost(): ScenarioResult[] {
  const idle = (s: ScenarioResult, id: string) =>
    s.policies.find((p) => p.id === id)?.metrics.idleWhileWaitingFraction ?? Number.NaN;
  return json.scenarios.filter((s) =>
    s.policies.every((p) => p.id === DEFAULT_POLICY_ID || idle(s, p.id) < idle(s, DEFAULT_POLICY_ID)),
  );
}

describe("docs/evaluation.json (written by npm run eval)", () => {
  it("names the config's default policy as defaultPolicy, overall and per scenario", () => {
    const config = parseConfig({ deployments: { m: { replicas: ["http://127.0.0.1:1"] } } });
    expect(DEFAULT_POLICY_ID).toBe(config.deployments.m?.backpressure.retryAfterPolicy);
    expect(json.defaultPolicy).toBe(DEFAULT_POLICY_ID);
    for (const s of json.scenarios) expect(s.defaultPolicy).toBe(DEFAULT_POLICY_ID);
  });

  it("records per scenario the client mix, round-trip model and oracle; per policy the headline measures", () => {
    for (const s of json.scenarios) {
      expect(Object.keys(s.clients.mix).length).toBeGreaterThan(0);
      expect(["zero", "lognormal"]).toContain(s.clients.roundTrip.kind);
      expect(s.oracle.servedFraction).toBeGreaterThan(0);
      for (const p of s.policies) {
        expect(p.servedFraction).toBeGreaterThanOrEqual(0);
        expect(p.attemptsPerOffered).toBeGreaterThanOrEqual(1);
        expect(p.hintCoverage === null || (p.hintCoverage >= 0 && p.hintCoverage <= 1)).toBe(true);
        expect(Object.keys(p.servedWithinS)).toEqual(COMPLETION_HORIZONS_S.map(String));
      }
    }
  });

  it("records each scenario's clairvoyant curve bound against the best other policy at each horizon", () => {
    for (const s of json.scenarios) {
      const bound = s.curveBound;
      expect(bound, s.name).toBeDefined();
      if (!bound) continue;
      expect(bound.target).toEqual(bestOtherCurve(s));
      // No schedule of the relaxation falls below the envelope by more than it must: the margin is a share.
      expect(bound.margin).toBeGreaterThan(-1);
      expect(bound.margin).toBeLessThanOrEqual(1 - (bound.target["120"] ?? 0) + 1e-6);
      for (const h of COMPLETION_HORIZONS_S)
        expect(bound.curve[String(h)] ?? 0).toBeGreaterThanOrEqual(
          (bound.target[String(h)] ?? 0) + bound.margin - 1e-6,
        );
    }
  });

  it("backs docs/retry-policy.md's claim: with foresight the curve target is reachable in every scenario, by a few points at most", () => {
    expect(read("docs/retry-policy.md")).toContain(
      "it finds the curve target reachable with foresight in every scenario",
    );
    for (const s of json.scenarios) {
      expect(s.curveBound?.margin ?? -1, s.name).toBeGreaterThanOrEqual(-0.02);
      expect(s.curveBound?.margin ?? 1, s.name).toBeLessThan(0.05);
    }
  });

  it("backs docs/retry-policy.md's claims on the delay target, the standing interval and demotion", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    const sustained = json.scenarios.find((s) => s.name === "sustained-1.3x") as ScenarioResult;
    const bestOther = (r: ScenarioResult) =>
      Math.max(...r.policies.filter((p) => p.id !== DEFAULT_POLICY_ID).map((p) => p.servedFraction));
    const variant = (id: string) => {
      const v = json.variants.find((x) => x.id === id) as VariantSummary;
      expect(v, id).toBeDefined();
      return {
        summary: v,
        p50: v.perScenario["sustained-1.3x"]?.timeToSuccessP50S ?? Number.NaN,
        sustainedServed: v.perScenario["sustained-1.3x"]?.servedFraction ?? Number.NaN,
      };
    };
    const def = variant("default");
    expect(def.p50).toBeLessThanOrEqual(5);
    // A variant whose row leaves larger summed worst curve gaps (and, where said, meets attempts in fewer scenarios).
    const costsCurve = (id: string, fewerAttempts: boolean) => {
      const v = variant(id).summary;
      expect(v.worstCurveGapSumPts, id).toBeLessThan(def.summary.worstCurveGapSumPts);
      if (fewerAttempts) expect(v.met.attempts, id).toBeLessThan(def.summary.met.attempts);
      return v;
    };
    // Shorter delay targets: more of the sustained overload served, not sooner (the default's adaptive LIFO);
    // larger summed worst gaps.
    expect(doc).toContain(
      "Each shorter target (0.5, 0.6 and 0.7 s) serves more of the sustained overload and leaves larger summed worst curve gaps than the default's 1 s; since adaptive LIFO (below) none serves it sooner: the default's p50 is the shortest of the four. Without a target the sustained overload's p50 is about three times the 5 s wanted.",
    );
    for (const id of ["delay-target-0.5s", "delay-target-0.6s", "delay-target-0.7s"]) {
      expect(variant(id).p50, id).toBeGreaterThan(def.p50);
      expect(variant(id).sustainedServed, id).toBeGreaterThan(def.sustainedServed);
      costsCurve(id, false);
    }
    // "About three times": within a second of 15 s.
    expect(Math.abs(variant("no-delay-target").p50 - 15)).toBeLessThan(1);
    // Shorter standing intervals: larger summed gaps, attempts met in fewer scenarios.
    expect(doc).toContain(
      "Both shorter intervals leave larger summed worst curve gaps and meet the attempts target in fewer scenarios (on the held-out seeds too).",
    );
    const heldOut = (json.heldOut as HeldOutRun).variants;
    const heldAttempts = (id: string) => heldOut.find((v) => v.id === id)?.met.attempts ?? Number.NaN;
    for (const id of ["standing-10s", "standing-20s"]) {
      costsCurve(id, true);
      expect(heldAttempts(id), id).toBeLessThan(heldAttempts("default"));
    }
    // Demotion: less than half the summed gaps, p50 under 5 s; a lower sustained served share (still above every
    // other policy's); the oracle met in as many scenarios.
    // The oracle: one scenario fewer on both seed sets before the drain-rate fix of 2026-12-06 (cc237ee); from it
    // until demoted requests waited up to 40 s (2026-12-07), three fewer on the tuning seeds and two on the held-out
    // ones; then one fewer on both; as many on both since the longer best effort in recurring overloads.
    const off = variant("no-demotion");
    const heldOracle = (id: string) => heldOut.find((v) => v.id === id)?.met.oracle ?? Number.NaN;
    expect(def.summary.met.oracle).toBe(off.summary.met.oracle);
    expect(heldOracle("default")).toBe(heldOracle("no-demotion"));
    expect(doc).toContain(
      "demotion more than halves the summed worst curve gaps and brings the sustained overload's p50 under 5 s, and pays in the final served share - under sustained overload it is lower (the requests demoted while it lasts are partly lost), still above every other policy's, and the oracle target is met in as many scenarios as without it on both seed sets since the longer best effort in recurring overloads (2026-12-07; one fewer on both before it, three and two fewer from the drain-rate fix of 2026-12-06, cc237ee, until demoted requests waited up to 40 s, 2026-12-07, and one fewer on both before that fix).",
    );
    expect(off.p50).toBeGreaterThan(5);
    expect(def.summary.worstCurveGapSumPts).toBeGreaterThan(off.summary.worstCurveGapSumPts / 2);
    expect(def.sustainedServed).toBeLessThan(off.sustainedServed);
    expect(def.sustainedServed).toBeGreaterThan(bestOther(sustained));
    const laterHeld =
      (heldOut.find((v) => v.id === "default")?.worstCurveGapSumPts ?? Number.NaN) -
      (heldOut.find((v) => v.id === "demote-after-30s")?.worstCurveGapSumPts ?? Number.NaN);
    expect(laterHeld).toBeGreaterThan(0);
    expect(doc).toContain(
      `demoting after 30 s (row \`demote-after-30s\`) leaves larger summed worst curve gaps on both seed sets (on the held-out seeds by ${laterHeld.toFixed(1)} points).`,
    );
    costsCurve("demote-after-30s", false);
    // Adaptive LIFO among the demoted, and no target while the queue drains: each one's row without it.
    // The next horizon among the demoted: adaptive LIFO (the order before it) and arrival order (before that) each
    // leave larger summed worst curve gaps; their rows are quoted from the data.
    expect(doc).toContain("Adaptive LIFO scored beside it, its row meets");
    expect(doc).toContain("Arrival order scored beside it, its row meets");
    costsCurve("newest-first-order", false);
    const fifo = costsCurve("demoted-fifo", false);
    for (const k of ["curve", "served"] as const) expect(fifo.met[k], k).toBeLessThanOrEqual(def.summary.met[k]);
    // The oracle: in no more scenarios before the drain-rate fix of 2026-12-06 (cc237ee), in one more on both seed sets
    // from it until demoted requests waited up to 40 s (2026-12-07), then in one fewer on the tuning seeds and as many
    // held out, and in one fewer on both since the longer best effort in recurring overloads; its summed gaps larger
    // on both, by the figures quoted.
    const heldFifo = heldOut.find((v) => v.id === "demoted-fifo") as VariantSummary;
    const heldDefault = heldOut.find((v) => v.id === "default") as VariantSummary;
    expect(fifo.met.oracle).toBe(def.summary.met.oracle - 1);
    expect(heldFifo.met.oracle).toBe(heldDefault.met.oracle - 1);
    expect(doc).toContain(
      `Arrival order meets the oracle target in one fewer scenario than the default on both seed sets since the longer best effort in recurring overloads (one fewer on the tuning seeds and as many on the held-out ones before it, in no more before the drain-rate fix of 2026-12-06, cc237ee, and in one more on both from it until demoted requests waited up to 40 s, 2026-12-07), and leaves summed worst curve gaps larger by ${(def.summary.worstCurveGapSumPts - fifo.worstCurveGapSumPts).toFixed(1)} points on the tuning seeds and ${(heldDefault.worstCurveGapSumPts - heldFifo.worstCurveGapSumPts).toFixed(1)} on the held-out ones.`,
    );
    expect(heldFifo.worstCurveGapSumPts).toBeLessThan(heldDefault.worstCurveGapSumPts);
    expect(doc).toContain(
      "Its row shows what the target costs while the queue drains: larger summed worst curve gaps and the attempts target met in fewer scenarios, on both seed sets.",
    );
    costsCurve("target-while-draining", true);
    const heldById = new Map((json.heldOut as HeldOutRun).variants.map((v) => [v.id, v]));
    expect(heldById.get("target-while-draining")?.met.attempts).toBeLessThan(
      heldById.get("default")?.met.attempts ?? 0,
    );
    // Last chance (not demoted): more served under sustained overload, with more attempts and a longer wait there;
    // larger summed gaps; the oracle target everywhere on both sets, the attempts target in fewer, p50 past 5 s.
    expect(doc).toContain(
      "Its row: more requests served under sustained overload, with more attempts per request and a longer wait there, and larger summed worst curve gaps (the last attempts go ahead of first attempts, which then wait or are refused).",
    );
    expect(doc).toContain(
      "its row meets the oracle target in every scenario on both seed sets, where the default misses it in a few: an online router can come within 5 points of the oracle's final served share everywhere. What it costs is the rest of the issue's targets: it meets the attempts target in fewer scenarios than the default on both seed sets (on the held-out ones in as many while demoted requests waited up to 60 s while no one was turned away), and",
    );
    const lastChance = variant("last-chance");
    expect(lastChance.sustainedServed).toBeGreaterThan(def.sustainedServed);
    const sustainedAttempts = (v: VariantSummary) => v.perScenario["sustained-1.3x"]?.attemptsPerOffered ?? Number.NaN;
    expect(sustainedAttempts(lastChance.summary)).toBeGreaterThan(sustainedAttempts(def.summary));
    expect(lastChance.summary.met.oracle).toBe(lastChance.summary.scenarios);
    expect(def.summary.met.oracle).toBeLessThan(def.summary.scenarios);
    costsCurve("last-chance", false);
    expect(lastChance.summary.met.attempts).toBeLessThan(def.summary.met.attempts);
    expect(lastChance.p50).toBeGreaterThan(5);
    // README's row for the option: a longer wait under sustained overload too.
    expect(read("README.md").replace(/\s+/g, " ")).toContain(
      "more requests served under sustained overload, but larger curve gaps (first attempts wait behind last ones), more attempts per request and a longer wait (docs/retry-policy.md, variant `last-chance`)",
    );
    expect(lastChance.p50).toBeGreaterThan(def.p50);
    const held = new Map((json.heldOut as HeldOutRun).variants.map((v) => [v.id, v]));
    expect(held.get("last-chance")?.met.oracle).toBe(held.get("last-chance")?.scenarios);
    // In as many as the default on the held-out seeds from the 60 s quiet wait until the 120 s one; in fewer since.
    expect(held.get("last-chance")?.met.attempts).toBeLessThan(held.get("default")?.met.attempts ?? 0);
    expect(held.get("last-chance")?.perScenario["sustained-1.3x"]?.timeToSuccessP50S).toBeGreaterThan(5);
  });

  it("backs docs/retry-policy.md's account of two-step promises: within a point on both sets, nothing to choose it on", () => {
    const held = (json.heldOut as HeldOutRun).variants;
    const [def, twoStep] = [json.variants[0], json.variants.find((v) => v.id === "two-step")] as VariantSummary[];
    const [heldDef, heldTwoStep] = [held[0], held.find((v) => v.id === "two-step")] as VariantSummary[];
    const met = (own: VariantSummary | undefined, base: VariantSummary | undefined, k: "attempts" | "oracle") =>
      moreOrFewer(own?.met[k] ?? Number.NaN, base?.met[k] ?? Number.NaN);
    const lead = (own?: VariantSummary, base?: VariantSummary) =>
      (own?.worstCurveGapSumPts ?? Number.NaN) - (base?.worstCurveGapSumPts ?? Number.NaN);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `Its row's summed worst curve gaps are smaller than the default's by ${lead(twoStep, def).toFixed(1)} points on the tuning seeds and by ${lead(heldTwoStep, heldDef).toFixed(1)} points on the held-out ones, and it meets the attempts target in ${met(twoStep, def, "attempts")} scenarios on the tuning seeds and ${met(heldTwoStep, heldDef, "attempts")} on the held-out ones, and the oracle target in ${met(twoStep, def, "oracle")} on the tuning seeds and ${met(heldTwoStep, heldDef, "oracle")} on the held-out ones: nothing to choose it on.`,
    );
    // Smaller by about a point on both sets since demoted requests wait up to 60 s while no one is turned away (on the
    // tuning seeds by less than one before; held out larger by less than one before the 40 s wait).
    expect(lead(twoStep, def)).toBeGreaterThan(0);
    expect(lead(twoStep, def)).toBeLessThan(1.5);
    expect(lead(heldTwoStep, heldDef)).toBeGreaterThan(0);
    expect(lead(heldTwoStep, heldDef)).toBeLessThan(1.5);
    // The attempts target: as many on both sets since the quiet wait (one fewer held out before it).
    expect(twoStep?.met.attempts).toBe(def?.met.attempts);
    expect(heldTwoStep?.met.attempts).toBe(heldDef?.met.attempts);
    // The oracle: one fewer on the tuning seeds and as many on the held-out ones before the drain-rate fix of
    // 2026-12-06 (cc237ee); as many and one more from it until demoted requests waited up to 40 s; two fewer and as
    // many until the quiet wait; one fewer and as many until the longer best effort in recurring overloads; one
    // fewer on both since. Fewer where it meets attempts in as many: nothing won.
    expect(twoStep?.met.oracle).toBe((def?.met.oracle ?? 0) - 1);
    expect(heldTwoStep?.met.oracle).toBe((heldDef?.met.oracle ?? 0) - 1);
  });

  it("backs docs/retry-policy.md's account of refusals remembered until the request is placed", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    // What it gained when it became the default (2026-12-05), kept as history; what it has since the drain-rate fix
    // of 2026-12-06 (cc237ee), from the data.
    expect(doc).toContain(
      "So until the drain-rate fix of 2026-12-06 (cc237ee) the default gained smaller summed worst curve gaps, a shorter p50 and shorter mean waits on both seed sets and the oracle target in one more scenario on the tuning seeds (with the floor's moving means, below;",
    );
    const held = (json.heldOut as HeldOutRun).variants;
    const pair = (list: readonly VariantSummary[]) =>
      [list[0], list.find((v) => v.id === "forget-when-queued")] as [VariantSummary, VariantSummary];
    // The summed gaps: smaller on both seed sets (on the tuning seeds larger by less than 0.1 from the quiet wait until
    // the longer best effort in recurring overloads).
    const [tunedPair, heldPair] = [pair(json.variants), pair(held)];
    for (const [def, old] of [tunedPair, heldPair]) {
      expect(def.worstCurveGapSumPts).toBeGreaterThan(old.worstCurveGapSumPts);
      expect(def.meanWaitSumS).toBeLessThan(old.meanWaitSumS);
      const p50 = (v: VariantSummary) => v.perScenario["sustained-1.3x"]?.timeToSuccessP50S ?? Number.NaN;
      expect(Math.abs(p50(def) - p50(old))).toBeLessThan(0.02);
    }
    const [def, old] = pair(json.variants);
    const [heldDef, heldOld] = pair(held);
    expect(doc).toContain(
      `With that fix it keeps the shorter mean waits and the smaller summed gaps on both seed sets (on the tuning seeds the row's were smaller by less than 0.1 points from the quiet wait until the longer best effort in recurring overloads, both 2026-12-07), its sustained overload's p50 is the row's to within 0.02 s on both, and it meets the oracle target in ${moreOrFewer(def.met.oracle, old.met.oracle)} ${def.met.oracle - old.met.oracle === 1 ? "scenario" : "scenarios"} on the tuning seeds and ${moreOrFewer(heldDef.met.oracle, heldOld.met.oracle)} on the held-out ones (two fewer and one fewer until demoted requests waited up to 40 s, 2026-12-07; as many on both until the longer best effort);`,
    );
    // The twin does not tell them apart: the same figures from a cold router and after a quiet spell.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    for (const { id } of E2E_TWINS) {
      const [a, b] = [DEFAULT_POLICY_ID, `${DEFAULT_POLICY_ID}:forget-when-queued`].map((p) =>
        twinTargets(twin, id, p, DEFAULT_POLICY_ID),
      );
      expect(b?.attemptsPerOffered, id).toBeCloseTo(a?.attemptsPerOffered ?? Number.NaN, 2);
      expect(b?.met, id).toEqual(a?.met);
    }
  });

  it("backs docs/retry-policy.md's bullet on the floor's moving means: fewer attempts in the twin after a quiet spell, noise elsewhere", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    const [without, withIt] = movingFloorRuns();
    expect(doc).toContain(
      `the default alone on runs 15 and 16's seeds made ${withIt.attemptsPerOffered.toFixed(3)} attempts per offered request with it against ${without.attemptsPerOffered.toFixed(3)} without it, and met every end-to-end target`,
    );
    // The twin replaying the end-to-end run's arrivals: after a quiet spell the moving means save attempts.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    const [quiet, quietOld, cold, coldOld] = [
      twinTargets(twin, "after-quiet", DEFAULT_POLICY_ID, DEFAULT_POLICY_ID),
      twinTargets(twin, "after-quiet", `${DEFAULT_POLICY_ID}:fast-floor-only`, DEFAULT_POLICY_ID),
      twinTargets(twin, "cold", DEFAULT_POLICY_ID, DEFAULT_POLICY_ID),
      twinTargets(twin, "cold", `${DEFAULT_POLICY_ID}:fast-floor-only`, DEFAULT_POLICY_ID),
    ];
    // Fewer by 0.028 before the drain-rate fix of 2026-12-06 (cc237ee), by 0.018 since (both figures are quoted).
    expect(quiet?.attemptsPerOffered ?? Number.NaN).toBeLessThan((quietOld?.attemptsPerOffered ?? 0) - 0.01);
    expect(cold?.attemptsPerOffered ?? Number.NaN).toBeLessThanOrEqual(coldOld?.attemptsPerOffered ?? 0);
    expect(quiet?.met).toEqual({ served: true, curve: true, attempts: true });
    expect(cold?.met).toEqual({ served: true, curve: true, attempts: true });
    // The simulator's scenarios: within the seeds' noise on the tuning, held-out and ten held-out seeds, the most it
    // moves the sum a small part of what the default's own sum moves between the tuning and held-out seeds.
    const gapSum = (list: readonly VariantSummary[], id: string) =>
      list.find((v) => v.id === id)?.worstCurveGapSumPts ?? Number.NaN;
    const ten = (JSON.parse(read("docs/held-out-seeds.json")) as HeldSeedsRun).summaries;
    const heldList = (json.heldOut as HeldOutRun).variants;
    const most = Math.max(
      ...[json.variants, heldList, ten].map((list) =>
        Math.abs(gapSum(list, "default") - gapSum(list, "fast-floor-only")),
      ),
    );
    const moves = Math.abs(gapSum(json.variants, "default") - gapSum(heldList, "default"));
    expect(most).toBeLessThan(1);
    expect(most).toBeLessThan(moves / 4);
    expect(doc).toContain(
      `So in the simulator's scenarios the change is within the seeds' noise, at most ${most.toFixed(1)} points either way on the summed gaps of the three seed sets, where the default's own sum moves by ${moves.toFixed(1)} points between the tuning and held-out seeds; it is made for the end-to-end run,`,
    );
  });

  it("backs docs/retry-policy.md's comparison with the previous default", () => {
    const def = json.variants[0] as VariantSummary;
    const previous = json.variants.find((v) => v.id === "previous-default") as VariantSummary;
    const held = (json.heldOut as HeldOutRun).variants;
    const [heldDef, heldPrevious] = [held[0], held.find((v) => v.id === "previous-default")] as [
      VariantSummary,
      VariantSummary,
    ];
    expect(def.worstCurveGapSumPts).toBeGreaterThan(previous.worstCurveGapSumPts);
    expect(def.met.attempts).toBeGreaterThan(previous.met.attempts);
    expect(heldDef.met.attempts).toBeGreaterThan(heldPrevious.met.attempts);
    // The oracle: one more on each seed set before the drain-rate fix of 2026-12-06 (cc237ee); since, quoted.
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `Against it the default has smaller summed worst curve gaps, and meets the attempts target in more scenarios on both seed sets, and the oracle target in ${moreOrFewer(def.met.oracle, previous.met.oracle)} on the tuning seeds and ${moreOrFewer(heldDef.met.oracle, heldPrevious.met.oracle)} on the held-out ones (one more on each before the drain-rate fix of 2026-12-06, cc237ee; one fewer and as many from it until demoted requests waited up to 40 s, 2026-12-07; as many on both from then until the longer best effort in recurring overloads, the same day).`,
    );
  });

  it("backs docs/retry-policy.md's claim on header-less clients: within 5 points of the SDK clients, the widest gap quoted", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    const gaps = json.scenarios.map((s) => {
      const by = s.policies.find((p) => p.id === DEFAULT_POLICY_ID)?.metrics.byClient ?? {};
      const sdk = ["openai_node", "openai_python", "legacy_sdk"].filter((k) => by[k] !== undefined);
      const share = (styles: string[]) =>
        styles.reduce((a, k) => a + (by[k]?.served ?? 0), 0) / styles.reduce((a, k) => a + (by[k]?.requests ?? 0), 0);
      return { name: s.name, gap: by.headerless_hints ? share(sdk) - share(["headerless_hints"]) : Number.NaN };
    });
    const measured = gaps.filter((g) => !Number.isNaN(g.gap));
    expect(measured.length).toBeGreaterThan(8);
    const met = measured.filter((g) => g.gap <= 0.05).length;
    const where = met === measured.length ? "every scenario" : `${met} of ${measured.length} scenarios`;
    const widest = measured.reduce((a, b) => (b.gap > a.gap ? b : a));
    expect(doc).toContain(
      `Header-less clients are served within 5 points of the SDK clients pooled in ${where} on the tuning seeds; the gap is widest in \`${widest.name}\`, ${(100 * widest.gap).toFixed(1)} points`,
    );
    // The sustained overload's gap on both seed sets (the held-out one from the held-out run's own record).
    const sustained = measured.find((g) => g.name === "sustained-1.3x");
    const heldSustained = (json.heldOut as HeldOutRun).scenarios.find(
      (s) => s.name === "sustained-1.3x",
    )?.headerClients;
    expect(doc).toContain(
      `In the sustained overload the gap is ${(100 * (sustained?.gap ?? Number.NaN)).toFixed(1)} points on the tuning seeds and ${(100 * ((heldSustained?.sdk ?? 0) - (heldSustained?.headerless ?? 0))).toFixed(1)} on the held-out seeds (below 0: ahead of the SDK clients).`,
    );
  });

  it("its target checks are those of its own results", () => {
    expect(json.targets).toEqual(json.scenarios.map(checkTargets));
  });

  it("backs the README's and docs/retry-after-default.md's end-to-end claims: today's default meets every target in runs 30 and 31, as each default before it did", () => {
    const readme = read("README.md").replace(/\s+/g, " ");
    const doc = read(RETRY_AFTER_DOC).replace(/\s+/g, " ");
    const [run17, run30, run31] = [RUN_17, RUN_30_QUIET_120, RUN_31_QUIET_120_AGAIN].map(runOf) as [
      E2eOpenAiRun,
      E2eOpenAiRun,
      E2eOpenAiRun,
    ];
    const attempts = (run: E2eOpenAiRun) => defaultOf(run).attemptsPerOffered.toFixed(3);
    const checks = [run30, run31].map((run) =>
      checkE2eTargets([...laterRunReferences(), defaultOf(run) as E2eOpenAiPolicy], DEFAULT_POLICY_ID),
    );
    for (const [i, run] of [run30, run31].entries()) {
      // Run alone on run 17's seeds, held to the latest run of each other policy on them.
      expect(run.seeds).toEqual(run17.seeds);
      expect(run.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
      expect(checks[i]?.met).toEqual({ served: true, curve: true, attempts: true });
    }
    // Today's default is run 30's and run 31's: the 120 s quiet wait.
    expect(DEFAULT_BOOKING_ADMISSION.demotedQuietTimeoutS).toBe(120);
    const gaps = checks.map((c) => `${(100 * (c?.worst.gap ?? 0)).toFixed(1)} points at ${c?.worst.horizonS} s`);
    // Run 32: today's default on the held-out seeds, held to static 30 s of the held-out run and run 33's others.
    const run32 = runOf(RUN_32_HELD_DEFAULT);
    const check32 = checkE2eTargets([...heldRunReferences(), defaultOf(run32) as E2eOpenAiPolicy], DEFAULT_POLICY_ID);
    expect(check32?.met).toEqual({ served: true, curve: true, attempts: true });
    const held32 = `${(100 * (check32?.worst.gap ?? 0)).toFixed(1)} points at ${check32?.worst.horizonS} s`;
    expect(gaps[0]).toBe(gaps[1]);
    expect(readme).toContain(
      `today's default meets issue 15's three end-to-end targets (at least 99% served; within 2 points of the best of \`router_queue_drain_rate\`, \`retry_schedule\` and static 30 s at 5 to 60 s; at most 1.5 attempts per offered request) in runs 30 and 31, with ${attempts(run30)} and ${attempts(run31)} attempts per offered request, and on six arrival seeds that no tuning used (run 32: ${attempts(run32)};`,
    );
    expect(doc).toContain(
      `does so in runs 30 and 31, run alone on run 17's seeds and held to the latest run of each other policy on them (worst gap ${gaps[0]} in both; ${attempts(run30)} and ${attempts(run31)} attempts per offered request; [benchmarks.md](benchmarks.md), "Run 30" and "Run 31"), and on six arrival seeds that no tuning used, held to the latest run of each other policy there (run 32: worst gap ${held32}, ${attempts(run32)} attempts per offered request; "Runs 32 and 33")`,
    );
    // "as each default before it did, beside every policy in runs 13 to 18 and on six arrival seeds that no tuning
    // used, and alone in runs 19, 20, 22, 23 and 27 to 29"
    expect(doc).toContain(
      "as each default before it did, beside every policy in runs 13 to 18 and on six arrival seeds that no tuning used, and alone in runs 19, 20, 22, 23 and 27 to 29",
    );
    for (const path of [RUN_13, RUN_14, RUN_15, RUN_16, RUN_17, RUN_18, RUN_HELD, RUN_HELD_2])
      expect(checkE2eTargets(runOf(path).policies, DEFAULT_POLICY_ID)?.met, path).toEqual({
        served: true,
        curve: true,
        attempts: true,
      });
    const held = runOf(RUN_HELD_2);
    for (const seed of held.seeds ?? []) expect(run17.seeds).not.toContain(seed);
    // Run 19 is held to run 17's other policies; the later ones to the latest run of each on the same seeds.
    const against17 = [...run17.policies.filter((p) => p.id !== DEFAULT_POLICY_ID), defaultOf(runOf(RUN_19_DEFAULT))];
    expect(checkE2eTargets(against17, DEFAULT_POLICY_ID)?.met).toEqual({ served: true, curve: true, attempts: true });
    const run20 = runOf(RUN_20_DEFAULT);
    const against20 = [
      ...run17.policies.filter((p) => p.id === "static-30" || p.id === "router_queue_drain_rate"),
      ...run20.policies,
    ];
    expect(checkE2eTargets(against20, DEFAULT_POLICY_ID)?.met).toEqual({ served: true, curve: true, attempts: true });
    for (const path of [
      RUN_22_DEFAULT,
      RUN_23_DEFAULT,
      RUN_27_DEMOTED_WAIT,
      RUN_28_QUIET_WAIT,
      RUN_29_RECURRING_BEST_EFFORT,
    ])
      expect(
        checkE2eTargets([...laterRunReferences(), defaultOf(runOf(path)) as E2eOpenAiPolicy], DEFAULT_POLICY_ID)?.met,
        path,
      ).toEqual({ served: true, curve: true, attempts: true });
  });

  it("backs docs/benchmarks.md's run 19: the default alone on today's code, held to run 17's other policies", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run17, run18, run19] = [RUN_17, RUN_18, RUN_19_DEFAULT].map(runOf) as [
      E2eOpenAiRun,
      E2eOpenAiRun,
      E2eOpenAiRun,
    ];
    expectBenchmarkRows(bench, run19);
    expect(flat).toContain(
      `--out docs/evaluation-e2e-openai-run19.json\` (commit \`${run19.commit}\`, run 17's six seeds`,
    );
    const moved = (run: E2eOpenAiRun) =>
      Math.max(
        ...[5, 15, 30, 60].map((h) =>
          Math.abs((defaultOf(run19).servedWithinS[String(h)] ?? 0) - (defaultOf(run).servedWithinS[String(h)] ?? 0)),
        ),
      );
    expect(flat).toContain(
      `From run 17 (and from run 18) the default's completion curve moved by at most ${(100 * Math.max(moved(run17), moved(run18))).toFixed(1)} points`,
    );
    const broken = (run: E2eOpenAiRun) => {
      const l = defaultOf(run).ledger as PromiseOutcomes;
      return { pct: ((100 * l.broken) / (l.broken + l.kept + l.noShow)).toFixed(1), l };
    };
    const own = broken(run19);
    expect(flat).toContain(
      `its router broke ${own.pct}% (${own.l.broken} of ${own.l.made}) of its promises, against ${broken(run17).pct}% and ${broken(run18).pct}% in runs 17 and 18, and ${defaultOf(run19).requestsByAttempts?.["3"]} requests took a third attempt`,
    );
    const against17 = [...run17.policies.filter((p) => p.id !== DEFAULT_POLICY_ID), defaultOf(run19)];
    const worst = checkE2eTargets(against17, DEFAULT_POLICY_ID)?.worst;
    expect(flat).toContain(`(worst gap ${(100 * (worst?.gap ?? 0)).toFixed(1)} at ${worst?.horizonS} s)`);
    // Seed by seed against run 17's other policies on the same seed; runs 17 and 18 against their own.
    const seedGaps = (run: E2eOpenAiRun, others: E2eOpenAiRun) =>
      seedsOf(run).map((s) => {
        const rest = seedsOf(others).find((o) => o.seed === s.seed)?.policies ?? [];
        const policies = [
          ...rest.filter((p) => p.id !== DEFAULT_POLICY_ID),
          ...s.policies.filter((p) => p.id === DEFAULT_POLICY_ID),
        ];
        return { seed: s.seed, gap: checkE2eTargets(policies, DEFAULT_POLICY_ID)?.worst.gap ?? 0 };
      });
    const past2 = seedGaps(run19, run17).filter((g) => g.gap < -0.02);
    expect(past2.map((g) => g.seed)).toEqual([2028]);
    const in2028 = (run: E2eOpenAiRun) =>
      (100 * (seedGaps(run, run).find((g) => g.seed === 2028)?.gap ?? Number.NaN)).toFixed(1);
    expect(flat).toContain(
      `seed 2028 alone is past 2 points behind (${(100 * (past2[0]?.gap ?? 0)).toFixed(1)} at 15 s), as it was in run 17 (${in2028(run17)}; ${in2028(run18)} in run 18)`,
    );
  });

  it("backs docs/benchmarks.md's run 20: the default and retry_schedule on today's code, held to run 17's other two", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run17, run18, run19, run20, run20Rs] = [RUN_17, RUN_18, RUN_19_DEFAULT, RUN_20_DEFAULT, RUN_20_RS].map(
      runOf,
    ) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    // Both on run 17's seeds, each policy alone, with the same later code.
    for (const run of [run20, run20Rs]) expect(run.seeds).toEqual(run17.seeds);
    expect(run20.commit).toBe(run20Rs.commit);
    expect(run20.commit).not.toBe(run19.commit);
    expect(run20.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
    expect(run20Rs.policies.map((p) => p.id)).toEqual(["retry_schedule"]);
    expectBenchmarkRows(bench, run20);
    expectBenchmarkRows(bench, run20Rs);
    for (const run of [run20, run20Rs]) expect(flat).toContain(`\`${run.generatedBy}\``.replace(/\s+/g, " "));
    expect(flat).toContain(`with nothing else running (commit \`${run20.commit}\`)`);
    const policyOf = (run: E2eOpenAiRun, id: string) => run.policies.find((p) => p.id === id) as E2eOpenAiPolicy;
    const rs = (run: E2eOpenAiRun) => policyOf(run, "retry_schedule");
    const pct = (run: E2eOpenAiRun) => `${(100 * rs(run).servedFraction).toFixed(1)}%`;
    expect(flat).toContain(
      `\`retry_schedule\`'s completion curve moved by at most ${policyCurveMoved(rs(run20Rs), rs(run17))} points from run 17 and ${policyCurveMoved(rs(run20Rs), rs(run18))} from run 18 (${policyCurveMoved(rs(run17), rs(run18))} between runs 17 and 18, the same code), and it served ${pct(run20Rs)} against ${pct(run17)} and ${pct(run18)}`,
    );
    // "does not show beyond the run-to-run movement": no further from either run than they are from each other by more than 0.5.
    expect(Number(policyCurveMoved(rs(run20Rs), rs(run17)))).toBeLessThanOrEqual(
      Number(policyCurveMoved(rs(run17), rs(run18))) + 0.5,
    );
    expect(flat).toContain(
      `The default's curve moved by at most ${policyCurveMoved(defaultOf(run20), defaultOf(run17))} points from run 17 and ${policyCurveMoved(defaultOf(run20), defaultOf(run19))} from run 19.`,
    );
    const held = [
      ...run17.policies.filter((p) => p.id === "router_queue_drain_rate" || p.id === "static-30"),
      rs(run20Rs),
      defaultOf(run20),
    ];
    expect(held.map((p) => p.id).sort()).toEqual(
      [DEFAULT_POLICY_ID, "retry_schedule", "router_queue_drain_rate", "static-30"].sort(),
    );
    const check = checkE2eTargets(held, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    const d = defaultOf(run20);
    expect(flat).toContain(
      `the default meets every end-to-end target (worst gap ${(100 * (check?.worst.gap ?? 0)).toFixed(1)} at ${check?.worst.horizonS} s, ${d.attemptsPerOffered.toFixed(3)} attempts per offered request)`,
    );
    const l = d.ledger as PromiseOutcomes;
    expect(flat).toContain(
      `its router broke ${((100 * l.broken) / (l.broken + l.kept + l.noShow)).toFixed(1)}% (${l.broken} of ${l.made}) of its promises, and ${d.requestsByAttempts?.["3"]} requests took a third attempt. ${seedBySeedAttempts(d)}.`,
    );
  });

  it("backs docs/benchmarks.md's run 21: router_queue_drain_rate with the jitter off the floor", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run17, run18, run20, run20Rs, run21] = [RUN_17, RUN_18, RUN_20_DEFAULT, RUN_20_RS, RUN_21_RQDR].map(
      runOf,
    ) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    expect(run21.seeds).toEqual(run17.seeds);
    expect(run21.commit).not.toBe(run20.commit);
    expect(run21.policies.map((p) => p.id)).toEqual(["router_queue_drain_rate"]);
    expectBenchmarkRows(bench, run21);
    expect(flat).toContain(`\`${run21.generatedBy}\``.replace(/\s+/g, " "));
    expect(flat).toContain(`with nothing else running (commit \`${run21.commit}\`)`);
    const rqdr = (run: E2eOpenAiRun) => run.policies.find((p) => p.id === "router_queue_drain_rate") as E2eOpenAiPolicy;
    const pct = (run: E2eOpenAiRun) => `${(100 * rqdr(run).servedFraction).toFixed(1)}%`;
    expect(flat).toContain(
      `Its completion curve moved by at most ${policyCurveMoved(rqdr(run21), rqdr(run17))} points from run 17 and ${policyCurveMoved(rqdr(run21), rqdr(run18))} from run 18 (${policyCurveMoved(rqdr(run17), rqdr(run18))} between runs 17 and 18, the same code), and it served ${pct(run21)} against ${pct(run17)} and ${pct(run18)}`,
    );
    // "does not show beyond the run-to-run movement": no further from either run than they are from each other by more than 1.
    expect(Number(policyCurveMoved(rqdr(run21), rqdr(run18)))).toBeLessThanOrEqual(
      Number(policyCurveMoved(rqdr(run17), rqdr(run18))) + 1,
    );
    const held = [
      ...run17.policies.filter((p) => p.id === "static-30"),
      rqdr(run21),
      ...run20Rs.policies,
      defaultOf(run20),
    ];
    const check = checkE2eTargets(held, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    const gap = (100 * (check?.worst.gap ?? 0)).toFixed(1);
    expect(flat).toContain(
      `run 20's default meets every end-to-end target (worst gap ${gap} at ${check?.worst.horizonS} s, ${defaultOf(run20).attemptsPerOffered.toFixed(3)} attempts per offered request)`,
    );
  });

  it("backs docs/benchmarks.md's run 22: the default on today's code, held to runs 21, 20 and 17's other policies", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run17, run20, run21, run22] = [RUN_17, RUN_20_DEFAULT, RUN_21_RQDR, RUN_22_DEFAULT].map(runOf) as [
      E2eOpenAiRun,
      E2eOpenAiRun,
      E2eOpenAiRun,
      E2eOpenAiRun,
    ];
    expect(run22.seeds).toEqual(run17.seeds);
    expect(run22.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
    for (const earlier of [run17, run20, run21]) expect(run22.commit).not.toBe(earlier.commit);
    expectBenchmarkRows(bench, run22);
    expect(flat).toContain(`\`${run22.generatedBy}\``);
    expect(flat).toContain(`with nothing else running (commit \`${run22.commit}\`)`);
    const [d17, d20, d22] = [run17, run20, run22].map(defaultOf) as [E2eOpenAiPolicy, E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(flat).toContain(
      `The default's curve moved by at most ${policyCurveMoved(d22, d20)} points from run 20 and ${policyCurveMoved(d22, d17)} from run 17 (${policyCurveMoved(d17, d20)} between runs 17 and 20).`,
    );
    const held = [...laterRunReferences(), d22];
    expect(held.map((p) => p.id).sort()).toEqual(
      [DEFAULT_POLICY_ID, "retry_schedule", "router_queue_drain_rate", "static-30"].sort(),
    );
    const check = checkE2eTargets(held, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    expect(flat).toContain(
      `run 22's default meets every end-to-end target (worst gap ${(100 * (check?.worst.gap ?? 0)).toFixed(1)} at ${check?.worst.horizonS} s, ${d22.attemptsPerOffered.toFixed(3)} attempts per offered request)`,
    );
    const l = d22.ledger as PromiseOutcomes;
    expect(flat).toContain(
      `its router broke ${((100 * l.broken) / (l.broken + l.kept + l.noShow)).toFixed(1)}% (${l.broken} of ${l.made}) of its promises, and ${d22.requestsByAttempts?.["3"]} requests took a third attempt. ${seedBySeedAttempts(d22)}.`,
    );
  });

  it("backs docs/benchmarks.md's run 23: the default with the drain-rate fix, held to runs 21, 20 and 17's other policies", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run17, run20, run21, run22, run23] = [
      RUN_17,
      RUN_20_DEFAULT,
      RUN_21_RQDR,
      RUN_22_DEFAULT,
      RUN_23_DEFAULT,
    ].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    expect(run23.seeds).toEqual(run17.seeds);
    expect(run23.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
    for (const earlier of [run17, run20, run21, run22]) expect(run23.commit).not.toBe(earlier.commit);
    expectBenchmarkRows(bench, run23);
    expect(flat).toContain(`\`${run23.generatedBy}\``);
    expect(flat).toContain(`with nothing else running (commit \`${run23.commit}\``);
    const [d17, d20, d22, d23] = [run17, run20, run22, run23].map(defaultOf) as [
      E2eOpenAiPolicy,
      E2eOpenAiPolicy,
      E2eOpenAiPolicy,
      E2eOpenAiPolicy,
    ];
    expect(flat).toContain(
      `The default's curve moved by at most ${policyCurveMoved(d23, d22)} points from run 22, the code before the fix (${policyCurveMoved(d22, d20)} between runs 20 and 22, ${policyCurveMoved(d17, d20)} between runs 17 and 20)`,
    );
    // "Fewer within 30 s and 60 s": the fix's cost, quoted beside run 22's shares.
    const share = (d: E2eOpenAiPolicy, h: number) => pct(d.servedWithinS[h]);
    for (const h of [30, 60]) expect(d23.servedWithinS[h] ?? 1).toBeLessThan((d22.servedWithinS[h] ?? 0) - 0.02);
    expect(flat).toContain(
      `it served fewer requests within 30 s (${share(d23, 30)} against ${share(d22, 30)}) and within 60 s (${share(d23, 60)} against ${share(d22, 60)})`,
    );
    const held = [...laterRunReferences(), d23];
    const fewerAt30 = (100 * ((d22.servedWithinS[30] ?? 0) - (d23.servedWithinS[30] ?? 0))).toFixed(1);
    const check = checkE2eTargets(held, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    expect(flat).toContain(
      `run 23's default meets every end-to-end target (worst gap ${(100 * (check?.worst.gap ?? 0)).toFixed(1)} at ${check?.worst.horizonS} s, ${d23.attemptsPerOffered.toFixed(3)} attempts per offered request)`,
    );
    const [l22, l23] = [d22.ledger, d23.ledger] as [PromiseOutcomes, PromiseOutcomes];
    expect(l23.broken / l23.made).toBeGreaterThan(l22.broken / l22.made);
    expect(flat).toContain(
      `its router broke ${brokenShare(l23)} (${l23.broken} of ${l23.made}) of its promises, where run 22's broke ${brokenShare(l22)}, and ${d23.requestsByAttempts?.["3"]} requests took a third attempt. ${seedBySeedAttempts(d23)}.`,
    );
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `only run 23, the default alone, was made with the fix: it met every end-to-end target, and served ${fewerAt30} points fewer within 30 s than run 22 before the fix)`,
    );
  });

  it("backs docs/benchmarks.md's run 26: the candidates combined as the default, beside run 23", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run23, run26] = [RUN_23_DEFAULT, RUN_26_CANDIDATES].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun];
    expect(run26.seeds).toEqual(run23.seeds);
    expect(run26.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
    expectBenchmarkRows(bench, run26);
    expect(flat).toContain(`\`${run26.generatedBy}\``);
    expect(flat).toContain(`with nothing else running (commit \`${run26.commit}\`)`);
    expect(flat).toContain(`commit \`${run26.commit}\` made the four the defaults for this run`);
    // The variant the run stands for is the one the simulator scores under that name.
    const combined = DEFAULT_POLICY_VARIANTS.find((v) => v.id === "candidates-combined");
    expect(combined?.spec.ledger).toEqual({ queueRefill: false, horizonPackS: 120 });
    expect(combined?.spec.booking).toEqual({ freshPastTargetShare: 1, demotedHeadroomSlots: 1 });
    const [d23, d26] = [run23, run26].map(defaultOf) as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    const others = laterRunReferences();
    const [check23, check26] = [d23, d26].map((d) => checkE2eTargets([...others, d], DEFAULT_POLICY_ID));
    expect(check26?.met).toEqual({ served: true, curve: true, attempts: true });
    expect(flat).toContain(
      `the combination meets every end-to-end target (worst gap ${(100 * (check26?.worst.gap ?? 0)).toFixed(1)} at ${check26?.worst.horizonS} s, ${d26.attemptsPerOffered.toFixed(3)} attempts per offered request)`,
    );
    const share = (d: E2eOpenAiPolicy, h: number) => pct(d.servedWithinS[h]);
    expect(d26.servedWithinS[15] ?? 0).toBeGreaterThan(d23.servedWithinS[15] ?? 1);
    for (const h of [30, 60]) expect(d26.servedWithinS[h] ?? 1).toBeLessThan(d23.servedWithinS[h] ?? 0);
    expect(flat).toContain(
      `it serves more within 15 s (${share(d26, 15)} against ${share(d23, 15)}) and fewer within 30 s (${share(d26, 30)} against ${share(d23, 30)}) and within 60 s (${share(d26, 60)} against ${share(d23, 60)})`,
    );
    // 15 s is where run 23 was furthest behind the others.
    expect(check23?.worst.horizonS).toBe(15);
    const [l23, l26] = [d23.ledger, d26.ledger] as [PromiseOutcomes, PromiseOutcomes];
    expect(d26.attemptsPerOffered).toBeGreaterThan(d23.attemptsPerOffered);
    expect(flat).toContain(
      `Its router broke ${brokenShare(l26)} (${l26.broken} of ${l26.made}) of its promises, where run 23's broke ${brokenShare(l23)}, and ${d26.requestsByAttempts?.["3"]} requests took a third attempt (run 23: ${d23.requestsByAttempts?.["3"]}). ${seedBySeedAttempts(d26)}.`,
    );
    const fewerAt60 = (100 * ((d23.servedWithinS[60] ?? 0) - (d26.servedWithinS[60] ?? 0))).toFixed(1);
    expect(read(RETRY_AFTER_DOC).replace(/\s+/g, " ")).toContain(
      `Four variants ahead of it in the simulator, made the default at once for one run, meet them as well, and serve ${fewerAt60} points fewer within 60 s than run 23 (run 26; "Run 26")`,
    );
  });

  it("backs docs/benchmarks.md's run 27: the default with the demoted wait, beside run 23", () => {
    // The run measured the default with the demoted wait: the commit's code has it.
    expect(routerSettingsSchema.parse({}).booking.demotedTimeoutS).toBe(40);
    const { before: d23, after: d27 } = expectDefaultRunBeside(
      { name: "run 23", file: RUN_23_DEFAULT },
      { name: "run 27", file: RUN_27_DEMOTED_WAIT },
      "demoted-timeout-off",
    );
    // "Within the run-to-run movement": less than runs 17 and 20's default moved between them (1.1 points, quoted
    // in run 22's section) plus a point.
    expect(Number(policyCurveMoved(d23, d27))).toBeLessThan(2);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      'End to end (`docs/benchmarks.md`, "Run 27") the default with it meets every end-to-end target, within the run-to-run movement of run 23 before it.',
    );
  });

  it("backs docs/benchmarks.md's run 28: the default with the quiet wait, beside run 27", () => {
    // The run measured the default of that day, a quiet wait of 60 s: the rule of row `demoted-quiet-60` (120 s since
    // run 30).
    const sixty = DEFAULT_POLICY_VARIANTS.find((v) => v.id === "demoted-quiet-60");
    expect(sixty?.spec.booking?.demotedQuietTimeoutS).toBe(60);
    const { before: d27, after: d28 } = expectDefaultRunBeside(
      { name: "run 27", file: RUN_27_DEMOTED_WAIT },
      { name: "run 28", file: RUN_28_QUIET_WAIT },
      "demoted-quiet-off",
    );
    // "Within the run-to-run movement (run 27 moved as far from run 23)": no more than run 27 moved from run 23.
    const d23 = defaultOf(runOf(RUN_23_DEFAULT) as E2eOpenAiRun) as E2eOpenAiPolicy;
    expect(Number(policyCurveMoved(d27, d28))).toBeLessThanOrEqual(Number(policyCurveMoved(d23, d27)));
    // "More broken promises and third attempts than run 27".
    const [l27, l28] = [d27.ledger, d28.ledger] as [PromiseOutcomes, PromiseOutcomes];
    expect(l28.broken / l28.made).toBeGreaterThan(l27.broken / l27.made);
    expect(d28.requestsByAttempts?.["3"] ?? 0).toBeGreaterThan(d27.requestsByAttempts?.["3"] ?? 0);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      'End to end (`docs/benchmarks.md`, "Run 28") the 60 s quiet wait met every end-to-end target, within the run-to-run movement of run 27 before it;',
    );
  });

  it("backs docs/benchmarks.md's run 29: the default with the longer best effort in recurring overloads, beside run 28", () => {
    // The run measured the default with the longer best effort: the commit's code has it.
    expect(DEFAULT_CAPACITY_BOOKING_OPTIONS.bestEffortRecurMinEndS).toBe(120);
    expect(DEFAULT_CAPACITY_BOOKING_OPTIONS.probeS).toBe(25);
    const { before: d28, after: d29 } = expectDefaultRunBeside(
      { name: "run 28", file: RUN_28_QUIET_WAIT },
      { name: "run 29", file: RUN_29_RECURRING_BEST_EFFORT },
      "recurring-best-effort-off",
    );
    // "The largest move is at 60 s, up, ... more than run 28 moved from run 27 (1.1 points) and less than runs 17 and
    // 20's default moved between them plus a point; at 5 and 15 s it moved by less than 0.1 points."
    const d27 = defaultOf(runOf(RUN_27_DEMOTED_WAIT) as E2eOpenAiRun) as E2eOpenAiPolicy;
    const moved = Number(policyCurveMoved(d28, d29));
    const flat = read("docs/benchmarks.md").replace(/\s+/g, " ");
    const at = (d: E2eOpenAiPolicy, h: number) => d.servedWithinS[h] ?? Number.NaN;
    expect(100 * (at(d29, 60) - at(d28, 60))).toBeCloseTo(moved, 1);
    for (const h of [5, 15]) expect(Math.abs(at(d29, h) - at(d28, h)), `${h} s`).toBeLessThan(0.001);
    expect(moved).toBeGreaterThan(Number(policyCurveMoved(d27, d28)));
    expect(moved).toBeLessThan(2);
    expect(flat).toContain(
      `The largest move is at 60 s, up (${pct(at(d29, 60))} against ${pct(at(d28, 60))}), more than run 28 moved from run 27 (${policyCurveMoved(d27, d28)} points)`,
    );
    // "Fewer broken promises and third attempts."
    const [l28, l29] = [d28.ledger, d29.ledger] as [PromiseOutcomes, PromiseOutcomes];
    expect(l29.broken / l29.made).toBeLessThan(l28.broken / l28.made);
    expect(d29.requestsByAttempts?.["3"] ?? Number.NaN).toBeLessThan(d28.requestsByAttempts?.["3"] ?? 0);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      'End to end (`docs/benchmarks.md`, "Run 29") the default meets every end-to-end target, and serves more within 60 s than run 28 before it, on the same seeds.',
    );
  });

  it("backs docs/retry-policy.md's bullet on the 120 s quiet wait: capacity-halves' attempts on the held-out seeds", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    const heldOut = json.heldOut as HeldOutRun;
    const row = (list: VariantSummary[], id: string) => list.find((v) => v.id === id) as VariantSummary;
    const sixty = { tuned: row(json.variants, "demoted-quiet-60"), held: row(heldOut.variants, "demoted-quiet-60") };
    // "The one scenario where the default made more attempts per offered request than static 30 s was
    // `capacity-halves` on the held-out seeds": the 60 s rule's row, held to static 30 s's attempts there.
    const above = heldOut.scenarios.filter((s) => {
      const def = heldOut.variants[0]?.perScenario[s.name]?.attemptsPerOffered ?? Number.NaN;
      const static30 = def - s.check.attemptsVsStatic30;
      return (sixty.held.perScenario[s.name]?.attemptsPerOffered ?? Number.NaN) > static30 + 1e-9;
    });
    expect(above.map((s) => s.name)).toEqual(["capacity-halves"]);
    expect(sixty.held.met.attempts).toBe(sixty.held.scenarios - 1);
    expect(heldOut.variants[0]?.met.attempts).toBe(sixty.held.scenarios);
    // On ten held-out seeds too: the default meets the attempts target everywhere, the 60 s rule in all but one.
    const ten = (JSON.parse(read("docs/held-out-seeds.json")) as HeldSeedsRun).summaries;
    const [tenDefault, tenSixty] = ["default", "demoted-quiet-60"].map((id) => row(ten, id)) as [
      VariantSummary,
      VariantSummary,
    ];
    expect([tenDefault.met.attempts, tenSixty.met.attempts]).toEqual([tenDefault.scenarios, tenDefault.scenarios - 1]);
    const halves = (v: VariantSummary) => v.perScenario["capacity-halves"]?.attemptsPerOffered ?? Number.NaN;
    expect(halves(tenDefault)).toBeLessThan(halves(tenSixty));
    expect(doc).toContain(
      "The 120 s came after the longer best effort in recurring overloads (below), when the one scenario where the default made more attempts per offered request than static 30 s was `capacity-halves` on the held-out seeds.",
    );
  });

  it("backs docs/benchmarks.md's run 30: the default with the 120 s quiet wait, beside run 29", () => {
    // The run measured the default with the 120 s quiet wait: the commit's code has it.
    expect(routerSettingsSchema.parse({}).booking.demotedQuietTimeoutS).toBe(120);
    const { before: d29, after: d30 } = expectDefaultRunBeside(
      { name: "run 29", file: RUN_29_RECURRING_BEST_EFFORT },
      { name: "run 30", file: RUN_30_QUIET_120 },
      "demoted-quiet-60",
    );
    // "In the end-to-end twin nothing moves at any horizon" (expectDefaultRunBeside checks 5 to 60 s; here 120 s too).
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    for (const t of twin.twins)
      expect(twinShare(t, `${DEFAULT_POLICY_ID}:demoted-quiet-60`, 120), t.id).toBe(
        twinShare(t, DEFAULT_POLICY_ID, 120),
      );
    expect(read("docs/benchmarks.md").replace(/\s+/g, " ")).toContain(
      "`demoted-quiet-60` (the 60 s quiet wait, the default until run 30) has the default's figures in both twins at every horizon",
    );
    // "The largest move is at 60 s, down, and most of it is one seed's; between runs 28 and 29 one seed moved N points
    // the other way."
    const at = (d: { servedWithinS: Record<string, number> }, h: number) => d.servedWithinS[h] ?? Number.NaN;
    const moved = Number(policyCurveMoved(d29, d30));
    expect(100 * (at(d29, 60) - at(d30, 60))).toBeCloseTo(moved, 1);
    const moves30 = seedSharesAt60(d29, d30);
    const worst30 = moves30.reduce((w, m) => (m.before - m.after > w.before - w.after ? m : w));
    const requests = moves30.reduce((n, m) => n + m.requests, 0);
    expect((100 * (worst30.requests * (worst30.before - worst30.after))) / requests).toBeGreaterThan(moved / 2);
    const d28 = defaultOf(runOf(RUN_28_QUIET_WAIT) as E2eOpenAiRun) as E2eOpenAiPolicy;
    const best29 = seedSharesAt60(d28, d29).reduce((w, m) => (m.after - m.before > w.after - w.before ? m : w));
    const flat = read("docs/benchmarks.md").replace(/\s+/g, " ");
    expect(flat).toContain(
      `The largest move is at 60 s, down (${pct(at(d30, 60))} against ${pct(at(d29, 60))}), and most of it is one seed's (${worst30.seed}: ${pct(worst30.after)} against ${pct(worst30.before)}); between runs 28 and 29, where the twin said nothing within 60 s would move either, one seed moved ${(100 * (best29.after - best29.before)).toFixed(1)} points the other way (${best29.seed}: ${pct(best29.before)} against ${pct(best29.after)}).`,
    );
    // "Fewer attempts with fewer broken promises and third attempts."
    expect(d30.attemptsPerOffered).toBeLessThan(d29.attemptsPerOffered);
    const [l29, l30] = [d29.ledger, d30.ledger] as [PromiseOutcomes, PromiseOutcomes];
    expect(l30.broken / l30.made).toBeLessThan(l29.broken / l29.made);
    expect(d30.requestsByAttempts?.["3"] ?? Number.NaN).toBeLessThan(d29.requestsByAttempts?.["3"] ?? 0);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `End to end (\`docs/benchmarks.md\`, "Run 30") the default meets every end-to-end target with fewer attempts per offered request than run 29 before it, on the same seeds (${d30.attemptsPerOffered.toFixed(3)} against ${d29.attemptsPerOffered.toFixed(3)}), and serves ${moved.toFixed(1)} points less within 60 s, where the twin says nothing moves;`,
    );
  });

  it("backs docs/benchmarks.md's runs 32 and 33: today's default on the held-out seeds, beside the policies run again there", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [held, run32, run33, run31] = [
      RUN_HELD_2,
      RUN_32_HELD_DEFAULT,
      RUN_33_HELD_OTHERS,
      RUN_31_QUIET_120_AGAIN,
    ].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    // The held-out run's seeds, which no tuning used; the same code for both runs.
    for (const run of [run32, run33]) {
      expect(run.seeds).toEqual(held.seeds);
      expect(run.commit).toBe(run32.commit);
      expectBenchmarkRows(bench, run);
      expect(flat).toContain(`\`${run.generatedBy}\``.replace(/\s+/g, " "));
    }
    for (const seed of held.seeds ?? []) expect(run31.seeds).not.toContain(seed);
    expect(flat).toContain(`with nothing else running (commit \`${run32.commit}\`)`);
    expect(run32.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
    expect(run33.policies.map((p) => p.id)).toEqual(["router_queue_drain_rate", "retry_schedule"]);
    const d32 = defaultOf(run32) as E2eOpenAiPolicy;
    const latest = checkE2eTargets([...heldRunReferences(), d32], DEFAULT_POLICY_ID);
    const own = checkE2eTargets([...held.policies.filter((p) => p.id !== DEFAULT_POLICY_ID), d32], DEFAULT_POLICY_ID);
    for (const check of [latest, own]) expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    const worst = (c: typeof latest) => `${(100 * (c?.worst.gap ?? 0)).toFixed(1)} at ${c?.worst.horizonS} s`;
    expect(flat).toContain(
      `Run 32's default meets every end-to-end target held to run 33's two policies and the held-out run's static 30 s (worst gap ${worst(latest)}, ${d32.attemptsPerOffered.toFixed(3)} attempts per offered request), and held to the held-out run's own three as well (worst gap ${worst(own)}).`,
    );
    const d17 = defaultOf(held) as E2eOpenAiPolicy;
    const at = (d: { servedWithinS: Record<string, number> }, h: number) => d.servedWithinS[h] ?? Number.NaN;
    const less = (h: number) => (100 * (at(d17, h) - at(d32, h))).toFixed(1);
    expect(flat).toContain(
      `Against run 17's default on the same seeds it serves ${less(60)} points less within 60 s (${pct(at(d32, 60))} against ${pct(at(d17, 60))}) and ${less(30)} less within 30 s, with ${d32.attemptsPerOffered.toFixed(3)} attempts per offered request against ${d17.attemptsPerOffered.toFixed(3)}.`,
    );
    // "on run 17's seeds runs 30 and 31, the same code, are 1.4 points apart within 60 s"
    const [d30, d31] = [RUN_30_QUIET_120, RUN_31_QUIET_120_AGAIN].map((f) => defaultOf(runOf(f))) as E2eOpenAiPolicy[];
    expect(flat).toContain(
      `runs 30 and 31, the same code, are ${(100 * Math.abs(at(d31 as E2eOpenAiPolicy, 60) - at(d30 as E2eOpenAiPolicy, 60))).toFixed(1)} points apart within 60 s.`,
    );
  });

  it("backs docs/benchmarks.md's run 31: the 120 s quiet wait again, beside runs 29 and 30", () => {
    const flat = read("docs/benchmarks.md").replace(/\s+/g, " ");
    const [run29, run30, run31] = [RUN_29_RECURRING_BEST_EFFORT, RUN_30_QUIET_120, RUN_31_QUIET_120_AGAIN].map(
      runOf,
    ) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    const { policy: d31, check } = expectDefaultOnlyRun(run30, run31, "run 30's code with every page");
    const [d29, d30] = [run29, run30].map(defaultOf) as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(flat).toContain(
      `Run 31's default meets every end-to-end target (worst gap ${(100 * (check?.worst.gap ?? 0)).toFixed(1)} at ${check?.worst.horizonS} s, ${d31.attemptsPerOffered.toFixed(3)} attempts per offered request).`,
    );
    // "Seed 2028, run 30's largest drop": the seed whose 60 s share fell most from run 29 to run 30.
    const at60 = (d: { servedWithinS: Record<string, number> }) => d.servedWithinS[60] ?? Number.NaN;
    const largest = seedSharesAt60(d29, d30).reduce((w, m) => (m.before - m.after > w.before - w.after ? m : w));
    const again = seedSharesAt60(d30, d31).find((m) => m.seed === largest.seed);
    expect(flat).toContain(
      `Within 60 s it serves ${pct(at60(d31))}, against run 30's ${pct(at60(d30))} and run 29's ${pct(at60(d29))}; seed ${largest.seed}, run 30's largest drop, serves ${pct(again?.after)} (run 30: ${pct(largest.after)}).`,
    );
    // "Run 29's to within 0.01, where run 30 made fewer"; "nearer run 29 than run 30 at 60 s".
    expect(Math.abs(d31.attemptsPerOffered - d29.attemptsPerOffered)).toBeLessThan(0.01);
    expect(d30.attemptsPerOffered).toBeLessThan(d31.attemptsPerOffered);
    const [from29, from30] = [d29, d30].map((d) => Math.abs(at60(d31) - at60(d)));
    expect(from29).toBeLessThan(from30 ?? 0);
    expect(flat).toContain(
      `(${d31.attemptsPerOffered.toFixed(3)} against ${d29.attemptsPerOffered.toFixed(3)}), where run 30 made ${d30.attemptsPerOffered.toFixed(3)}. Neither of run 30's differences repeats: at 60 s run 31 is nearer run 29 than run 30 (${(100 * (from29 ?? 0)).toFixed(1)} points against ${(100 * (from30 ?? 0)).toFixed(1)}).`,
    );
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `run 31, the same default again, serves ${pct(at60(d31))} within 60 s with ${d31.attemptsPerOffered.toFixed(3)} attempts per offered request (run 29: ${pct(at60(d29))}, ${d29.attemptsPerOffered.toFixed(3)}), so neither difference repeats.`,
    );
  });

  it("backs docs/benchmarks.md's run 24: a spike train end to end, every policy, where the default loses", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf(RUN_24_SPIKES) as E2eOpenAiRun & { schedule?: string };
    expect(run.schedule).toBe("spikes");
    expect(run.phases).toEqual(E2E_SCHEDULES.spikes.phases);
    expect(run.policies.map((p) => p.id).sort()).toEqual(
      [DEFAULT_POLICY_ID, "retry_schedule", "router_queue_drain_rate", "static-30"].sort(),
    );
    expectBenchmarkRows(bench, run);
    expect(flat).toContain(`\`${run.generatedBy}\``);
    expect(flat).toContain(`nothing else running (commit \`${run.commit}\`)`);
    const d = defaultOf(run) as E2eOpenAiPolicy;
    const s30 = run.policies.find((p) => p.id === "static-30") as E2eOpenAiPolicy;
    const check = checkE2eTargets(run.policies, DEFAULT_POLICY_ID);
    // Served and attempts met, the curve missed: the loss the section names.
    expect(check?.met).toEqual({ served: true, curve: false, attempts: true });
    const worstOwner = run.policies
      .filter((p) => p.id !== DEFAULT_POLICY_ID)
      .reduce((a, b) =>
        (b.servedWithinS[check?.worst.horizonS ?? 0] ?? 0) > (a.servedWithinS[check?.worst.horizonS ?? 0] ?? 0) ? b : a,
      );
    expect(at60(s30)).toBeGreaterThan(at60(d));
    expect(s30.attemptsPerOffered).toBeLessThan(d.attemptsPerOffered);
    expect(flat).toContain(
      `the default serves ${pct(d.servedFraction)} and makes ${d.attemptsPerOffered.toFixed(3)} attempts per offered request (both targets met), but misses the curve target: ${(-100 * (check?.worst.gap ?? 0)).toFixed(1)} points behind \`${worstOwner.id}\` at ${check?.worst.horizonS} s, and static 30 s serves ${(100 * (at60(s30) - at60(d))).toFixed(1)} points more within 60 s, with fewer attempts (${s30.attemptsPerOffered.toFixed(3)}).`,
    );
    // Seed by seed, static 30 s ahead within 60 s on every seed.
    const [d60, s60] = [d, s30].map((p) => (p.perSeed ?? []).map(at60)) as [number[], number[]];
    expect(d60).toHaveLength(run.seeds?.length ?? Number.NaN);
    for (const [i, v] of d60.entries()) expect(s60[i] ?? 0).toBeGreaterThan(v);
    const range = (xs: number[]) => `${pct(Math.min(...xs))} to ${pct(Math.max(...xs))}`;
    expect(flat).toContain(
      `Static 30 s serves more within 60 s on every seed (${range(s60)}, the default ${range(d60)}).`,
    );
    const l = d.ledger as PromiseOutcomes;
    expect(flat).toContain(
      `The default's router broke ${((100 * l.broken) / (l.broken + l.kept + l.noShow)).toFixed(1)}% (${l.broken} of ${l.made}) of its promises, and ${d.requestsByAttempts?.["3"]} requests took a third attempt.`,
    );
    // The simulator's spike trains at burst-3x's fleet and its shortest queue rank them the same within 60 s.
    const train = JSON.parse(read("docs/burst-train.json")) as BurstTrainReport;
    const shortest = Math.min(...train.points.filter((p) => p.fleet === "burst-3x").map((p) => p.maxQueuedRequests));
    const leads = train.points
      .filter((p) => p.fleet === "burst-3x" && p.maxQueuedRequests === shortest)
      .map((p) => 100 * ((p.servedWithinS["static-30"]?.[60] ?? 0) - (p.servedWithinS[DEFAULT_POLICY_ID]?.[60] ?? 0)));
    expect(leads).toHaveLength(train.trains.length);
    for (const lead of leads) expect(lead).toBeGreaterThan(0);
    expect(flat).toContain(
      `at the sweep's shortest queue (${shortest}, the nearest to this stack's drain), static 30 s serves ${Math.min(...leads).toFixed(1)} to ${Math.max(...leads).toFixed(1)} points more than the default within 60 s at every spike period`,
    );
    const summary = burstTrainSummary(train, "burst-3x");
    expect(summary.curveMisses[30]?.length).toBe(summary.points);
    // "Most of the loss is the forecast's": the clairvoyant default within 2 points at most points, the default not.
    const clair = clairvoyantSummary(train, "burst-3x");
    expect(clair.clairvoyantWithin).toBeGreaterThan(clair.points / 2);
    expect(clair.defaultWithin).toBeLessThan(clair.points / 2);
    expect(flat).toContain(
      `that default is within 2 points of static 30 s within 60 s at ${clair.clairvoyantWithin} of ${clair.points} points, the default at ${clair.defaultWithin}, and it leaves at most ${pct(clair.idleHighest.clairvoyant)} of the slots idle while refused clients wait, the default ${pct(clair.idleHighest.default)}`,
    );
    expect(read(RETRY_AFTER_DOC).replace(/\s+/g, " ")).toContain(
      `run 24) the default still serves ${pct(d.servedFraction)} with ${d.attemptsPerOffered.toFixed(3)} attempts per offered request, but **misses the curve target**: ${(-100 * (check?.worst.gap ?? 0)).toFixed(1)} points behind \`${worstOwner.id}\` at ${check?.worst.horizonS} s, and static 30 s serves ${(100 * (at60(s30) - at60(d))).toFixed(1)} points more within 60 s with fewer attempts`,
    );
  });

  it("backs docs/benchmarks.md's twin of run 24: the spike train replayed, the ranking at 15 s and 60 s, the fit", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const twinRun = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    const spikes = twinRun.spikes;
    if (!spikes || !twinRun.replay?.held || !twinRun.replay.latestRunsApart)
      throw new Error("docs/e2e-twin.json has no twin of run 24");
    const run = runOf(RUN_24_SPIKES);
    // The twin replays run 24's own arrivals, from a cold router, for the run's four policies.
    expect(spikes.runFile).toBe(RUN_24_SPIKES);
    expect(spikes.schedule).toBe(run.schedule);
    expect(spikes.runSeeds).toEqual(run.seeds);
    expect(spikes.twin).toBe("cold");
    expect(spikes.policies.map((p) => p.id)).toEqual(run.policies.map((p) => p.id));
    const real = (id: string) => run.policies.find((p) => p.id === id) as E2eOpenAiPolicy;
    // The table: each policy's twin figure / run 24's.
    for (const t of spikes.policies) {
      const r = real(t.id);
      const cells = [
        `${pct(t.servedFraction)} / ${pct(r.servedFraction)}`,
        ...[5, 15, 30, 60].map((h) => `${pct(t.servedWithinS[h])} / ${pct(r.servedWithinS[h])}`),
        `${t.attemptsPerOffered.toFixed(3)} / ${r.attemptsPerOffered.toFixed(3)}`,
      ];
      expect(bench, t.id).toContain(`| ${t.id} | ${cells.join(" | ")} |`);
    }
    // The ranking at 15 s and 60 s: the same order in both, one policy ahead of the default, its lead in each.
    const lead = (ps: readonly BenchmarkRow[], id: string, h: number) => {
      const d = ps.find((p) => p.id === DEFAULT_POLICY_ID) as BenchmarkRow;
      const p = ps.find((x) => x.id === id) as BenchmarkRow;
      return 100 * ((p.servedWithinS[h] ?? 0) - (d.servedWithinS[h] ?? 0));
    };
    const ahead = (ps: readonly BenchmarkRow[], h: number) =>
      ps.filter((p) => p.id !== DEFAULT_POLICY_ID && lead(ps, p.id, h) > 0).map((p) => p.id);
    const order = (ps: readonly BenchmarkRow[], h: number) =>
      [...ps].sort((a, b) => (b.servedWithinS[h] ?? 0) - (a.servedWithinS[h] ?? 0)).map((p) => p.id);
    const leads = [15, 60].map((h) => {
      expect(order(spikes.policies, h), `${h} s`).toEqual(order(run.policies, h));
      const [id, ...more] = ahead(run.policies, h);
      expect(more, `${h} s`).toEqual([]);
      expect(ahead(spikes.policies, h), `${h} s`).toEqual([id]);
      return {
        id,
        twin: lead(spikes.policies, id as string, h).toFixed(1),
        run: lead(run.policies, id as string, h).toFixed(1),
      };
    }) as [{ id: string; twin: string; run: string }, { id: string; twin: string; run: string }];
    expect(leads.map((l) => l.id)).toEqual(["router_queue_drain_rate", "static-30"]);
    const withRequests = (ps: readonly BenchmarkRow[]) => ps.map((p) => ({ ...p, requests: 0 }));
    const [twinCheck, runCheck] = [spikes.policies, run.policies].map((ps) =>
      checkE2eTargets(withRequests(ps), DEFAULT_POLICY_ID),
    );
    expect(twinCheck?.met.curve).toBe(false);
    expect(runCheck?.met.curve).toBe(false);
    expect(flat).toContain(
      `The twin ranks the four policies as run 24 does at 15 s and at 60 s: at 15 s only \`${leads[0].id}\` is ahead of the default, by ${leads[0].twin} points in the twin against ${leads[0].run} in the run, and at 60 s only static 30 s, by ${leads[1].twin} points against ${leads[1].run}; so the twin's default, like the run's, misses the curve target.`,
    );
    // The fit, beside the replaying cold twin's fits on the burst and two real runs of the same code.
    expect(spikes.fit).toEqual(twinFit(spikes.policies, [run]));
    const burstFit = replayedFitOf(twinRun.replay.fit, "cold");
    const heldFit = replayedFitOf(twinRun.replay.held.fit, "cold");
    expect(flat).toContain(
      `Summed over the four policies at 5, 15, 30 and 60 s the twin is ${spikes.fit.curveAbsErrPts.toFixed(1)} points from run 24 (signed: ${spikes.fit.curveBiasPts.toFixed(1)}), with ${signedAttempts(spikes.fit.attemptsBias)} attempts per offered request; the same cold twin replaying run 11's arrivals is ${burstFit.curveAbsErrPts.toFixed(1)} points from the mean of runs 11 and 12 and ${heldFit.curveAbsErrPts.toFixed(1)} from the held-out run, and runs 17 and 18, the same code on the same six seeds, are ${twinRun.replay.latestRunsApart.curveAbsErrPts.toFixed(1)} points apart (run 24 has three seeds; run 25 below repeats two of its policies).`,
    );
    // Where it disagrees: the policy furthest from the run, and how far the others are at most.
    const misfit = (id: string) =>
      twinFit(
        spikes.policies.filter((p) => p.id === id),
        [run],
      ).curveAbsErrPts;
    const [worst, ...rest] = [...spikes.policies].sort((a, b) => misfit(b.id) - misfit(a.id));
    if (!worst) throw new Error("no policy");
    expect(worst.id).toBe("retry_schedule");
    const r = real(worst.id);
    const diff = (h: number) => 100 * ((worst.servedWithinS[h] ?? 0) - (r.servedWithinS[h] ?? 0));
    expect([diff(60), worst.servedFraction - r.servedFraction].every((v) => v < 0)).toBe(true);
    expect(diff(5)).toBeGreaterThan(0);
    const restMost = Math.max(
      ...rest.flatMap((p) =>
        [5, 15, 30, 60].map((h) => Math.abs((p.servedWithinS[h] ?? 0) - (real(p.id).servedWithinS[h] ?? 0))),
      ),
    );
    const attemptsMost = [...spikes.policies].sort(
      (a, b) =>
        b.attemptsPerOffered - real(b.id).attemptsPerOffered - (a.attemptsPerOffered - real(a.id).attemptsPerOffered),
    )[0] as BenchmarkRow;
    expect(flat).toContain(
      `Where the twin disagrees: \`${worst.id}\`, ${misfit(worst.id).toFixed(1)} of the ${spikes.fit.curveAbsErrPts.toFixed(1)} points: the twin serves ${(-diff(60)).toFixed(1)} points less within 60 s (${pct(worst.servedWithinS[60])} against ${pct(r.servedWithinS[60])}), ${(100 * (r.servedFraction - worst.servedFraction)).toFixed(1)} less in all and ${diff(5).toFixed(1)} more within 5 s, so at 60 s it puts \`${worst.id}\` ${(-lead(spikes.policies, worst.id, 60)).toFixed(1)} points behind the default where the run has it ${(-lead(run.policies, worst.id, 60)).toFixed(1)} behind; the other three policies are within ${(100 * restMost).toFixed(1)} points of the run at every horizon, and \`${attemptsMost.id}\` makes ${(attemptsMost.attemptsPerOffered - real(attemptsMost.id).attemptsPerOffered).toFixed(3)} more attempts per offered request in the twin.`,
    );
  });

  it("backs docs/benchmarks.md's run 25: run 24's default and static 30 s again, static 30 s ahead within 60 s again", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run24, run25] = [RUN_24_SPIKES, RUN_25_SPIKES].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun];
    expect(run25.seeds).toEqual(run24.seeds);
    expect(run25.phases).toEqual(run24.phases);
    expect(run25.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID, "static-30"]);
    expect(run25.commit).not.toBe(run24.commit);
    expectBenchmarkRows(bench, run25);
    expect(flat).toContain(`\`${run25.generatedBy}\``);
    expect(flat).toContain(`with nothing else running (commit \`${run25.commit}\``);
    const of = (run: E2eOpenAiRun, id: string) => run.policies.find((p) => p.id === id) as E2eOpenAiPolicy;
    const [d24, d25, s24, s25] = [
      of(run24, DEFAULT_POLICY_ID),
      of(run25, DEFAULT_POLICY_ID),
      of(run24, "static-30"),
      of(run25, "static-30"),
    ];
    expect(flat).toContain(
      `From run 24 the default's curve moved by at most ${policyCurveMoved(d25, d24)} points and static 30 s's by ${policyCurveMoved(s25, s24)}: the default's share within 60 s is the noisiest figure of the two (${pct(at60(d25))} against ${pct(at60(d24))}).`,
    );
    // "Ahead within 60 s again ... on every seed, and fewer attempts again".
    expect(at60(s25)).toBeGreaterThan(at60(d25));
    for (const [i, seed] of (d25.perSeed ?? []).entries())
      expect(at60(s25.perSeed?.[i] ?? { servedWithinS: {} })).toBeGreaterThan(at60(seed));
    expect(d25.perSeed).toHaveLength(run25.seeds?.length ?? Number.NaN);
    expect(s25.attemptsPerOffered).toBeLessThan(d25.attemptsPerOffered);
    expect(flat).toContain(
      `Static 30 s is ahead within 60 s again, by ${(100 * (at60(s25) - at60(d25))).toFixed(1)} points (${(100 * (at60(s24) - at60(d24))).toFixed(1)} in run 24), on every seed, and makes fewer attempts again (${s25.attemptsPerOffered.toFixed(3)} against ${d25.attemptsPerOffered.toFixed(3)}).`,
    );
    expect(read(RETRY_AFTER_DOC).replace(/\s+/g, " ")).toContain(
      `(${(100 * (at60(s25) - at60(d25))).toFixed(1)} points in a repeat of the two, run 25;`,
    );
  });

  it("backs docs/retry-policy.md's probe bullet: ahead on both seed sets; elsewhere than waves the gaps move by less than a point", () => {
    const held = (json.heldOut as HeldOutRun).variants;
    const [def, noProbe] = [json.variants[0], json.variants.find((v) => v.id === "no-probe")] as VariantSummary[];
    const [heldDef, heldNoProbe] = [held[0], held.find((v) => v.id === "no-probe")] as VariantSummary[];
    expect(def?.worstCurveGapSumPts).toBeGreaterThan(noProbe?.worstCurveGapSumPts ?? 0);
    expect(heldDef?.worstCurveGapSumPts).toBeGreaterThan(heldNoProbe?.worstCurveGapSumPts ?? 0);
    // "there the worst curve gaps move by less than a point": every scenario but waves.
    for (const [name, own] of Object.entries(def?.perScenario ?? {})) {
      if (name === "waves") continue;
      const base = noProbe?.perScenario[name];
      expect(Math.abs(own.worstCurveGap.gapPts - (base?.worstCurveGap.gapPts ?? 0)), name).toBeLessThan(1);
    }
  });

  it("backs docs/benchmarks.md's probe end to end: today's default alone meets every target against runs 11 and 12", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const today = runOf("docs/evaluation-e2e-openai-probe.json");
    const before = runOf("docs/evaluation-e2e-openai-age-best-effort.json");
    expectBenchmarkRows(bench, today);
    const gaps = RUNS_11_AND_12.map((path) => gapAgainstRun(today, path));
    const [now, then] = [defaultOf(today), defaultOf(before)] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(flat).toContain(
      `its worst gap is ${gaps[0]} and ${gaps[1]} points (at 15 s), and it makes ${now.attemptsPerOffered.toFixed(3)} attempts per offered request. Within 60 s it serves ${pct(now.servedWithinS["60"])}, where the default before the change served ${pct(then.servedWithinS["60"])} on the same seeds`,
    );
    // "the other policies' curves moved by up to 1.8 points between runs 11 and 12": more than this run's change.
    const moved = otherPoliciesMovedBetweenRuns11And12();
    expect((100 * moved).toFixed(1)).toBe("1.8");
    const change = Math.max(
      ...["5", "15", "30", "60"].map((h) => Math.abs((now.servedWithinS[h] ?? 0) - (then.servedWithinS[h] ?? 0))),
    );
    expect(change).toBeLessThan(moved);
  });

  it("backs docs/benchmarks.md's trust fix end to end: today's default alone meets every target against runs 11 and 12", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const today = runOf("docs/evaluation-e2e-openai-promise-trust.json");
    const probe = runOf("docs/evaluation-e2e-openai-probe.json");
    expectBenchmarkRows(bench, today);
    const worst = RUNS_11_AND_12.map((path) => {
      const { horizonS, gap } = worstAgainstRun(today, path);
      return `${(100 * gap).toFixed(1)} points (at ${horizonS} s)`;
    });
    const [now, then] = [defaultOf(today), defaultOf(probe)] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(flat).toContain(
      `its worst gap is ${worst[0]} and ${worst[1]}, and it makes ${now.attemptsPerOffered.toFixed(3)} attempts per offered request, where the probe's run above made ${then.attemptsPerOffered.toFixed(3)}.`,
    );
    // "above the probe's run by at most 1.8 points (at 30 s), as much as the other policies' curves moved".
    const change = curveChange(then, now);
    expect(Math.min(...change.byHorizon)).toBeGreaterThanOrEqual(0);
    expect([change.largestPts, change.atS]).toEqual(["1.8", "30"]);
    expect(flat).toContain("Its curve is above the probe's run by at most 1.8 points (at 30 s), as much as");
  });

  it("backs docs/benchmarks.md's next horizon end to end: every target met against runs 11 and 12, not ahead of the default", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf("docs/evaluation-e2e-openai-next-horizon.json");
    expectBenchmarkRows(bench, run);
    const own = run.policies.find((p) => p.id === `${DEFAULT_POLICY_ID}:next-horizon-order`) as E2eOpenAiPolicy;
    // In the default's place: the same check as the default-only runs.
    const asDefault = { ...run, policies: [{ ...own, id: DEFAULT_POLICY_ID }] };
    const worst = RUNS_11_AND_12.map((path) => gapAgainstRun(asDefault, path));
    expect(flat).toContain(
      `its worst gap is ${worst[0]} and ${worst[1]} points (at 15 s), and it makes ${own.attemptsPerOffered.toFixed(3)} attempts per offered request`,
    );
    // Beside today's default alone on the same seeds: lower by at most 1.7 points, within the 1.8 the other
    // policies moved between runs 11 and 12.
    const today = defaultOf(runOf("docs/evaluation-e2e-openai-kept-when-placed.json")) as E2eOpenAiPolicy;
    expect(run.seeds).toEqual(runOf("docs/evaluation-e2e-openai-kept-when-placed.json").seeds);
    const lower = curveChange(own, today);
    expect(Math.min(...lower.byHorizon)).toBeGreaterThan(0);
    expect([lower.largestPts, lower.atS]).toEqual(["1.7", "30"]);
    expect(flat).toContain(
      `beside the default's own run on the same seeds (above, ${today.attemptsPerOffered.toFixed(3)} attempts), its curve is lower by at most 1.7 points (at 30 s)`,
    );
    const moved = otherPoliciesMovedBetweenRuns11And12();
    expect((100 * moved).toFixed(1)).toBe("1.8");
    expect(lower.largest).toBeLessThan(moved);
  });

  it("backs docs/benchmarks.md's last free slot kept, end to end: the attempts target missed, the curve within the runs' movement", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf("docs/evaluation-e2e-openai-demoted-headroom.json");
    expectBenchmarkRows(bench, run);
    const own = run.policies.find((p) => p.id === `${DEFAULT_POLICY_ID}:demoted-headroom-1`) as E2eOpenAiPolicy;
    // In the default's place: the attempts target missed, the worst gap at 15 s.
    const asDefault = { ...run, policies: [{ ...own, id: DEFAULT_POLICY_ID }] };
    const worst = RUNS_11_AND_12.map((path) => {
      const { horizonS, gap } = worstAgainstRun(asDefault, path, { served: true, curve: true, attempts: false });
      expect(horizonS).toBe(15);
      return (100 * gap).toFixed(1);
    });
    // The default's own run: the next horizon's, made as a variant before it became the default.
    const today = runOf("docs/evaluation-e2e-openai-next-horizon.json").policies.find(
      (p) => p.id === `${DEFAULT_POLICY_ID}:next-horizon-order`,
    ) as E2eOpenAiPolicy;
    expect(flat).toContain(
      `(worst gap ${worst[0]} and ${worst[1]} points, at 15 s) and misses the attempts target: ${own.attemptsPerOffered.toFixed(3)} attempts per offered request, where the issue allows 1.5 and the default's own run on the same seeds (the next horizon, above) made ${today.attemptsPerOffered.toFixed(3)}.`,
    );
    const moved = curveChange(today, own, { bySize: true });
    expect([moved.largestPts, moved.atS]).toEqual(["0.9", "60"]);
    expect(moved.largest).toBeLessThan(otherPoliciesMovedBetweenRuns11And12());
  });

  it("backs docs/benchmarks.md's ledger's promises end to end: the Worker's counts beside the twin's", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf("docs/evaluation-e2e-openai-ledger.json");
    expectBenchmarkRows(bench, run);
    expect(run.seeds).toEqual(runOf("docs/evaluation-e2e-openai-run12.json").seeds);
    const ledger = defaultOf(run)?.ledger;
    if (!ledger) throw new Error("the run recorded no ledger");
    const ended = ledger.kept + ledger.broken + ledger.noShow;
    const share = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;
    expect(flat).toContain(
      `Its router made ${ledger.made} promises: ${share(ledger.kept, ended)} were kept (the retry was placed on a replica), ${share(ledger.broken, ended)} broken (the retry came back on time and was refused, or was shed from the queue) and ${share(ledger.noShow, ended)} no-shows.`,
    );
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    const brokenInTwin = (id: string) => {
      const l = twin.twins.find((t) => t.id === id)?.policies.find((p) => p.id === DEFAULT_POLICY_ID)?.ledger;
      if (!l) throw new Error(`no ledger in the ${id} twin`);
      return l.broken / (l.kept + l.broken + l.noShow);
    };
    const [cold, quiet] = [brokenInTwin("cold"), brokenInTwin("after-quiet")];
    expect(flat).toContain(
      `breaks fewer: ${(100 * cold).toFixed(1)}% from a cold router and ${(100 * quiet).toFixed(1)}% after a quiet spell.`,
    );
    const real = ledger.broken / ended;
    expect(flat).toContain(
      `breaks ${(real / Math.max(cold, quiet)).toFixed(1)} to ${(real / Math.min(cold, quiet)).toFixed(1)} times the share its twin predicts`,
    );
    // The refusals beside the twin's: the real router's by reason, the twin's in all.
    const reasons = defaultOf(run)?.refusalsByReason;
    if (!reasons) throw new Error("the run recorded no refusals by reason");
    const refused = Object.values(reasons).reduce((a, b) => a + b, 0);
    const twinRefusals = (id: string) =>
      twin.twins.find((t) => t.id === id)?.policies.find((p) => p.id === DEFAULT_POLICY_ID)?.refusals;
    expect(flat).toContain(
      `refused ${refused} attempts (${reasons.queue_full} at a full queue, ${reasons.queue_timeout} at the queue timeout; the run reads these from the overview too), where the twin refuses ${twinRefusals("cold")} and ${twinRefusals("after-quiet")}:`,
    );
    expect(refused).toBeGreaterThan(Math.max(twinRefusals("cold") ?? 0, twinRefusals("after-quiet") ?? 0));
    // The twin on one router through six bursts, as the real router lives its seeds: how much of the gap it closes.
    const chained = twin.chained;
    if (!chained?.ledger) throw new Error("docs/e2e-twin.json has no chained run");
    const chainedEnded = chained.ledger.kept + chained.ledger.broken + chained.ledger.noShow;
    const perSeed = twin.seeds?.length ?? Number.NaN;
    const twinOf = (id: string) =>
      twin.twins.find((t) => t.id === id)?.policies.find((p) => p.id === DEFAULT_POLICY_ID);
    const [coldRun, quietRun] = [twinOf("cold"), twinOf("after-quiet")];
    if (!coldRun?.refusals || !quietRun?.refusals) throw new Error("the twins recorded no refusals");
    const realPerSeed = refused / (run.seeds?.length ?? Number.NaN);
    expect(flat).toContain(
      `breaks ${((100 * chained.ledger.broken) / chainedEnded).toFixed(1)}% of its promises, refuses ${chained.refusalsPerBurst.toFixed(1)} attempts a burst (the real router ${realPerSeed.toFixed(1)} a seed, the twins ${(coldRun.refusals / perSeed).toFixed(1)} and ${(quietRun.refusals / perSeed).toFixed(1)}) and makes ${chained.attemptsPerOffered.toFixed(3)} attempts per offered request (the real run ${(defaultOf(run) as E2eOpenAiPolicy).attemptsPerOffered.toFixed(3)})`,
    );
    const closed = (twins: number, chain: number, realValue: number) =>
      ((100 * (chain - twins)) / (realValue - twins)).toFixed(0);
    const closedBroken = closed((cold + quiet) / 2, chained.ledger.broken / chainedEnded, real);
    const closedRefusals = closed(
      (coldRun.refusals + quietRun.refusals) / 2 / perSeed,
      chained.refusalsPerBurst,
      realPerSeed,
    );
    const closedAttempts = closed(
      (coldRun.attemptsPerOffered + quietRun.attemptsPerOffered) / 2,
      chained.attemptsPerOffered,
      (defaultOf(run) as E2eOpenAiPolicy).attemptsPerOffered,
    );
    expect(flat).toContain(
      `it closes ${closedBroken}% of the gap in broken promises, ${closedRefusals}% in refusals and ${closedAttempts}% in attempts.`,
    );
  });

  it("backs docs/benchmarks.md's six more seeds end to end: every target met on arrivals no earlier run used, and the twin on them", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [held, run15, run16] = [RUN_HELD, RUN_15, RUN_16].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    expectBenchmarkRows(bench, held);
    expect(held.generatedBy).toBe(`npx tsx eval/e2e-openai.ts --seeds 6 --first-seed 3026 --out ${RUN_HELD}`);
    expect(flat).toContain(`\`${held.generatedBy}\` (commit \`${held.commit}\`;`);
    for (const seed of held.seeds ?? []) expect(run15.seeds).not.toContain(seed);
    const check = checkE2eTargets(held.policies, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    const d = defaultOf(held);
    expect(flat).toContain(
      `Every end-to-end target is met on these seeds too: ${d.served} of ${d.requests} requests served, a worst gap of ${(100 * (check?.worst.gap ?? Number.NaN)).toFixed(1)} points (at ${check?.worst.horizonS} s) and ${d.attemptsPerOffered.toFixed(3)} attempts per offered request.`,
    );
    const s30 = held.policies.find((p) => p.id === "static-30") as E2eOpenAiPolicy;
    const ahead = [5, 15, 30, 60].map((h) =>
      (100 * ((d.servedWithinS[h] ?? 0) - (s30.servedWithinS[h] ?? 0))).toFixed(1),
    );
    for (const a of ahead) expect(Number(a)).toBeGreaterThanOrEqual(0);
    expect(flat).toContain(
      `Against static 30 s, the default's curve is ahead by ${ahead.slice(0, 3).join(", ")} and ${ahead[3]} points at 5, 15, 30 and 60 s, with ${(s30.attemptsPerOffered - d.attemptsPerOffered).toFixed(3)} fewer attempts per offered request.`,
    );
    const others = held.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
    const upTo = (run: E2eOpenAiRun) => Math.max(...others.map((p) => movedBetween(run, held, p.id).curve)).toFixed(1);
    expect(flat).toContain(
      `From run 15 to these seeds the default's completion curve moved by at most ${movedBetween(run15, held, DEFAULT_POLICY_ID).curve.toFixed(1)} points, from run 16 by at most ${movedBetween(run16, held, DEFAULT_POLICY_ID).curve.toFixed(1)}; the other policies' by up to ${upTo(run15)} and ${upTo(run16)}.`,
    );
    const lowest = (d.perSeed ?? []).reduce((a, b) =>
      (b.servedWithinS[60] ?? 0) < (a.servedWithinS[60] ?? 0) ? b : a,
    );
    expect(flat).toContain(
      `${seedBySeedAttempts(d)}; its lowest share within 60 s is seed ${lowest.seed}'s, ${(100 * (lowest.servedWithinS[60] ?? Number.NaN)).toFixed(1)}%.`,
    );
    // The replayed twins were fitted to this run until the run of today's default on the same seeds took its place.
    expect(flat).toContain("took its place in `replay.held` of `docs/e2e-twin.json`");
  });

  it("backs docs/benchmarks.md's held-out seeds again: today's default beside every policy, its movement from the first run on them", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [before, held, run17] = [RUN_HELD, RUN_HELD_2, RUN_17].map(runOf) as [
      E2eOpenAiRun,
      E2eOpenAiRun,
      E2eOpenAiRun,
    ];
    expectBenchmarkRows(bench, held);
    expect(held.seeds).toEqual(before.seeds);
    expect(held.generatedBy).toBe(`npx tsx eval/e2e-openai.ts --seeds 6 --first-seed 3026 --out ${RUN_HELD_2}`);
    expect(held.commit).toBe(run17.commit);
    expect(flat).toContain(`\`${held.generatedBy}\` (commit \`${held.commit}\`,`);
    const check = checkE2eTargets(held.policies, DEFAULT_POLICY_ID);
    const d = defaultOf(held);
    const met = (ok: boolean | undefined) => (ok ? "met" : "**missed**");
    expect(flat).toContain(
      `On these seeds: ${d.served} of ${d.requests} requests served (${met(check?.met.served)}), a worst gap of ${(100 * (check?.worst.gap ?? Number.NaN)).toFixed(1)} points at ${check?.worst.horizonS} s (${met(check?.met.curve)}) and ${d.attemptsPerOffered.toFixed(3)} attempts per offered request (${met(check?.met.attempts)}).`,
    );
    const others = held.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
    const sameCode = Math.max(...others.map((p) => movedBetween(before, held, p.id).curve)).toFixed(1);
    const d0 = defaultOf(before);
    expect(flat).toContain(
      `From the first run on these seeds the default's completion curve moved by at most ${movedBetween(before, held, DEFAULT_POLICY_ID).curve.toFixed(1)} points and its attempts per offered request from ${d0.attemptsPerOffered.toFixed(3)} to ${d.attemptsPerOffered.toFixed(3)}; the other policies, whose code did not change, by up to ${sameCode} points.`,
    );
    expect(flat).toContain(`${seedBySeedAttempts(d)}.`);
    // The replayed twins on the same arrivals, fitted to this run, beside their fit to runs 17 and 18.
    const replay = (JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun).replay;
    if (!replay?.held || !replay.latestFit) throw new Error("docs/e2e-twin.json has no replay of the held-out run");
    expect(replay.held.runFile).toBe(RUN_HELD_2);
    expect(replay.held.runSeeds).toEqual(held.seeds);
    const [cold, quiet] = [replayedFitOf(replay.held.fit, "cold"), replayedFitOf(replay.held.fit, "after-quiet")];
    const [latestCold, latestQuiet] = [
      replayedFitOf(replay.latestFit, "cold"),
      replayedFitOf(replay.latestFit, "after-quiet"),
    ];
    expect(flat).toContain(
      `are ${cold.curveAbsErrPts.toFixed(1)} points from this run from a cold router (signed: ${cold.curveBiasPts.toFixed(1)}) and ${quiet.curveAbsErrPts.toFixed(1)} after a quiet spell (${quiet.curveBiasPts.toFixed(1)}), with ${signedAttempts(cold.attemptsBias)} and ${signedAttempts(quiet.attemptsBias)} attempts per offered request: from a cold router further than they are from runs 17 and 18 on theirs (${latestCold.curveAbsErrPts.toFixed(1)}), after a quiet spell about as far (${latestQuiet.curveAbsErrPts.toFixed(1)};`,
    );
    // "from a cold router further ..., after a quiet spell about as far": apart by more than 3 points, within 2.5.
    expect(cold.curveAbsErrPts - latestCold.curveAbsErrPts).toBeGreaterThan(3);
    expect(Math.abs(quiet.curveAbsErrPts - latestQuiet.curveAbsErrPts)).toBeLessThan(2.5);
    // "Unlike the real run, they put the default's worst gap just past the target ... the stricter judge, by 1.6 and 1.2 points."
    const twinChecks = replay.held.twins.map((t) =>
      checkE2eTargets(
        t.policies.map((p) => ({ ...p, requests: 0 })),
        DEFAULT_POLICY_ID,
      ),
    );
    for (const c of twinChecks) {
      expect(c?.met.curve).toBe(false);
      expect(c?.worst.horizonS).toBe(check?.worst.horizonS);
      expect((check?.worst.gap ?? 0) - (c?.worst.gap ?? 0)).toBeGreaterThan(0.005);
      // "just past the target": within a point beyond the curve target's 2-point tolerance.
      expect(c?.worst.gap ?? 0).toBeGreaterThan(-0.03);
    }
    const stricter = twinChecks.map((c) => (100 * ((check?.worst.gap ?? 0) - (c?.worst.gap ?? 0))).toFixed(1));
    expect(flat).toContain(
      `they put the default's worst gap just past the target, ${twinChecks.map((c) => (100 * (c?.worst.gap ?? Number.NaN)).toFixed(1)).join(" and ")} points at ${check?.worst.horizonS} s: on these seeds the twin is the stricter judge of the curve target, by ${stricter.join(" and ")} points.`,
    );
  });

  it("backs docs/benchmarks.md's replayed twin against runs 17 and 18: today's code fitted to today's runs", () => {
    const flat = read("docs/benchmarks.md").replace(/\s+/g, " ");
    const replay = (JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun).replay;
    if (!replay?.latestFit || !replay.latestRunsApart)
      throw new Error("docs/e2e-twin.json has no fit to runs 17 and 18");
    expect(replay.latestRuns).toEqual([RUN_17, RUN_18]);
    const latestFit = replay.latestFit;
    const latest = (id: string) => replayedFitOf(latestFit, id);
    const earlier = (id: string) => replayedFitOf(replay.fit, id);
    const [cold, quiet] = [latest("cold"), latest("after-quiet")];
    const apart = replay.latestRunsApart;
    expect(flat).toContain(
      `the replayed twins are ${cold.curveAbsErrPts.toFixed(1)} points from the mean of runs 17 and 18 from a cold router (signed: ${cold.curveBiasPts.toFixed(1)}) and ${quiet.curveAbsErrPts.toFixed(1)} after a quiet spell (${quiet.curveBiasPts.toFixed(1)}), with ${signedAttempts(cold.attemptsBias)} and ${signedAttempts(quiet.attemptsBias)} attempts per offered request; run 17 is ${apart.curveAbsErrPts.toFixed(1)} points from run 18`,
    );
    // "From a cold router ... further from today's runs than from runs 11 and 12 (6.4 points), after a quiet spell a
    // little further too (15.5; nearer until the drain-rate fix ...)": under a point further.
    expect(cold.curveAbsErrPts).toBeGreaterThan(earlier("cold").curveAbsErrPts);
    expect(quiet.curveAbsErrPts).toBeGreaterThan(earlier("after-quiet").curveAbsErrPts);
    expect(quiet.curveAbsErrPts - earlier("after-quiet").curveAbsErrPts).toBeLessThan(1);
    expect(flat).toContain(
      `further from today's runs than from runs 11 and 12 (${earlier("cold").curveAbsErrPts.toFixed(1)} points), after a quiet spell a little further too (${earlier("after-quiet").curveAbsErrPts.toFixed(1)}; nearer until the drain-rate fix of 2026-12-06, cc237ee)`,
    );
    // "both times further from their mean than one real run is from the other, and after a quiet spell it still serves more".
    expect(Math.min(cold.curveAbsErrPts, quiet.curveAbsErrPts)).toBeGreaterThan(apart.curveAbsErrPts);
    expect(quiet.curveBiasPts).toBeGreaterThan(0);
  });

  it("backs docs/benchmarks.md's replayed twin: the runs' own arrivals bring the twin to the real figures", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    const replay = twin.replay;
    if (!replay) throw new Error("docs/e2e-twin.json has no replay");
    expect(replay.runSeeds).toEqual(runOf(replay.runFile).seeds);
    expect(replay.realRuns).toEqual([...RUNS_11_AND_12]);
    const fitOf = (id: string, arrivals: "own" | "replayed") => {
      const f = replay.fit.find((x) => x.twin === id && x.arrivals === arrivals);
      if (!f) throw new Error(`no fit for ${id}, ${arrivals}`);
      return f;
    };
    const [ownCold, ownQuiet] = [fitOf("cold", "own"), fitOf("after-quiet", "own")];
    expect(flat).toContain(
      `${ownCold.curveAbsErrPts.toFixed(1)} points more from a cold router and ${ownQuiet.curveAbsErrPts.toFixed(1)} after a quiet spell (signed: ${ownQuiet.curveBiasPts.toFixed(1)}), with ${(-ownCold.attemptsBias).toFixed(3)} and ${(-ownQuiet.attemptsBias).toFixed(3)} attempts per offered request fewer`,
    );
    // "served more at every horizon, for every policy, from a cold router": that twin's distance is all bias.
    expect(ownCold.curveBiasPts).toBeCloseTo(ownCold.curveAbsErrPts, 9);
    // "and after a quiet spell everywhere but the default at 60 s and `retry_schedule` at 5 s (0.6 and 0.4 points
    // less ...)": the points where that twin serves less than the runs' mean, and all that parts bias from distance.
    const e2eIds = ["booked_capacity", "router_queue_drain_rate", "retry_schedule", "static-30"];
    const runsMean = (policy: string, h: number) =>
      RUNS_11_AND_12.map(
        (path) => runOf(path).policies.find((p) => p.id === policy)?.servedWithinS[h] ?? Number.NaN,
      ).reduce((a, b) => a + b, 0) / RUNS_11_AND_12.length;
    const short = (twin.twins.find((t) => t.id === "after-quiet")?.policies ?? [])
      .filter((p) => e2eIds.includes(p.id))
      .flatMap((p) => [5, 15, 30, 60].map((h) => ({ id: p.id, h, d: (p.servedWithinS[h] ?? 0) - runsMean(p.id, h) })))
      .filter((x) => x.d < 0);
    expect(short.map((x) => [x.id, x.h])).toEqual([
      [DEFAULT_POLICY_ID, 60],
      ["retry_schedule", 5],
    ]);
    expect(ownQuiet.curveAbsErrPts - ownQuiet.curveBiasPts).toBeCloseTo(-200 * short.reduce((a, x) => a + x.d, 0), 6);
    expect(flat).toContain(
      `and after a quiet spell everywhere but the default at 60 s and \`retry_schedule\` at 5 s (${short.map((x) => (-100 * x.d).toFixed(1)).join(" and ")} points less; there too until the drain-rate fix of 2026-12-06, cc237ee):`,
    );
    const [cold, quiet] = [fitOf("cold", "replayed"), fitOf("after-quiet", "replayed")];
    expect(flat).toContain(
      `they are ${cold.curveAbsErrPts.toFixed(1)} points from the real runs from a cold router (signed: ${cold.curveBiasPts.toFixed(1)}) and ${quiet.curveAbsErrPts.toFixed(1)} after a quiet spell (${quiet.curveBiasPts.toFixed(1)}), with ${signedAttempts(cold.attemptsBias).replace("+", "")} and ${signedAttempts(quiet.attemptsBias)} attempts per offered request.`,
    );
    expect(cold.curveAbsErrPts).toBeLessThan(ownCold.curveAbsErrPts / 3);
    expect(quiet.curveAbsErrPts).toBeLessThan(ownQuiet.curveAbsErrPts / 2);
    // The tables are the replayed twins' (the end-to-end policies; the variants are there for the targets' checks).
    for (const t of replay.twins)
      expectBenchmarkRows(bench, { policies: t.policies.filter((p) => e2eIds.includes(p.id)) });
    // The pace: alone, and in the run that recorded its saturated answers, beside the replayed twin's.
    const alone = JSON.parse(read("docs/e2e-pace.json")) as { measuredRps: number; simulatedRps: number };
    expect(flat).toContain(
      `answers ${alone.measuredRps.toFixed(2)} requests per second against the simulator's ${alone.simulatedRps.toFixed(2)} for the same fleet`,
    );
    const paceRun = runOf("docs/evaluation-e2e-openai-pace.json");
    expectBenchmarkRows(bench, paceRun);
    const saturated = defaultOf(paceRun)?.saturatedRps ?? Number.NaN;
    expect(flat).toContain(
      `the answers came at ${saturated.toFixed(2)} per second, where the twin replaying the same arrivals answers ${replay.saturated.twinRps.toFixed(2)}`,
    );
    expect(replay.saturated.windowS).toEqual([...E2E_SATURATED_WINDOW_S]);
    const worst = RUNS_11_AND_12.map((path) => (100 * worstAgainstRun(paceRun, path).gap).toFixed(1));
    expect(flat).toContain(`its worst gap is ${worst[0]} and ${worst[1]} points, at 15 s.`);
    // Static 30 s replayed from a cold router against the real runs' mean.
    const [run11, run12] = RUNS_11_AND_12.map((path) => runOf(path));
    const s30 = (r: { policies: readonly E2eOpenAiPolicy[] | E2eTwinRun["twins"][number]["policies"] }) =>
      r.policies.find((p) => p.id === "static-30") as E2eOpenAiPolicy;
    const replayed = s30(replay.twins.find((t) => t.id === "cold") as E2eTwinRun["twins"][number]);
    const largest = Math.max(
      ...["5", "15", "30", "60"].map((h) =>
        Math.abs(
          (replayed.servedWithinS[h] ?? 0) -
            ((s30(run11 as E2eOpenAiRun).servedWithinS[h] ?? 0) + (s30(run12 as E2eOpenAiRun).servedWithinS[h] ?? 0)) /
              2,
        ),
      ),
    );
    const attempts = Math.abs(
      replayed.attemptsPerOffered -
        (s30(run11 as E2eOpenAiRun).attemptsPerOffered + s30(run12 as E2eOpenAiRun).attemptsPerOffered) / 2,
    );
    expect(flat).toContain(
      `is within ${(100 * largest).toFixed(1)} points at every horizon and ${attempts.toFixed(3)} attempts per offered request of the real runs' mean`,
    );
    // The ledger's promises, replayed, beside the two default-only runs that counted them.
    const brokenShare = (l: { kept: number; broken: number; noShow: number }) =>
      ((100 * l.broken) / (l.kept + l.broken + l.noShow)).toFixed(1);
    // The runs that counted them ran the default until the floor's moving means (the twin's `fast-floor-only`).
    const replayedOf = (id: string, policy: string) =>
      replay.twins.find((t) => t.id === id)?.policies.find((p) => p.id === policy);
    const seeds = replay.runSeeds.length;
    const figures = (policy: string) => {
      const [cold, quiet] = [replayedOf("cold", policy), replayedOf("after-quiet", policy)];
      if (!cold?.ledger || !quiet?.ledger || cold.refusals === undefined || quiet.refusals === undefined)
        throw new Error(`the replayed twins recorded no ledger for ${policy}`);
      return {
        broken: [cold.ledger, quiet.ledger].map((l) => Number(brokenShare(l))),
        refused: [cold.refusals / seeds, quiet.refusals / seeds],
        text: `breaks ${brokenShare(cold.ledger)}% of its promises from a cold router and ${brokenShare(quiet.ledger)}% after a quiet spell, and refuses ${(cold.refusals / seeds).toFixed(1)} and ${(quiet.refusals / seeds).toFixed(1)} attempts a seed`,
      };
    };
    const [then, today] = [figures(`${DEFAULT_POLICY_ID}:fast-floor-only`), figures(DEFAULT_POLICY_ID)];
    expect(flat).toContain(
      `(the twin's row \`fast-floor-only\`, the default until the floor's moving means of 2026-12-05) ${then.text}.`,
    );
    expect(flat).toContain(
      `Today's default, replayed, ${today.text}; on one router through the six runs (60 s of quiet between them), ${brokenShare(replay.chained.ledger as LedgerMetrics)}%, ${replay.chained.refusalsPerBurst.toFixed(1)} and ${replay.chained.attemptsPerOffered.toFixed(3)} attempts per offered request.`,
    );
    const counted = ["docs/evaluation-e2e-openai-ledger.json", "docs/evaluation-e2e-openai-pace.json"].map((path) => {
      const d = defaultOf(runOf(path)) as E2eOpenAiPolicy;
      const refused = Object.values(d.refusalsByReason ?? {}).reduce((a, b) => a + b, 0);
      return {
        broken: brokenShare(d.ledger as PromiseOutcomes),
        refused: (refused / seeds).toFixed(1),
        attempts: d.attemptsPerOffered.toFixed(3),
      };
    });
    expect(flat).toContain(
      `The real router broke ${counted[0]?.broken}% and ${counted[1]?.broken}% in the two default-only runs that counted them, and refused ${counted[0]?.refused} and ${counted[1]?.refused} attempts a seed, with ${counted[0]?.attempts} and ${counted[1]?.attempts} attempts per offered request: within what the replayed twins span.`,
    );
    // "within what the replayed twins span": the real counts between those of the two twins of their default.
    const [twinsBroken, twinsRefused] = [then.broken, then.refused];
    for (const r of counted) {
      expect(Number(r.broken)).toBeGreaterThanOrEqual(Math.min(...twinsBroken));
      expect(Number(r.broken)).toBeLessThanOrEqual(Math.max(...twinsBroken));
      expect(Number(r.refused)).toBeGreaterThanOrEqual(Math.min(...twinsRefused));
      expect(Number(r.refused)).toBeLessThanOrEqual(Math.max(...twinsRefused));
    }
    // The targets in the replayed twins, and the real runs' worst gaps.
    const twinWorst = replay.twins.map((t) => {
      const check = checkE2eTargets(
        t.policies.map((p) => ({ ...p, requests: 1 })),
        DEFAULT_POLICY_ID,
      );
      expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
      return check?.worst;
    });
    const runWorst = RUNS_11_AND_12.map((path) => checkE2eTargets(runOf(path).policies, DEFAULT_POLICY_ID)?.worst);
    expect(flat).toContain(
      `Replayed, the default meets every target in both twins, with its worst gap at ${twinWorst[0]?.horizonS} s (${(100 * (twinWorst[0]?.gap ?? 0)).toFixed(1)} points from a cold router, ${(100 * (twinWorst[1]?.gap ?? 0)).toFixed(1)} after a quiet spell) where the real runs put it at ${(100 * (runWorst[0]?.gap ?? 0)).toFixed(1)} (at ${runWorst[0]?.horizonS} s) and ${(100 * (runWorst[1]?.gap ?? 0)).toFixed(1)} (at ${runWorst[1]?.horizonS} s).`,
    );
    expect(twinWorst[1]?.horizonS).toBe(twinWorst[0]?.horizonS);
  });

  it("backs docs/benchmarks.md's promise kept when placed, end to end: every target met against runs 11 and 12", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const today = runOf("docs/evaluation-e2e-openai-kept-when-placed.json");
    const before = runOf("docs/evaluation-e2e-openai-promise-trust.json");
    expectBenchmarkRows(bench, today);
    for (const path of RUNS_11_AND_12)
      expect(
        checkE2eTargets(
          runOf(path).policies.map((p) => (p.id === DEFAULT_POLICY_ID ? defaultOf(today) : p)),
          DEFAULT_POLICY_ID,
        )?.met,
        path,
      ).toEqual({
        served: true,
        curve: true,
        attempts: true,
      });
    const worst = RUNS_11_AND_12.map((path) => {
      const { horizonS, gap } = worstAgainstRun(today, path);
      return `${(100 * gap).toFixed(1)} points (at ${horizonS} s)`;
    });
    const [now, then] = [defaultOf(today), defaultOf(before)] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(flat).toContain(
      `its worst gap is ${worst[0]} and ${worst[1]} (a positive gap: ahead of the best other policy at every horizon), and it makes ${now.attemptsPerOffered.toFixed(3)} attempts per offered request, where the run before the change (above) made ${then.attemptsPerOffered.toFixed(3)}.`,
    );
    // "differs from that run's by at most 1.6 points (at 60 s), less than the other policies' curves moved".
    const change = curveChange(then, now, { bySize: true });
    expect([change.largestPts, change.atS]).toEqual(["1.6", "60"]);
    expect(flat).toContain("Its curve differs from that run's by at most 1.6 points (at 60 s), less than");
    const moved = otherPoliciesMovedBetweenRuns11And12();
    expect(change.largest).toBeLessThan(moved);
  });

  it("backs docs/benchmarks.md's best effort end to end: that default alone meets every target against runs 11 and 12", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const today = runOf("docs/evaluation-e2e-openai-age-best-effort.json");
    expectBenchmarkRows(bench, today);
    const gaps = RUNS_11_AND_12.map((path) => gapAgainstRun(today, path));
    const before: string[] = [];
    const attempts: string[] = [];
    for (const path of RUNS_11_AND_12) {
      const run = runOf(path);
      before.push((100 * (checkE2eTargets(run.policies, DEFAULT_POLICY_ID)?.worst.gap ?? Number.NaN)).toFixed(1));
      attempts.push(defaultOf(run).attemptsPerOffered.toFixed(3));
    }
    expect(flat).toContain(
      `its worst gap is ${gaps[0]} and ${gaps[1]} points (at 15 s), where the default before the change had ${before[0]} and ${before[1]} in those runs, and it makes ${defaultOf(today).attemptsPerOffered.toFixed(3)} attempts per offered request against ${attempts[0]} and ${attempts[1]}.`,
    );
    // "The differences are smaller than the other policies moved between runs 11 and 12": curves and attempts.
    const [run11, run12] = [runOf(RUN_11), runOf("docs/evaluation-e2e-openai-run12.json")];
    const horizons = ["5", "15", "30", "60"];
    const curveMove = (a: E2eOpenAiPolicy, b: E2eOpenAiPolicy) =>
      Math.max(...horizons.map((h) => Math.abs((a.servedWithinS[h] ?? 0) - (b.servedWithinS[h] ?? 0))));
    const othersMoved = run11.policies
      .filter((p) => p.id !== DEFAULT_POLICY_ID)
      .map((p) => {
        const q = run12.policies.find((x) => x.id === p.id) as E2eOpenAiPolicy;
        return { curve: curveMove(p, q), attempts: Math.abs(p.attemptsPerOffered - q.attemptsPerOffered) };
      });
    for (const run of [run11, run12]) {
      const [a, b] = [defaultOf(today), defaultOf(run)] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
      expect(curveMove(a, b)).toBeLessThan(Math.max(...othersMoved.map((m) => m.curve)));
      expect(Math.abs(a.attemptsPerOffered - b.attemptsPerOffered)).toBeLessThan(
        Math.max(...othersMoved.map((m) => m.attempts)),
      );
    }
    expect(flat).toContain("The differences are smaller than the other policies moved between runs 11 and 12");
  });

  it("backs docs/retry-after-default.md's claim: the default's final served share is within a point of the best other policy's everywhere", () => {
    expect(read(RETRY_AFTER_DOC)).toContain(
      "its final served share is within a point of the best other policy's in every scenario",
    );
    expect(json.targets.filter((t) => !t.met.served).map((t) => t.scenario)).toEqual([]);
  });

  it("backs docs/benchmarks.md's run 11: its table is docs/evaluation-e2e-openai-run11.json's, every target met", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run10, run11] = [runOf("docs/evaluation-e2e-openai-run10.json"), runOf(RUN_11)];
    expectBenchmarkRows(bench, run11);
    const [d10, d11] = [defaultOf(run10), defaultOf(run11)] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    const check = checkE2eTargets(run11.policies, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    const others = run11.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
    const behind = (h: number) => Math.max(...others.map((p) => p.servedWithinS[h] ?? 0)) - (d11.servedWithinS[h] ?? 0);
    for (const h of [5, 30, 60]) expect(behind(h), `${h} s`).toBeLessThan(0);
    expect(flat).toContain(
      `Every end-to-end target is met: ${d11.served} of ${d11.requests} requests served (>= 99% wanted), at every horizon at least the best other policy minus 2 points (${(100 * behind(15)).toFixed(1)} below \`router_queue_drain_rate\` at 15 s, ahead of every other at 5, 30 and 60 s), and ${d11.attemptsPerOffered.toFixed(3)} attempts per offered request (1.5 wanted).`,
    );
    const share = (row: E2eOpenAiPolicy, n: number) => `${((100 * n) / row.requests).toFixed(1)}%`;
    const made = (row: E2eOpenAiPolicy, k: string) => row.requestsByAttempts?.[k] ?? Number.NaN;
    expect(flat).toContain(
      `${share(d11, d11.requests - made(d11, "1"))} of the requests were refused on their first attempt, and ${share(d11, made(d11, "3"))} were refused twice (${share(d10, made(d10, "3"))} in run 10).`,
    );
    const moved = others.map((p) => {
      const q = run10.policies.find((x) => x.id === p.id) as E2eOpenAiPolicy;
      const curve = Math.max(
        ...[5, 15, 30, 60].map((h) => Math.abs((p.servedWithinS[h] ?? 0) - (q.servedWithinS[h] ?? 0))),
      );
      return { curve: 100 * curve, attempts: Math.abs(p.attemptsPerOffered - q.attemptsPerOffered) };
    });
    const at = (row: E2eOpenAiPolicy, h: number) => row.servedWithinS[h] ?? Number.NaN;
    expect(flat).toContain(
      `the default's attempts per offered request fell from ${d10.attemptsPerOffered.toFixed(3)} to ${d11.attemptsPerOffered.toFixed(3)}, its share served within 15 s rose by ${(100 * (at(d11, 15) - at(d10, 15))).toFixed(1)} points and within 30 s fell by ${(100 * (at(d10, 30) - at(d11, 30))).toFixed(1)}; the other policies, unchanged, moved by up to ${Math.max(...moved.map((m) => m.curve)).toFixed(1)} points and ${Math.max(...moved.map((m) => m.attempts)).toFixed(3)} attempts between the two runs.`,
    );
    const s30 = run11.policies.find((p) => p.id === "static-30") as E2eOpenAiPolicy;
    const ahead = [5, 15, 30, 60].map((h) => (100 * (at(d11, h) - at(s30, h))).toFixed(1));
    for (const a of ahead) expect(Number(a)).toBeGreaterThan(0);
    expect(flat).toContain(
      `the default serves more within 5, 15, 30 and 60 s (by ${ahead.slice(0, 3).join(", ")} and ${ahead[3]} points) with ${(s30.attemptsPerOffered - d11.attemptsPerOffered).toFixed(3)} fewer attempts per offered request.`,
    );
    const attempts = (d11.perSeed ?? []).map((s) => s.attemptsPerOffered);
    expect(flat).toContain(
      `the default's attempts per offered request run from ${Math.min(...attempts).toFixed(3)} to ${Math.max(...attempts).toFixed(3)} (at most 1.5 in ${attempts.filter((a) => a <= 1.5).length} of ${attempts.length} seeds).`,
    );
  });

  it("backs docs/benchmarks.md's run 12: the same command again, its movement and its seed-by-seed spread", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run11, run12] = [runOf(RUN_11), runOf("docs/evaluation-e2e-openai-run12.json")];
    expectBenchmarkRows(bench, run12);
    expect(checkE2eTargets(run12.policies, DEFAULT_POLICY_ID)?.met).toEqual({
      served: true,
      curve: true,
      attempts: true,
    });
    for (const sentence of repeatSentences(run11, run12, "run 11", "run 12")) expect(flat).toContain(sentence);
  });

  it("backs docs/benchmarks.md's run 13: today's default beside every policy, the commit it ran, every target met", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run13 = runOf(RUN_13);
    expectBenchmarkRows(bench, run13);
    expect(run13.seeds).toEqual(runOf(RUN_11).seeds);
    expect(run13.generatedBy).toBe("npx tsx eval/e2e-openai.ts --seeds 6");
    expect(run13.commit).toMatch(/^[0-9a-f]{12}$/);
    expect(flat).toContain(`and records the commit it ran: \`${run13.commit}\`)`);
    const d13 = defaultOf(run13);
    const check = checkE2eTargets(run13.policies, DEFAULT_POLICY_ID);
    expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
    const others = run13.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
    const behind = (h: number) => Math.max(...others.map((p) => p.servedWithinS[h] ?? 0)) - (d13.servedWithinS[h] ?? 0);
    for (const h of [5, 30, 60]) expect(behind(h), `${h} s`).toBeLessThan(0);
    expect(check?.worst.horizonS).toBe(15);
    expect(flat).toContain(
      `Every end-to-end target is met: ${d13.served} of ${d13.requests} requests served (>= 99% wanted), at every horizon at least the best other policy minus 2 points (${(100 * behind(15)).toFixed(1)} below \`router_queue_drain_rate\` at 15 s, ahead of every other at 5, 30 and 60 s), and ${d13.attemptsPerOffered.toFixed(3)} attempts per offered request (1.5 wanted).`,
    );
    const at = (row: E2eOpenAiPolicy, h: number) => row.servedWithinS[h] ?? Number.NaN;
    const s30 = run13.policies.find((p) => p.id === "static-30") as E2eOpenAiPolicy;
    const ahead = [5, 15, 30, 60].map((h) => (100 * (at(d13, h) - at(s30, h))).toFixed(1));
    for (const a of ahead) expect(Number(a)).toBeGreaterThan(0);
    expect(flat).toContain(
      `the default serves more within 5, 15, 30 and 60 s (by ${ahead.slice(0, 3).join(", ")} and ${ahead[3]} points) with ${(s30.attemptsPerOffered - d13.attemptsPerOffered).toFixed(3)} fewer attempts per offered request.`,
    );
    const moved = RUNS_11_AND_12.map((path) => {
      const m = others.map((p) => movedBetween(runOf(path), run13, p.id));
      return `by up to ${Math.max(...m.map((x) => x.curve)).toFixed(1)} points and ${Math.max(...m.map((x) => x.attempts)).toFixed(3)}`;
    });
    expect(flat).toContain(
      `The other policies, whose code did not change, moved from run 11 ${moved[0]} attempts, and from run 12 ${moved[1]}.`,
    );
    expect(flat).toContain(`${seedBySeedAttempts(d13)}.`);
    const ledger = d13.ledger;
    if (!ledger) throw new Error("run 13 recorded no ledger");
    const ended = ledger.kept + ledger.broken + ledger.noShow;
    const share = (n: number) => `${((100 * n) / ended).toFixed(1)}%`;
    expect(flat).toContain(
      `Its router made ${ledger.made} promises: ${share(ledger.kept)} of those that ended were kept, ${share(ledger.broken)} broken and ${share(ledger.noShow)} no-shows.`,
    );
  });

  for (const [first, again, firstName, againName] of [
    [RUN_13, RUN_14, "run 13", "run 14"],
    [RUN_15, RUN_16, "run 15", "run 16"],
    [RUN_17, RUN_18, "run 17", "run 18"],
  ] as const)
    it(`backs docs/benchmarks.md's ${againName}: ${firstName}'s command again, its movement and its seed-by-seed spread`, () => {
      const bench = read("docs/benchmarks.md");
      const flat = bench.replace(/\s+/g, " ");
      const [firstRun, againRun] = [runOf(first), runOf(again)];
      expectBenchmarkRows(bench, againRun);
      expect(againRun.seeds).toEqual(firstRun.seeds);
      expect(againRun.generatedBy).toBe(`npx tsx eval/e2e-openai.ts --seeds 6 --out ${again}`);
      expect(flat).toContain(`\`${again}\`, commit \`${againRun.commit}\``);
      const check = checkE2eTargets(againRun.policies, DEFAULT_POLICY_ID);
      expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
      const d = defaultOf(againRun);
      expect(flat).toContain(
        `Every end-to-end target is met again: ${d.served} of ${d.requests} requests served, a worst gap of ${(100 * (check?.worst.gap ?? Number.NaN)).toFixed(1)} points (at ${check?.worst.horizonS} s) and ${d.attemptsPerOffered.toFixed(3)} attempts per offered request.`,
      );
      for (const sentence of repeatSentences(firstRun, againRun, firstName, againName))
        expect(flat).toContain(sentence);
    });

  it("backs docs/benchmarks.md's run 15: the default of 2026-12-04 beside every policy, its movement from runs 13 and 14", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run13, run14, run15] = [RUN_13, RUN_14, RUN_15].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    expect(run15.seeds).toEqual(run13.seeds);
    expect(run15.generatedBy).toBe("npx tsx eval/e2e-openai.ts --seeds 6");
    expect(flat).toContain(`the file is now \`${RUN_15}\`; commit \`${run15.commit}\`)`);
    expectEveryPolicyRun(bench, run15);
    const moved = (from: E2eOpenAiRun) => curveMoved(from, run15).byDefault;
    const others = (from: E2eOpenAiRun) => curveMoved(from, run15).byOthers;
    const sameCode = movedBetween(run13, run14, DEFAULT_POLICY_ID).curve.toFixed(1);
    expect(flat).toContain(
      `From run 13 to run 15 the default's completion curve moved by at most ${moved(run13)} points, and from run 14 by at most ${moved(run14)}, as much as it moved between runs 13 and 14 with the same code (${sameCode} points); the other policies, whose code did not change, by up to ${others(run13)} and ${others(run14)} points.`,
    );
    expect(Math.max(Number(moved(run13)), Number(moved(run14)))).toBeLessThanOrEqual(Number(sameCode));
  });

  it("backs docs/benchmarks.md's run 17: today's default beside every policy, its movement from runs 15 and 16", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run15, run16, run17] = [RUN_15, RUN_16, RUN_17].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun, E2eOpenAiRun];
    expect(run17.seeds).toEqual(run15.seeds);
    expect(run17.generatedBy).toBe("npx tsx eval/e2e-openai.ts --seeds 6 --out docs/evaluation-e2e-openai-run17.json");
    expect(flat).toContain(
      `\`${run17.generatedBy}\` (moved to \`${RUN_17}\`, which \`docs/evaluation.md\` renders; commit \`${run17.commit}\`)`,
    );
    expectEveryPolicyRun(bench, run17);
    const d17 = defaultOf(run17);
    const moved = (from: E2eOpenAiRun) => curveMoved(from, run17).byDefault;
    const others = (from: E2eOpenAiRun) => curveMoved(from, run17).byOthers;
    const sameCode = movedBetween(run15, run16, DEFAULT_POLICY_ID).curve.toFixed(1);
    const [d15, d16] = [defaultOf(run15), defaultOf(run16)] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(flat).toContain(
      `From run 15 to run 17 the default's completion curve moved by at most ${moved(run15)} points, and from run 16 by at most ${moved(run16)}, where it moved by ${sameCode} between runs 15 and 16 with the same code; the other policies, whose code did not change, by up to ${others(run15)} and ${others(run16)} points. Its attempts per offered request went from ${d15.attemptsPerOffered.toFixed(3)} and ${d16.attemptsPerOffered.toFixed(3)} to ${d17.attemptsPerOffered.toFixed(3)}.`,
    );
    expect(d17.attemptsPerOffered).toBeLessThan(Math.min(d15.attemptsPerOffered, d16.attemptsPerOffered));
    const broken = (d: E2eOpenAiPolicy) => {
      if (!d.ledger) throw new Error("a run of the default recorded no ledger");
      const ended = d.ledger.kept + d.ledger.broken + d.ledger.noShow;
      return `${((100 * d.ledger.broken) / ended).toFixed(1)}% (${d.ledger.broken} of ${ended})`;
    };
    const third = (d: E2eOpenAiPolicy) => d.requestsByAttempts?.["3"] ?? Number.NaN;
    expect(flat).toContain(
      `Its router broke ${broken(d17)} of its promises, against ${broken(d15)} and ${broken(d16)} in runs 15 and 16, and ${third(d17)} requests took a third attempt, against ${third(d15)} and ${third(d16)}.`,
    );
  });

  it("backs docs/benchmarks.md's room for header-less clients end to end: every target met against runs 13 and 14", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf("docs/evaluation-e2e-openai-sdk-room.json");
    expectBenchmarkRows(bench, run);
    expect(flat).toContain(`commit \`${run.commit}\`, nothing else running`);
    const own = run.policies.find((p) => p.id === `${DEFAULT_POLICY_ID}:sdk-room-5pct`) as E2eOpenAiPolicy;
    // In the default's place: the same check as the default-only runs.
    const asDefault = { ...run, policies: [{ ...own, id: DEFAULT_POLICY_ID }] };
    const worst = worstGapPtsAt(asDefault, [RUN_13, RUN_14], 15);
    const [d13, d14] = [defaultOf(runOf(RUN_13)), defaultOf(runOf(RUN_14))];
    expect(flat).toContain(
      `its worst gap is ${worst[0]} and ${worst[1]} points (at 15 s), and it makes ${own.attemptsPerOffered.toFixed(3)} attempts per offered request, where the default made ${d13.attemptsPerOffered.toFixed(3)} and ${d14.attemptsPerOffered.toFixed(3)} in those runs.`,
    );
    const [from13, from14] = [d13, d14].map((d) => curveChange(d, own, { bySize: true }).largestPts);
    const defaultMoved = movedBetween(runOf(RUN_13), runOf(RUN_14), DEFAULT_POLICY_ID).curve.toFixed(1);
    expect(flat).toContain(
      `Its curve differs from the default's in them by at most ${from13} and ${from14} points, as much as the default's own curve moved between runs 13 and 14 with the same code (${defaultMoved} points).`,
    );
    expect(Math.max(Number(from13), Number(from14))).toBeLessThanOrEqual(Number(defaultMoved) + 0.1);
  });

  it("backs docs/benchmarks.md's refusals remembered until placed, end to end: served and curve met, attempts on the line", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf("docs/evaluation-e2e-openai-refusal-memory.json");
    expectBenchmarkRows(bench, run);
    expect(flat).toContain(`commit \`${run.commit}\`, nothing else running`);
    const own = defaultOf(run) as E2eOpenAiPolicy;
    const worst = worstGapPtsAt(run, [RUN_15, RUN_16], 15, { served: true, curve: true, attempts: false });
    const [d15, d16] = [defaultOf(runOf(RUN_15)), defaultOf(runOf(RUN_16))] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    expect(own.attemptsPerOffered).toBeGreaterThan(1.5);
    expect(own.attemptsPerOffered).toBeLessThan(1.502);
    expect(flat).toContain(
      `its worst gap is ${worst[0]} and ${worst[1]} points (at 15 s). It makes ${own.attemptsPerOffered.toFixed(3)} attempts per offered request, where the default made ${d15.attemptsPerOffered.toFixed(3)} and ${d16.attemptsPerOffered.toFixed(3)} in those runs: **the attempts target (at most 1.5) is missed in this run, by a thousandth**.`,
    );
    const refusals = own.attemptsByStatus?.["429"] ?? Number.NaN;
    expect(flat).toContain(`(${own.refusalsByReason?.queue_timeout} of this run's ${refusals} refusals)`);
    const seeds = (own.perSeed ?? []).map((x) => x.attemptsPerOffered);
    expect(flat).toContain(
      `seed by seed they run from ${Math.min(...seeds).toFixed(3)} to ${Math.max(...seeds).toFixed(3)} here`,
    );
    expect(flat).toContain(
      `the default's own attempts moved from ${d15.attemptsPerOffered.toFixed(3)} to ${d16.attemptsPerOffered.toFixed(3)} between runs 15 and 16`,
    );
  });

  it("backs docs/benchmarks.md's floor's moving means end to end: every target met, fewer attempts and broken promises", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const run = runOf("docs/evaluation-e2e-openai-moving-floor.json");
    const before = defaultOf(runOf("docs/evaluation-e2e-openai-refusal-memory.json")) as E2eOpenAiPolicy;
    expectBenchmarkRows(bench, run);
    expect(flat).toContain(`commit \`${run.commit}\`, nothing else running`);
    const own = defaultOf(run) as E2eOpenAiPolicy;
    const worst = worstGapPtsAt(run, [RUN_15, RUN_16], 15, { served: true, curve: true, attempts: true });
    expect(own.attemptsPerOffered).toBeLessThanOrEqual(1.5);
    expect(flat).toContain(
      `it meets every end-to-end target: its worst gap is ${worst[0]} and ${worst[1]} points (at 15 s), and it makes ${own.attemptsPerOffered.toFixed(3)} attempts per offered request, where the default without the change made ${before.attemptsPerOffered.toFixed(3)} on the same seeds`,
    );
    const ledger = (p: E2eOpenAiPolicy) => p.ledger as PromiseOutcomes;
    const share = (p: E2eOpenAiPolicy) =>
      ((100 * ledger(p).broken) / (ledger(p).kept + ledger(p).broken + ledger(p).noShow)).toFixed(1);
    const thirds = (p: E2eOpenAiPolicy) => p.requestsByAttempts?.["3"];
    expect(flat).toContain(
      `Its router broke ${share(own)}% of its promises (${ledger(own).broken} of ${ledger(own).made}) against ${share(before)}% (${ledger(before).broken} of ${ledger(before).made}), refused ${own.attemptsByStatus?.["429"]} attempts against ${before.attemptsByStatus?.["429"]}, and ${thirds(own)} requests took a third attempt against ${thirds(before)}.`,
    );
    // "The replaying twin had said as much": after a quiet spell, the default against fast-floor-only.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    const [now, then] = [DEFAULT_POLICY_ID, `${DEFAULT_POLICY_ID}:fast-floor-only`].map(
      (id) => twinTargets(twin, "after-quiet", id, DEFAULT_POLICY_ID)?.attemptsPerOffered ?? Number.NaN,
    ) as [number, number];
    expect(flat).toContain(
      `${now.toFixed(3)} attempts per offered request after a quiet spell against ${then.toFixed(3)}`,
    );
    const seeds = (own.perSeed ?? []).map((x) => x.attemptsPerOffered);
    expect(flat).toContain(
      `Seed by seed the attempts run from ${Math.min(...seeds).toFixed(3)} to ${Math.max(...seeds).toFixed(3)} (at most 1.5 in ${seeds.filter((a) => a <= 1.5).length} of ${seeds.length} seeds).`,
    );
    // "the default's own attempts moved by a third of this difference between runs 15 and 16".
    const [d15, d16] = [defaultOf(runOf(RUN_15)), defaultOf(runOf(RUN_16))] as [E2eOpenAiPolicy, E2eOpenAiPolicy];
    const ratio =
      Math.abs(d15.attemptsPerOffered - d16.attemptsPerOffered) / (before.attemptsPerOffered - own.attemptsPerOffered);
    expect(Math.abs(ratio - 1 / 3)).toBeLessThan(0.05);
    // The same on the six held-out arrival seeds, held to that run's other policies.
    const heldRun = runOf("docs/evaluation-e2e-openai-moving-floor-held.json");
    const heldOwn = defaultOf(heldRun) as E2eOpenAiPolicy;
    const heldBefore = defaultOf(runOf(RUN_HELD)) as E2eOpenAiPolicy;
    expectBenchmarkRows(bench, heldRun);
    expect(heldRun.seeds).toEqual(runOf(RUN_HELD).seeds);
    expect(flat).toContain(`commit \`${heldRun.commit}\`, nothing else running`);
    const [heldGap] = worstGapPtsAt(heldRun, [RUN_HELD], 15, { served: true, curve: true, attempts: true });
    expect(flat).toContain(
      `its worst gap is ${heldGap} points (at 15 s), and it makes ${heldOwn.attemptsPerOffered.toFixed(3)} attempts per offered request, where the default of that run (before both changes of 2026-12-05) made ${heldBefore.attemptsPerOffered.toFixed(3)}; its router broke ${share(heldOwn)}% of its promises against ${share(heldBefore)}%.`,
    );
    const heldSeeds = (heldOwn.perSeed ?? []).map((x) => x.attemptsPerOffered);
    expect(flat).toContain(
      `Seed by seed the attempts run from ${Math.min(...heldSeeds).toFixed(3)} to ${Math.max(...heldSeeds).toFixed(3)} (at most 1.5 in ${heldSeeds.filter((a) => a <= 1.5).length} of ${heldSeeds.length} seeds).`,
    );
  });

  it("backs docs/benchmarks.md's run 9: its table is its JSON's, and its paragraph its figures", () => {
    const run = JSON.parse(read("docs/evaluation-e2e-openai-run9.json")) as E2eOpenAiRun;
    const bench = read("docs/benchmarks.md");
    expectBenchmarkRows(bench, run);
    // The proxy's counts, as the latest run's paragraph quotes them.
    const def = run.policies.find((p) => p.id === DEFAULT_POLICY_ID);
    const made = def?.requestsByAttempts ?? {};
    const share = (n: number) => `${((100 * n) / (def?.requests ?? 1)).toFixed(1)}%`;
    expect(bench.replace(/\s+/g, " ")).toContain(
      `${share((def?.requests ?? 0) - (made["1"] ?? 0))} of the requests were refused on their first attempt, and ${share(made["3"] ?? 0)} were refused twice.`,
    );
    expect(Object.keys(def?.attemptsByStatus ?? {}).sort()).toEqual(["200", "429"]);
    // Its comparison with static 30 s.
    const s30 = run.policies.find((p) => p.id === "static-30");
    const ahead = [5, 15, 30, 60].map((h) =>
      (100 * ((def?.servedWithinS[h] ?? 0) - (s30?.servedWithinS[h] ?? 0))).toFixed(1),
    );
    expect(bench.replace(/\s+/g, " ")).toContain(
      `the default serves more within 5, 15, 30 and 60 s (by ${ahead.slice(0, 3).join(", ")} and ${ahead[3]} points) with ${((s30?.attemptsPerOffered ?? 0) - (def?.attemptsPerOffered ?? 0)).toFixed(3)} fewer attempts per offered request, and ${(100 * ((s30?.servedFraction ?? 0) - (def?.servedFraction ?? 0))).toFixed(1)} points fewer requests in all.`,
    );
    for (const a of ahead) expect(Number(a)).toBeGreaterThan(0);
    // Within 2 points of the best other policy at every horizon, and where it is behind.
    const behind = (h: number) =>
      100 *
      (Math.max(...run.policies.filter((p) => p.id !== DEFAULT_POLICY_ID).map((p) => p.servedWithinS[h] ?? 0)) -
        (def?.servedWithinS[h] ?? 0));
    for (const h of [5, 15, 30, 60]) expect(behind(h), `${h} s`).toBeLessThan(2);
    expect(bench.replace(/\s+/g, " ")).toContain(
      `(${behind(5).toFixed(1)} below \`router_queue_drain_rate\` at 5 s and at 15 s, ahead of every other at 30 and 60 s)`,
    );
    expect(behind(15).toFixed(1)).toBe(behind(5).toFixed(1));
    for (const h of [30, 60]) expect(behind(h)).toBeLessThan(0);
  });

  it("backs docs/benchmarks.md's burst persistence experiment: its table is its JSON's, 15 s within 2 points", () => {
    const run = JSON.parse(read("docs/evaluation-e2e-openai-burst-persistence.json")) as E2eOpenAiRun;
    const bench = read("docs/benchmarks.md");
    expectBenchmarkRows(bench, run);
    const at15 = (id: string) => run.policies.find((q) => q.id === id)?.servedWithinS[15] ?? Number.NaN;
    const gap = 100 * (at15("router_queue_drain_rate") - at15(DEFAULT_POLICY_ID));
    expect(gap).toBeGreaterThan(1.85);
    expect(gap).toBeLessThan(2);
    expect(bench.replace(/\s+/g, " ")).toContain(
      `(${gap.toFixed(1)} points below \`router_queue_drain_rate\`, where 2 are allowed)`,
    );
  });

  it("backs docs/benchmarks.md's queue refill end to end: before it the attempts target was missed, with it met", () => {
    const bench = read("docs/benchmarks.md");
    const [b, a] = defaultRowsOfAb(
      bench,
      "docs/evaluation-e2e-openai-before-queue-refill.json",
      "docs/evaluation-e2e-openai-queue-refill-floor.json",
    );
    expect(b.attemptsPerOffered).toBeGreaterThan(1.5);
    expect(a.attemptsPerOffered).toBeLessThanOrEqual(1.5);
    expect(a.servedFraction).toBeGreaterThan(b.servedFraction);
    for (const h of [30, 60]) expect(a.servedWithinS[h] ?? 0).toBeGreaterThan(b.servedWithinS[h] ?? 1);
    const fewerAt15 = (100 * ((b.servedWithinS[15] ?? 0) - (a.servedWithinS[15] ?? 0))).toFixed(1);
    expect(bench.replace(/\s+/g, " ")).toContain(
      `serves more in all and within 30 and 60 s, and ${fewerAt15} points fewer within 15 s.`,
    );
    // Run 9, the same code as `after` on the same seeds, moved its attempts by more than the change did.
    const run9 = defaultOf(runOf("docs/evaluation-e2e-openai-run9.json"));
    expect(run9?.attemptsPerOffered).toBeGreaterThan(1.5);
    expect(Math.abs((run9?.attemptsPerOffered ?? 0) - a.attemptsPerOffered)).toBeGreaterThan(
      Math.abs(b.attemptsPerOffered - a.attemptsPerOffered),
    );
    expect(bench.replace(/\s+/g, " ")).toContain(
      `fell from ${b.attemptsPerOffered.toFixed(3)} to ${a.attemptsPerOffered.toFixed(3)} across the 1.5 the issue wants, but run 9 (above), the same code on the same seeds, made ${run9?.attemptsPerOffered.toFixed(3)}`,
    );
    // Run 8, the previous default's last run of every policy, keeps its table.
    expectBenchmarkRows(bench, runOf("docs/evaluation-e2e-openai-run8.json"));
    // docs/retry-policy.md fills its queue refill bullets from these runs and the twin.
    expect(read("docs/retry-policy.md")).not.toContain("(not run)");
  });

  it("backs docs/benchmarks.md's overload floor statistic end to end: the median meets attempts, not 15 s", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [l, m] = defaultRowsOfAb(
      bench,
      "docs/evaluation-e2e-openai-lowest-floor.json",
      "docs/evaluation-e2e-openai-median-floor.json",
    );
    const run9 = runOf("docs/evaluation-e2e-openai-run9.json");
    const twice = (row: typeof l) => (100 * (row.requestsByAttempts?.["3"] ?? Number.NaN)) / row.requests;
    expect(m.attemptsPerOffered).toBeLessThanOrEqual(1.5);
    expect(m.attemptsPerOffered).toBeLessThan(l.attemptsPerOffered);
    for (const h of [15, 30]) expect(m.servedWithinS[h] ?? 1).toBeLessThan(l.servedWithinS[h] ?? 0);
    const fewer = (h: number) => (100 * ((l.servedWithinS[h] ?? 0) - (m.servedWithinS[h] ?? 0))).toFixed(1);
    expect(flat).toContain(
      `the median makes ${m.attemptsPerOffered.toFixed(3)} attempts per offered request against ${l.attemptsPerOffered.toFixed(3)}, refuses ${twice(m).toFixed(1)}% of the requests twice against ${twice(l).toFixed(1)}%, and serves ${fewer(15)} and ${fewer(30)} points fewer within 15 and 30 s.`,
    );
    // Against run 9's router_queue_drain_rate at 15 s: the median is further behind than the issue allows.
    const rqdr15 = run9.policies.find((p) => p.id === "router_queue_drain_rate")?.servedWithinS[15] ?? Number.NaN;
    const behind = (row: BenchmarkRow) => 100 * (rqdr15 - (row.servedWithinS[15] ?? 0));
    expect(behind(m)).toBeGreaterThan(2);
    expect(flat).toContain(
      `(${(100 * rqdr15).toFixed(1)}% in run 9): the median ${behind(m).toFixed(1)} points behind it at 15 s and the lowest ${behind(l).toFixed(1)}.`,
    );
    const earlier = (path: string) => defaultOf(runOf(path)).attemptsPerOffered.toFixed(3);
    expect(flat).toContain(
      `(${l.attemptsPerOffered.toFixed(3)} here, ${earlier("docs/evaluation-e2e-openai-queue-refill-floor.json")} and ${earlier("docs/evaluation-e2e-openai-run9.json")} in the runs above)`,
    );
  });

  it("backs docs/benchmarks.md's run 10: the same command again, its seed-by-seed spread and its cold first seed", () => {
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    const [run9, run10] = [
      runOf("docs/evaluation-e2e-openai-run9.json"),
      runOf("docs/evaluation-e2e-openai-run10.json"),
    ];
    expectBenchmarkRows(bench, run10);
    const moves = run10.policies.map((p) => {
      const q = run9.policies.find((x) => x.id === p.id) as BenchmarkRow;
      const curve = Math.max(
        ...[5, 15, 30, 60].map((h) => Math.abs((p.servedWithinS[h] ?? 0) - (q.servedWithinS[h] ?? 0))),
      );
      return { id: p.id, curve: 100 * curve, attempts: Math.abs(p.attemptsPerOffered - q.attemptsPerOffered) };
    });
    const [def, others] = [
      moves.find((m) => m.id === DEFAULT_POLICY_ID),
      moves.filter((m) => m.id !== DEFAULT_POLICY_ID),
    ];
    const [a9, a10] = [defaultOf(run9).attemptsPerOffered, defaultOf(run10).attemptsPerOffered];
    expect(flat).toContain(
      `From run 9 to run 10 the default's completion curve moved by at most ${def?.curve.toFixed(1)} points and its attempts per offered request by ${Math.abs(a9 - a10).toFixed(3)} (${a9.toFixed(3)} to ${a10.toFixed(3)}); the other policies' curves by up to ${Math.max(...others.map((m) => m.curve)).toFixed(1)} points and their attempts by up to ${Math.max(...others.map((m) => m.attempts)).toFixed(3)}.`,
    );
    const seeds = (
      defaultOf(run10) as BenchmarkRow & {
        perSeed: { seed: number; attemptsPerOffered: number; servedWithinS: Record<string, number> }[];
      }
    ).perSeed;
    const attempts = seeds.map((s) => s.attemptsPerOffered);
    expect(flat).toContain(
      `the default's attempts per offered request run from ${Math.min(...attempts).toFixed(3)} to ${Math.max(...attempts).toFixed(3)} in run 10`,
    );
    expect(Math.max(...attempts) - Math.min(...attempts)).toBeGreaterThan(10 * Math.abs(a10 - 1.5));
    // Seed 2026, run first against each policy's router: the default's fewest attempts but one, its lowest 15 s share.
    const first = seeds.find((s) => s.seed === 2026);
    const byAttempts = [...seeds].sort((x, y) => x.attemptsPerOffered - y.attemptsPerOffered);
    expect(byAttempts[1]?.seed).toBe(2026);
    expect(Math.min(...seeds.map((s) => s.servedWithinS["15"] ?? 1))).toBe(first?.servedWithinS["15"]);
    const twin = JSON.parse(read("docs/e2e-twin.json")) as { twins: { id: string; policies: BenchmarkRow[] }[] };
    // Run 10's default is the twin's `before-median-floor` row since run 11 changed the default.
    const twinDefault = (id: string) =>
      twin.twins
        .find((t) => t.id === id)
        ?.policies.find((p) => p.id === `${DEFAULT_POLICY_ID}:before-median-floor`) as BenchmarkRow;
    const [cold, quiet] = [twinDefault("cold"), twinDefault("after-quiet")];
    const pair = (r: { attemptsPerOffered: number; servedWithinS: Record<string, number> }) =>
      `${r.attemptsPerOffered.toFixed(3)} and ${(100 * (r.servedWithinS["15"] ?? 0)).toFixed(1)}%`;
    expect(flat).toContain(
      `(${first ? pair(first) : "no seed 2026"}), as the simulator's twin of that default (row \`before-median-floor\` since run 11) from a cold router has against its twin after a quiet spell (${pair(cold)}, against ${pair(quiet)}).`,
    );
  });

  it("backs docs/benchmarks.md's simulator twin of the end-to-end run: what it says of the default and its variants", () => {
    const twin = JSON.parse(read("docs/e2e-twin.json")) as { twins: { id: string; policies: BenchmarkRow[] }[] };
    const bench = read("docs/benchmarks.md");
    const flat = bench.replace(/\s+/g, " ");
    for (const t of twin.twins) expectBenchmarkRows(bench, t);
    const of = (id: string, policy = DEFAULT_POLICY_ID) =>
      twin.twins.find((t) => t.id === id)?.policies.find((p) => p.id === policy) as BenchmarkRow;
    const [quiet, cold] = [of("after-quiet"), of("cold")];
    const run11 = runOf(RUN_11);
    const e2e = (policy: string) => run11.policies.find((p) => p.id === policy) as BenchmarkRow;
    const att = (row: BenchmarkRow) => row.attemptsPerOffered.toFixed(3);
    expect(flat).toContain(
      `After a quiet spell the twin's default makes ${att(quiet)} attempts per offered request and the cold twin ${att(cold)}, where the end-to-end run 11 made ${att(e2e(DEFAULT_POLICY_ID))}.`,
    );
    // Static 30 s reads no history: the end-to-end run's extra attempts over the twin are about the same under it.
    const [s30Twin, s30E2e] = [of("after-quiet", "static-30"), e2e("static-30")];
    const extra = [
      e2e(DEFAULT_POLICY_ID).attemptsPerOffered - quiet.attemptsPerOffered,
      s30E2e.attemptsPerOffered - s30Twin.attemptsPerOffered,
    ];
    expect(Math.abs((extra[0] ?? 0) - (extra[1] ?? 0))).toBeLessThan(0.01);
    expect(flat).toContain(
      `makes ${att(s30Twin)} in the twin after a quiet spell and ${att(s30E2e)} in run 11: the end-to-end run makes about as many more attempts than the twin under either policy (${extra.map((x) => x.toFixed(3)).join(" and ")})`,
    );
    const before = {
      quiet: of("after-quiet", "booked_capacity:before-median-floor"),
      cold: of("cold", "booked_capacity:before-median-floor"),
    };
    expect(flat).toContain(
      `read that history more: ${att(before.quiet)} attempts after a quiet spell and ${att(before.cold)} cold, ${pct(before.quiet.servedWithinS[15])} and ${pct(before.cold.servedWithinS[15])} served within 15 s, where today's serves ${pct(quiet.servedWithinS[15])} and ${pct(cold.servedWithinS[15])}.`,
    );
    expect(Math.abs(before.quiet.attemptsPerOffered - before.cold.attemptsPerOffered)).toBeGreaterThan(
      Math.abs(quiet.attemptsPerOffered - cold.attemptsPerOffered),
    );
    const persistent = of("after-quiet", "booked_capacity:burst-persistence");
    const at30 = (row: BenchmarkRow | undefined) => row?.servedWithinS[30] ?? Number.NaN;
    const firstVersion = defaultOf(runOf("docs/evaluation-e2e-openai-burst-persistence.json"));
    const run7 = defaultOf(runOf("docs/evaluation-e2e-openai-run7.json"));
    expect(Math.round(100 * (at30(run7) - at30(firstVersion)))).toBe(6);
    expect(flat).toContain(
      `after a quiet spell its 30 s share is ${pct(at30(persistent))} against the default's ${pct(at30(quiet))}, where the first version lost six points end to end`,
    );
    const refillAlone = of("after-quiet", "booked_capacity:no-overload-floor");
    expect(refillAlone.attemptsPerOffered).toBeGreaterThan(1.5);
    expect(quiet.attemptsPerOffered).toBeLessThanOrEqual(1.5);
    expect(flat).toContain(
      `The \`no-overload-floor\` row (queue refill alone) makes ${att(refillAlone)} attempts per offered request after a quiet spell, above the issue's 1.5, where the default makes ${att(quiet)}`,
    );
    const [noRefill, beforeRefill] = ["no-queue-refill", "before-queue-refill"].map((id) => ({
      quiet: of("after-quiet", `booked_capacity:${id}`),
      cold: of("cold", `booked_capacity:${id}`),
    })) as [{ quiet: BenchmarkRow; cold: BenchmarkRow }, { quiet: BenchmarkRow; cold: BenchmarkRow }];
    for (const v of [noRefill, beforeRefill]) {
      expect(at30(v.quiet)).toBeLessThan(at30(quiet));
      expect(at30(v.cold)).toBeLessThan(at30(cold));
    }
    expect(flat).toContain(
      `the twin serves less within 30 s after a quiet spell (${pct(at30(noRefill.quiet))} and ${pct(at30(beforeRefill.quiet))} against ${pct(at30(quiet))}) and from a cold router (${pct(at30(noRefill.cold))} and ${pct(at30(beforeRefill.cold))} against ${pct(at30(cold))}).`,
    );
    expect(at30(before.cold)).toBeLessThan(at30(beforeRefill.cold));
    expect(flat).toContain(
      `\`before-median-floor\` served ${pct(at30(before.cold))} within 30 s from a cold router, against \`before-queue-refill\`'s ${pct(at30(beforeRefill.cold))}.`,
    );
    // "`best-effort-second-half` has today's default's figures in both twins, and `recurring-best-effort-off` ...
    // differs from it by one request of six seeds served within 120 s from a cold router and not at all after a quiet
    // spell".
    const secondHalf = (id: string) => of(id, "booked_capacity:best-effort-second-half");
    expect({ ...secondHalf("after-quiet"), id: DEFAULT_POLICY_ID }).toEqual(quiet);
    expect({ ...secondHalf("cold"), id: DEFAULT_POLICY_ID }).toEqual(cold);
    const recurOff = (id: string) => of(id, "booked_capacity:recurring-best-effort-off");
    expect({ ...recurOff("after-quiet"), id: DEFAULT_POLICY_ID }).toEqual(quiet);
    expect({ ...recurOff("cold"), servedWithinS: cold.servedWithinS, id: DEFAULT_POLICY_ID }).toEqual(cold);
    // One request: the twin records no count of requests, but every share it records is a multiple of one request's.
    const short120 = (recurOff("cold").servedWithinS[120] ?? 0) - (cold.servedWithinS[120] ?? 0);
    expect(short120).toBeGreaterThan(0);
    const requests = Math.round(1 / short120);
    for (const share of Object.values(cold.servedWithinS))
      expect(Math.abs(share * requests - Math.round(share * requests))).toBeLessThan(1e-6);
    for (const h of [5, 15, 30, 60]) expect(recurOff("cold").servedWithinS[h]).toBe(cold.servedWithinS[h]);
    expect(flat).toContain(
      "has today's default's figures in both twins, and `recurring-best-effort-off` (the rule before the longer best effort in recurring overloads, 2026-12-07) differs from it by one request of six seeds served within 120 s from a cold router and not at all after a quiet spell",
    );
  });

  it("backs docs/retry-policy.md's account of burst-10x at 5 s: slower on a replica than the policy that lost the burst", () => {
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "In `burst-10x` the default is behind `none` (no hint: the SDKs' backoff alone) at 5 s.",
    );
    const scenario = json.scenarios.find((s) => s.name === "burst-10x") as ScenarioResult;
    const at5 = (id: string) => scenario.policies.find((p) => p.id === id)?.servedWithinS[5] ?? Number.NaN;
    expect(at5(DEFAULT_POLICY_ID)).toBeLessThan(at5("none"));
    const metrics = (id: string) => scenario.policies.find((p) => p.id === id)?.metrics;
    expect(metrics(DEFAULT_POLICY_ID)?.onReplicaP50S ?? 0).toBeGreaterThan(metrics("none")?.onReplicaP50S ?? Infinity);
    expect(metrics("none")?.servedFraction ?? 1).toBeLessThan(0.9);
  });

  it("backs docs/retry-policy.md's claim: the end-to-end ranking differs from the simulator's in one pair, not the default's", () => {
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "Its ranking of the policies agrees with the simulator's on the same stack except for one pair of other policies, on one measure; every pair with the default is ordered alike",
    );
    const run = JSON.parse(read(RUN_17)) as E2eOpenAiRun;
    const demo = json.scenarios.find((s) => s.name === "demo-burst-3x") as ScenarioResult;
    const rows = e2eOrderings(run, demo);
    expect(rows.filter((r) => r.opposite.length > 0).map((r) => r.opposite.length)).toEqual([1]);
    for (const r of rows) for (const pair of r.opposite) expect(pair).not.toContain(DEFAULT_POLICY_ID);
    expect(read("docs/evaluation.md")).toContain("**Same ordering as the simulator?**");
  });

  it("backs docs/retry-after-default.md's claim on clients without SDK headers: within 5 points of SDK clients everywhere", () => {
    expect(read(RETRY_AFTER_DOC).replace(/\s+/g, " ")).toContain(
      "are served within 5 points of SDK clients in every scenario, on the tuning seeds and on the held-out ones",
    );
    const tuned = json.scenarios.map((s) => headerClientShares(s, DEFAULT_POLICY_ID));
    const held = (json.heldOut as HeldOutRun).scenarios.map((s) => ({
      name: s.name,
      sdk: s.headerClients.sdk,
      headerless: s.headerClients.headerless ?? undefined,
      python: undefined,
    }));
    for (const shares of [...tuned, ...held]) expect(headerlessMet(shares), shares.name).not.toBe(false);
    expect(tuned.filter((h) => h.headerless !== undefined).length).toBeGreaterThan(8);
  });

  it("backs docs/retry-after-default.md's account of who sets the curve target: at 30 s policies that drop the rest, at 120 s static 30 s", () => {
    const readme = read(RETRY_AFTER_DOC).replace(/\s+/g, " ");
    const owners = envelopeOwners(json.scenarios, json.defaultPolicy);
    const [at30, at120] = [30, 120].map((h) => owners.find((o) => o.horizonS === h)) as [
      (typeof owners)[number],
      (typeof owners)[number],
    ];
    const n = json.scenarios.length;
    const static5 = at30.owners.find((o) => o.policy === "static-5")?.scenarios.length;
    const p = (v: number | undefined) => `${(100 * (v ?? Number.NaN)).toFixed(1)}%`;
    expect(at120.owners.map((o) => o.policy)).toEqual(["static-30"]);
    expect(readme).toContain(
      `at 30 s, in ${at30.finalThere.length} of ${n} scenarios, the best other policy has served every request it ever will (static 5 s in ${static5}; ${p(at30.finalServed?.min)} to ${p(at30.finalServed?.max)}, the rest lost), and at 120 s the best is static 30 s in all ${at120.owners[0]?.scenarios.length}, which serves ${p(at120.bestServed.min)} to ${p(at120.bestServed.max)}.`,
    );
  });

  it("backs the README's summary of the simulator's targets: met and missed, on both seed sets", () => {
    const readme = read("README.md").replace(/\s+/g, " ");
    const quoted = readme.match(
      /it meets the final served share \(within a point of the best other policy\) in (\d+) of (\d+), the attempts \(at most static 30 s's\) in (\d+), the oracle's final served share \(within 5 points\) in (\d+), and \*\*misses the completion curve\*\* \(within 2 points of the best other policy at every horizon\) in (\d+) of (\d+), by (\d+\.\d) to (\d+\.\d) points; on seeds no tuning looked at: (\d+), (\d+), (\d+) and (\d+) of (\d+)\. No other policy meets the curve target in any scenario either, and the default's worst gaps are the smallest of all policies in (\d+) of (\d+)\./,
    );
    expect(quoted).not.toBeNull();
    const q = (quoted as RegExpMatchArray).slice(1).map(Number);
    const n = json.targets.length;
    const met = (checks: TargetCheck[], k: keyof TargetCheck["met"]) => checks.filter((t) => t.met[k]).length;
    const held = (json.heldOut as HeldOutRun).scenarios.map((s) => s.check);
    const missed = json.targets.filter((t) => !t.met.curve).map((t) => -100 * t.worstCurveGap.gap);
    expect(q).toEqual([
      met(json.targets, "served"),
      n,
      met(json.targets, "attempts"),
      met(json.targets, "oracle"),
      n - met(json.targets, "curve"),
      n,
      Number(Math.min(...missed).toFixed(1)),
      Number(Math.max(...missed).toFixed(1)),
      met(held, "served"),
      met(held, "attempts"),
      met(held, "oracle"),
      met(held, "curve"),
      held.length,
      envelopeRows(json.scenarios).find((r) => r.policy === DEFAULT_POLICY_ID)?.nearest,
      json.scenarios.length,
    ]);
    for (const row of envelopeRows(json.scenarios))
      if (row.policy !== DEFAULT_POLICY_ID) expect(row.curveWithin).toBe(0);
    // "On a train of short spikes instead (run 24) it misses the curve target."
    expect(readme).toContain("On a train of short spikes instead (run 24) it misses the curve target.");
    expect(checkE2eTargets(runOf(RUN_24_SPIKES).policies, DEFAULT_POLICY_ID)?.met.curve).toBe(false);
  });

  it("backs docs/retry-after-default.md's account of where the default loses", () => {
    const readme = read(RETRY_AFTER_DOC).replace(/\s+/g, " ");
    const quoted = readme.match(
      /the completion curve against the best other policy at each horizon \(in (\d+) of (\d+) scenarios, by (\d+) to (\d+) points\), the oracle's final served share in (\w+) scenarios?, and attempts against static 30 s in (\w+) \(on seeds/,
    );
    expect(quoted).not.toBeNull();
    const [, curveMisses, scenarios, low, high, oracleMisses, attemptsMisses] = quoted as RegExpMatchArray;
    const words = ["none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"];
    const missed = json.targets.filter((t) => !t.met.curve);
    expect(missed.length).toBe(Number(curveMisses));
    expect(json.targets.length).toBe(Number(scenarios));
    const gaps = missed.map((t) => -100 * t.worstCurveGap.gap);
    expect(Math.round(Math.min(...gaps))).toBe(Number(low));
    expect(Math.round(Math.max(...gaps))).toBe(Number(high));
    expect(words[json.targets.filter((t) => !t.met.oracle).length]).toBe(oracleMisses);
    expect(words[json.targets.filter((t) => !t.met.attempts).length]).toBe(attemptsMisses);
    const heldQuoted = readme.match(
      /\(on seeds no tuning looked at, also there: the curve in (\d+), the oracle in (\w+), attempts in (\w+), and the final served share in (\w+)[;)]/,
    );
    expect(heldQuoted).not.toBeNull();
    const [, heldCurve, heldOracle, heldAttempts, heldServed] = heldQuoted as RegExpMatchArray;
    const held = (json.heldOut as HeldOutRun).scenarios.map((s) => s.check);
    expect(held.filter((t) => !t.met.curve).length).toBe(Number(heldCurve));
    expect(words[held.filter((t) => !t.met.oracle).length]).toBe(heldOracle);
    expect(words[held.filter((t) => !t.met.attempts).length]).toBe(heldAttempts);
    expect(words[held.filter((t) => !t.met.served).length]).toBe(heldServed);
    const sweepQuoted = readme.match(
      /across the queue-bound sweep, the final served share at (\d+) of its (\d+) points, (?:all )?in `(\w[\w-]*)`, where static 30 s serves up to (\d+\.\d) points more/,
    );
    expect(sweepQuoted).not.toBeNull();
    const sweepShort = json.sweeps.filter((s) => !s.targets.met.served);
    expect([sweepShort.length, json.sweeps.length]).toEqual([Number(sweepQuoted?.[1]), Number(sweepQuoted?.[2])]);
    expect(new Set(sweepShort.map((s) => s.scenario))).toEqual(new Set([sweepQuoted?.[3]]));
    const servedOf = (s: SweepPoint, id: string) => s.policies.find((p) => p.id === id)?.servedFraction ?? 0;
    const static30Ahead = sweepShort.map((s) => 100 * (servedOf(s, "static-30") - servedOf(s, DEFAULT_POLICY_ID)));
    expect(Math.max(...static30Ahead).toFixed(1)).toBe(sweepQuoted?.[4]);
    // static 30 s is the best other policy at each of those points (the sentence names it alone).
    for (const s of sweepShort)
      expect(Math.max(...s.policies.filter((p) => p.id !== DEFAULT_POLICY_ID).map((p) => p.servedFraction))).toBe(
        servedOf(s, "static-30"),
      );
    const idleQuoted = readme.match(
      /it leaves the most capacity idle while refused clients sleep in (\d+) of (\d+) scenarios/,
    );
    expect(idleQuoted).not.toBeNull();
    const most = scenariosWhereDefaultIdlesMost();
    expect([most.length, json.scenarios.length]).toEqual([Number(idleQuoted?.[1]), Number(idleQuoted?.[2])]);
    const waitQuoted = readme.match(
      /its mean wait \(first attempt to answer, capped at 120 s: what the curve does not count\) is the shortest of all policies summed over the scenarios, and in (\d+) of (\d+) scenarios/,
    );
    expect(waitQuoted).not.toBeNull();
    const waitOf = (s: ScenarioResult, id: string) =>
      s.policies.find((p) => p.id === id)?.metrics.meanWaitS ?? Infinity;
    const shortestIn = json.scenarios.filter((s) =>
      s.policies.every((p) => waitOf(s, DEFAULT_POLICY_ID) <= p.metrics.meanWaitS),
    );
    expect([shortestIn.length, json.scenarios.length]).toEqual([Number(waitQuoted?.[1]), Number(waitQuoted?.[2])]);
    const aloneQuoted = readme.match(
      /held to each constant alone, its curve is within 2 points of static 30 s at every horizon in (\d+) of (\d+) scenarios, of static 5 s in (\d+) and of static 1 s in (\d+)/,
    );
    expect(aloneQuoted).not.toBeNull();
    const alone = new Map(pairwiseRows(json.scenarios, DEFAULT_POLICY_ID).map((r) => [r.policy, r.curveWithin]));
    expect([alone.get("static-30"), json.scenarios.length, alone.get("static-5"), alone.get("static-1")]).toEqual(
      (aloneQuoted as RegExpMatchArray).slice(1, 5).map(Number),
    );
    const byHorizonQuoted = readme.match(
      /Horizon by horizon, it serves more than static 30 s within 5, 15 and 30 s in all (\d+) scenarios, and\s+is more than 2 points behind it within 60 s in (\d+) and within 120 s in (\d+):/,
    );
    expect(byHorizonQuoted).not.toBeNull();
    const [t5, t15, t30, t60, t120] = horizonTallies(json.scenarios, DEFAULT_POLICY_ID, "static-30");
    expect([t5?.ahead, t15?.ahead, t30?.ahead]).toEqual(Array(3).fill(json.scenarios.length));
    expect([json.scenarios.length, t60?.behind, t120?.behind]).toEqual(
      (byHorizonQuoted as RegExpMatchArray).slice(1, 4).map(Number),
    );
    const static5Quoted = readme.match(
      /Static 5 s serves\s+more than it within 30 s, by more than 2 points, in (\d+) of (\d+)/,
    );
    expect(static5Quoted).not.toBeNull();
    const at30 = horizonTallies(json.scenarios, DEFAULT_POLICY_ID, "static-5").find((t) => t.horizonS === 30);
    expect([at30?.behind, json.scenarios.length]).toEqual((static5Quoted as RegExpMatchArray).slice(1, 3).map(Number));
    const envelopeQuoted = readme.match(
      /no other policy meets the curve target in any scenario either, and its own worst gaps are the smallest of all policies in (\d+) of (\d+) \(and at (\d+) of the queue-bound sweep's (\d+) points;/,
    );
    expect(envelopeQuoted).not.toBeNull();
    const envelope = envelopeRows(json.scenarios);
    for (const row of envelope) if (row.policy !== DEFAULT_POLICY_ID) expect(row.curveWithin).toBe(0);
    const sweepEnvelope = envelopeRows(
      json.sweeps.map((p) => ({ name: `${p.scenario}/${p.maxQueuedRequests}`, ...p })),
    );
    expect([
      envelope.find((r) => r.policy === DEFAULT_POLICY_ID)?.nearest,
      json.scenarios.length,
      sweepEnvelope.find((r) => r.policy === DEFAULT_POLICY_ID)?.nearest,
      json.sweeps.length,
    ]).toEqual((envelopeQuoted as RegExpMatchArray).slice(1, 5).map(Number));
    const summed = (id: string) => json.scenarios.reduce((sum, s) => sum + waitOf(s, id), 0);
    for (const p of json.scenarios[0]?.policies ?? [])
      expect(summed(DEFAULT_POLICY_ID)).toBeLessThanOrEqual(summed(p.id));
  });

  it("checks the targets again on held-out seeds: every scenario, none of the tuning seeds, every variant", () => {
    const heldOut = json.heldOut as HeldOutRun;
    expect(heldOut.seedOffset).toBe(HELD_OUT_SEED_OFFSET);
    expect(heldOut.scenarios.map((s) => s.name)).toEqual(json.scenarios.map((s) => s.name));
    json.scenarios.forEach((s, i) => {
      const held = heldOut.scenarios[i];
      expect(held?.seeds).toEqual(s.seeds.map((seed) => seed + HELD_OUT_SEED_OFFSET));
      for (const seed of held?.seeds ?? []) expect(s.seeds).not.toContain(seed);
    });
    expect(heldOut.variants.map((v) => v.id)).toEqual(json.variants.map((v) => v.id));
    // The header-less target too: every scenario whose mix has header-less clients records their share there.
    json.scenarios.forEach((s, i) => {
      const hasHeaderless = (s.clients.mix.headerless_hints ?? 0) > 0;
      expect(typeof heldOut.scenarios[i]?.headerClients.headerless === "number").toBe(hasHeaderless);
    });
    // The held-out default row is the held-out headline, scored the same way.
    expect(heldOut.variants[0]?.met).toEqual(metCounts(heldOut.scenarios.map((s) => s.check)));
  });

  it("backs docs/retry-policy.md's forecast bullet: the arrivals known in advance gain under 3 points, miss the twin", () => {
    const held = (json.heldOut as HeldOutRun).variants;
    const [def, known] = [
      json.variants[0],
      json.variants.find((v) => v.id === "clairvoyant-forecast"),
    ] as VariantSummary[];
    const [heldDef, heldKnown] = [held[0], held.find((v) => v.id === "clairvoyant-forecast")] as VariantSummary[];
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain("Nor is the forecast of fresh arrivals");
    // The curve target in no more than one scenario of either seed set (tuning: none).
    expect(known?.met.curve).toBe(0);
    expect(heldKnown?.met.curve).toBeLessThanOrEqual(1);
    // Less than 3 points gained on the summed worst gaps on either seed set, against the default's 55 or more.
    expect((known?.worstCurveGapSumPts ?? 0) - (def?.worstCurveGapSumPts ?? 0)).toBeLessThan(3);
    expect((heldKnown?.worstCurveGapSumPts ?? 0) - (heldDef?.worstCurveGapSumPts ?? 0)).toBeLessThan(3);
    // And in the end-to-end run's twin it misses a target the default meets.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:clairvoyant-forecast`, DEFAULT_POLICY_ID)).toBe(false);
    expect(meetsTwinTargets(twin, DEFAULT_POLICY_ID, DEFAULT_POLICY_ID)).toBe(true);
  });

  it("backs docs/retry-policy.md's known-capacity paragraph: fewer broken promises, no nearer the curve target", () => {
    const { def, own, heldOwn } = besideDefault("known-capacity");
    if (!def || !own || !heldOwn) throw new Error("docs/evaluation.json has no known-capacity row: run npm run eval");
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    expect(doc).toContain("Nor is the drain rate it plans on");
    expect(doc).toContain("In half of the scenarios the broken promises come mostly from the drain rate");
    // "In half of the scenarios ... mostly": the variant breaks less than half the default's share in half of the
    // scenarios (in more than half until demoted requests waited up to 60 s while no one is turned away).
    const broken = (v: VariantSummary, name: string) => v.perScenario[name]?.promisesBrokenShare ?? 0;
    const names = Object.keys(def.perScenario);
    const halved = names.filter((name) => broken(own, name) < broken(def, name) / 2);
    expect(halved.length).toBe(names.length / 2);
    // "The first promises of the demo's 10 s burst ... are broken": told the capacity, the demo breaks more.
    expect(broken(own, "demo-burst-3x")).toBeGreaterThan(broken(def, "demo-burst-3x"));
    // "It meets the curve target nowhere either", on both seed sets, and its clients wait longer in all.
    expect(own.met.curve).toBe(0);
    expect(heldOwn.met.curve).toBe(0);
    expect(own.meanWaitSumS).toBeGreaterThan(def.meanWaitSumS);
    // "(the target allows 2)": it misses the twin's targets, which the default meets.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:known-capacity`, DEFAULT_POLICY_ID)).toBe(false);
  });

  it("backs docs/retry-policy.md's standing-from-start sentences: the 5 s horizon gained online, the 30 s one paid", () => {
    const { def, own, heldDef, heldOwn } = besideDefault("standing-from-start");
    if (!def || !own || !heldDef || !heldOwn)
      throw new Error("docs/evaluation.json has no standing-from-start row: run npm run eval");
    const names = Object.keys(def.perScenario);
    const within = (v: VariantSummary, name: string, horizonS: number) =>
      v.perScenario[name]?.servedWithinS?.[String(horizonS)] ?? Number.NaN;
    // Scenarios where the row's share within a horizon is a point or more above (+1) or below (-1) the default's.
    const moved = (horizonS: number, sign: 1 | -1) =>
      names.filter((name) => sign * (within(own, name, horizonS) - within(def, name, horizonS)) >= 0.01);
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    // The fills count them as this test does.
    const of = `of ${names.length} scenarios`;
    expect(doc).toContain(`Its share served within 5 s is higher by a point or more in ${moved(5, 1).length} ${of}`);
    expect(doc).toContain(`within 30 s, higher by a point or more in ${moved(30, 1).length} ${of}`);
    expect(doc).toContain(`lower by as much in ${moved(30, -1).length} (by up to`);
    // "So a short queue serves more requests within 5 s, in a burst too": higher at 5 s in most scenarios; "what it
    // costs is the 30 s horizon": lower there in more scenarios than higher.
    expect(doc).toContain("So a short queue serves more requests within 5 s, in a burst too, online");
    expect(moved(5, 1).length).toBeGreaterThan(names.length / 2);
    expect(moved(30, -1).length).toBeGreaterThan(moved(30, 1).length);
    // Not kept: its summed worst curve gaps are larger on both seed sets.
    expect(own.worstCurveGapSumPts).toBeLessThan(def.worstCurveGapSumPts);
    expect(heldOwn.worstCurveGapSumPts).toBeLessThan(heldDef.worstCurveGapSumPts);
  });

  it("backs docs/retry-policy.md's next-horizon bullet: adaptive LIFO behind on both sets", () => {
    const held = (json.heldOut as HeldOutRun).variants;
    const id = "newest-first-order";
    const [def, newest] = [json.variants[0], json.variants.find((v) => v.id === id)] as VariantSummary[];
    const [heldDef, heldNewest] = [held[0], held.find((v) => v.id === id)] as VariantSummary[];
    // By more than 2 points on both sets until the longer best effort in recurring overloads (2026-12-07); held out
    // by more than 1 since (its row in the bullet quotes both sums).
    expect((def?.worstCurveGapSumPts ?? 0) - (newest?.worstCurveGapSumPts ?? 0)).toBeGreaterThan(2);
    expect((heldDef?.worstCurveGapSumPts ?? 0) - (heldNewest?.worstCurveGapSumPts ?? 0)).toBeGreaterThan(1);
    // The switch meets every end-to-end target in the twin, as adaptive LIFO did.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, DEFAULT_POLICY_ID, DEFAULT_POLICY_ID)).toBe(true);
    expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID)).toBe(true);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "the next horizon meets every target but is not ahead of adaptive LIFO (a 10 s burst on a 16-deep queue demotes few requests)",
    );
  });

  it("backs docs/retry-policy.md's bullet on the last free slot kept: burst-10x at 5 s, ahead on the tuning seeds, twin missed", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    const burst = json.targets.find((t) => t.scenario === "burst-10x") as TargetCheck;
    expect(burst.worstCurveGap).toMatchObject({ horizonS: 5, bestOther: "none" });
    expect(doc).toContain(
      `In \`burst-10x\` the default was ${(-100 * burst.worstCurveGap.gap).toFixed(1)} points behind \`none\` at 5 s on the tuning seeds`,
    );
    const id = "demoted-headroom-1";
    const { def, own, heldDef, heldOwn } = besideDefault(id);
    expect(own?.worstCurveGapSumPts).toBeGreaterThan(def?.worstCurveGapSumPts ?? 0);
    // Ahead on the held-out seeds too until refusals were remembered until a request is placed (2026-12-05), and
    // again with the longer best effort in recurring overloads (2026-12-07); behind there since the 120 s quiet wait,
    // by less than 0.1 points.
    expect(heldOwn?.worstCurveGapSumPts).toBeLessThan(heldDef?.worstCurveGapSumPts ?? 0);
    expect((heldDef?.worstCurveGapSumPts ?? 0) - (heldOwn?.worstCurveGapSumPts ?? 0)).toBeLessThan(0.1);
    // Most of its lead on the tuning seeds is burst-10x's: the scenario whose worst gap moves most, by more than
    // half the summed lead.
    const gap = (v: VariantSummary | undefined, name: string) => v?.perScenario[name]?.worstCurveGap.gapPts ?? 0;
    const moves = Object.keys(def?.perScenario ?? {}).map((name) => ({ name, by: gap(own, name) - gap(def, name) }));
    const most = moves.reduce((a, b) => (b.by > a.by ? b : a));
    expect(most.name).toBe("burst-10x");
    expect(most.by).toBeGreaterThan(((own?.worstCurveGapSumPts ?? 0) - (def?.worstCurveGapSumPts ?? 0)) / 2);
    // The twin, replaying the end-to-end runs' arrivals, misses its curve target as the real run missed attempts.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID)).toBe(false);
    // From a cold router it misses the curve target; after a quiet spell it meets it since the drain-rate fix of
    // 2026-12-06 (cc237ee; it missed it before), and its attempts since the floor's moving means (2026-12-05).
    const [cold, quiet] = ["cold", "after-quiet"].map((twinId) =>
      twinTargets(twin, twinId, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID),
    );
    expect(cold?.met.curve).toBe(false);
    expect(quiet?.met).toEqual({ served: true, curve: true, attempts: true });
    expect(doc).toContain(
      "misses the twin's curve target from a cold router (after a quiet spell it meets it since the drain-rate fix of 2026-12-06, cc237ee, and meets the attempts target since the floor's moving means)",
    );
  });

  it("quotes ten held-out seeds from docs/held-out-seeds.json, written by today's default", () => {
    const run = JSON.parse(read("docs/held-out-seeds.json")) as HeldSeedsRun;
    // Written by the code that wrote docs/evaluation.json (else: npm run eval:held-seeds).
    expect(staleScenarios(run, json.scenarios, DEFAULT_POLICY_ID)).toEqual([]);
    expect(run.seedsPerScenario).toBe(10);
    expect(run.summaries.map((s) => s.id)).toEqual(["default", ...HELD_SEEDS_VARIANTS]);
    for (const { name, seeds } of run.scenarios) {
      const own = json.scenarios.find((s) => s.name === name);
      expect(seeds[0], name).toBe((own?.seeds[0] ?? Number.NaN) + HELD_OUT_SEED_OFFSET);
    }
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    for (const [key, text] of Object.entries(heldSeedsFills(run))) {
      expect(text, key).not.toContain("not run");
      expect(doc, key).toContain(text.replace(/\s+/g, " "));
    }
  });

  it("quotes the first burst-persistence version's end-to-end run beside run 7 from their files", () => {
    const [first, run7] = [
      "docs/evaluation-e2e-openai-burst-persistence.json",
      "docs/evaluation-e2e-openai-run7.json",
    ].map((path) => (JSON.parse(read(path)) as E2eOpenAiRun).policies.find((p) => p.id === DEFAULT_POLICY_ID)) as [
      E2eOpenAiPolicy,
      E2eOpenAiPolicy,
    ];
    const share = (x: number) => `${(100 * x).toFixed(1)}%`;
    // Refused twice: the requests that made a third attempt.
    const twice = (p: E2eOpenAiPolicy) => share((p.requestsByAttempts?.["3"] ?? Number.NaN) / p.requests);
    const within = (p: E2eOpenAiPolicy, h: number) => share(p.servedWithinS[h] ?? Number.NaN);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `${first.attemptsPerOffered.toFixed(3)} attempts per offered request against ${run7.attemptsPerOffered.toFixed(3)}, and ${twice(first)} of requests refused twice against ${twice(run7)}, but ${within(first, 15)} served within 15 s against ${within(run7, 15)} and ${within(first, 30)} within 30 s against ${within(run7, 30)}.`,
    );
  });

  it("fills docs/retry-policy.md's two and four slots kept from their variant rows", () => {
    const sum = (id: string) => json.variants.find((v) => v.id === id)?.worstCurveGapSumPts.toFixed(1);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `Two or four slots kept: summed worst curve gaps of ${sum("demoted-headroom-2")} (two, row \`demoted-headroom-2\`) and ${sum("demoted-headroom-4")} points (four, row \`demoted-headroom-4\`) against ${sum("demoted-headroom-1")} (one) and the default's ${sum("default")}`,
    );
  });

  it("backs docs/retry-policy.md's trust-by-lead bullet: behind on both sets, less idle and less served in the scenarios that move", () => {
    const { def, own, heldDef, heldOwn } = besideDefault("trust-by-lead");
    expect(own?.worstCurveGapSumPts).toBeLessThan(def?.worstCurveGapSumPts ?? 0);
    expect(heldOwn?.worstCurveGapSumPts).toBeLessThan(heldDef?.worstCurveGapSumPts ?? 0);
    // "Less idle capacity, fewer requests served": every scenario whose final served share moves by a point moves
    // down, and the fleet idles less there while clients wait - "in `waves`, since the longer best effort in
    // recurring overloads, fewer served with more of the fleet idle".
    const names = Object.keys(def?.perScenario ?? {});
    const moved = names.filter(
      (n) => Math.abs((own?.perScenario[n]?.servedFraction ?? 0) - (def?.perScenario[n]?.servedFraction ?? 0)) >= 0.01,
    );
    expect(moved).toContain("waves");
    expect(moved.length).toBeGreaterThan(1);
    const idle = (v: VariantSummary | undefined, n: string) =>
      v?.perScenario[n]?.idleWhileWaitingFraction ?? Number.NaN;
    for (const n of moved) {
      expect(own?.perScenario[n]?.servedFraction).toBeLessThan(def?.perScenario[n]?.servedFraction ?? 0);
      if (n === "waves") expect(idle(own, n), n).toBeGreaterThan(idle(def, n));
      else expect(idle(own, n), n).toBeLessThan(idle(def, n));
    }
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "Less idle capacity, fewer requests served (in `waves`, since the longer best effort in recurring overloads of 2026-12-07, fewer served with more of the fleet idle)",
    );
    // On the trains: nearer static 30 s within 60 s, less idle, and more points behind on the final served share.
    const trains = JSON.parse(read("docs/burst-train.json")) as BurstTrainReport;
    for (const fleet of ["burst-3x", "small"] as const) {
      const t = trustByLeadSummary(trains, fleet);
      expect(t.within.trustByLead).toBeGreaterThan(t.within.default);
      expect(t.idleHighest.trustByLead).toBeLessThan(t.idleHighest.default);
      expect(t.servedMisses.trustByLead).toBeGreaterThan(t.servedMisses.default);
      // "Each lead learns it again from its own broken promises": more promises, a larger share of them broken.
      expect(t.promises.trustByLead.made).toBeGreaterThan(t.promises.default.made);
      expect(t.promises.trustByLead.brokenShare).toBeGreaterThan(t.promises.default.brokenShare);
    }
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "fewer served with more of the fleet idle): what would keep both is a forecast that knows how long an overload lasts",
    );
  });

  it("backs docs/retry-policy.md's trust-by-lead-persistence sentence: promises kept more often, clients served no sooner", () => {
    const { def, own, heldDef, heldOwn } = besideDefault("trust-by-lead-persistence");
    // "Served no sooner": behind the default on the summed worst gaps on both seed sets.
    expect(own?.worstCurveGapSumPts).toBeLessThan(def?.worstCurveGapSumPts ?? 0);
    expect(heldOwn?.worstCurveGapSumPts).toBeLessThan(heldDef?.worstCurveGapSumPts ?? 0);
    // "Kept more often": every scenario whose broken share moves by 5 points moves down, and some do.
    const broken = (v: VariantSummary | undefined, n: string) => v?.perScenario[n]?.promisesBrokenShare ?? 0;
    const moved = Object.keys(def?.perScenario ?? {}).filter((n) => Math.abs(broken(own, n) - broken(def, n)) >= 0.05);
    expect(moved.length).toBeGreaterThan(2);
    for (const n of moved) expect(broken(own, n)).toBeLessThan(broken(def, n));
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "Its promises are kept more often, and its clients are served no sooner.",
    );
  });

  it("backs docs/retry-policy.md's horizon-packing bullet: ahead on the curve on both sets, longer waits on both", () => {
    const id = "horizon-pack";
    const { def, own, heldDef, heldOwn } = besideDefault(id);
    expect(own?.worstCurveGapSumPts).toBeGreaterThan(def?.worstCurveGapSumPts ?? 0);
    expect(heldOwn?.worstCurveGapSumPts).toBeGreaterThan(heldDef?.worstCurveGapSumPts ?? 0);
    // What the curve does not count: its clients wait longer, on both seed sets.
    expect(own?.meanWaitSumS).toBeGreaterThan(def?.meanWaitSumS ?? 0);
    expect(heldOwn?.meanWaitSumS).toBeGreaterThan(heldDef?.meanWaitSumS ?? 0);
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID)).toBe(true);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "Moving requests to the end of the curve's own horizons brings the curve nearer its target and makes clients wait longer",
    );
  });

  it("backs docs/retry-policy.md's bullet on the candidates combined: gains that add up, lost at the demo's 60 s", () => {
    const held = (json.heldOut as HeldOutRun).variants;
    const ahead = variantsAhead(json.variants, held);
    // "Each ahead of the default": three on both seed sets, demoted-headroom-1 on the tuning seeds.
    for (const id of ["no-queue-refill", "fresh-past-target", "horizon-pack"]) expect(ahead.both).toContain(id);
    expect([...ahead.both, ...ahead.tunedOnly]).toContain("demoted-headroom-1");
    const sum = (id: string) => json.variants.find((v) => v.id === id)?.worstCurveGapSumPts ?? Number.NaN;
    const gain = (id: string) => sum(id) - sum("default");
    // "Mostly horizon packing's and demoted-headroom-1's".
    expect(gain("candidates-combined")).toBeGreaterThan(0);
    expect(gain("horizon-pack") + gain("demoted-headroom-1")).toBeGreaterThan(gain("candidates-combined") / 2);
    expect(gain("horizon-pack") + gain("demoted-headroom-1")).toBeGreaterThan(
      gain("no-queue-refill") + gain("fresh-past-target"),
    );
    // demoted-headroom-1's share of it is `burst-10x` at 5 s: the default's worst gap there, which it closes most.
    const worst = (id: string, n: string) =>
      json.variants.find((v) => v.id === id)?.perScenario[n]?.worstCurveGap ?? { horizonS: 0, gapPts: Number.NaN };
    expect(worst("default", "burst-10x").horizonS).toBe(5);
    const closed = (n: string) => worst("demoted-headroom-1", n).gapPts - worst("default", n).gapPts;
    const names = Object.keys(json.variants[0]?.perScenario ?? {});
    expect(closed("burst-10x")).toBeGreaterThan(gain("demoted-headroom-1") / 2);
    for (const n of names) expect(closed(n), n).toBeLessThanOrEqual(closed("burst-10x"));
    // "Its clients wait longer".
    const { def, own } = besideDefault("candidates-combined");
    expect(own?.meanWaitSumS).toBeGreaterThan(def?.meanWaitSumS ?? 0);
    // In both twins the combination serves fewer within 30 and 60 s than the default, and of the four
    // no-queue-refill loses more than two points within 60 s, each other less than a quarter of that.
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    for (const t of targetTwins(twin)) {
      const within = (id: string, h: number) => twinShare(t, id, h);
      const [d30, d60] = [within(DEFAULT_POLICY_ID, 30), within(DEFAULT_POLICY_ID, 60)];
      expect(within(`${DEFAULT_POLICY_ID}:candidates-combined`, 30), t.id).toBeLessThan(d30);
      expect(within(`${DEFAULT_POLICY_ID}:candidates-combined`, 60), t.id).toBeLessThan(d60);
      const lossAt60 = (id: string) => d60 - within(`${DEFAULT_POLICY_ID}:${id}`, 60);
      expect(lossAt60("no-queue-refill"), t.id).toBeGreaterThan(0.02);
      for (const id of ["fresh-past-target", "horizon-pack", "demoted-headroom-1"])
        expect(lossAt60(id), `${t.id} ${id}`).toBeLessThan(lossAt60("no-queue-refill") / 4);
    }
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "the twin puts those losses on `no-queue-refill` (its bullet below)",
    );
  });

  it("backs docs/retry-policy.md's bullet on first attempts by their next horizon: sooner at 5 s, later at 30 s", () => {
    const { def, own, heldDef, heldOwn } = besideDefault("fresh-next-horizon");
    // It widens the worst gaps the target counts, on both seed sets.
    expect(own?.worstCurveGapSumPts).toBeLessThan(def?.worstCurveGapSumPts ?? 0);
    expect(heldOwn?.worstCurveGapSumPts).toBeLessThan(heldDef?.worstCurveGapSumPts ?? 0);
    // It moves requests from the 30 s horizon to the 5 s one: more served within 5 s and fewer within 30 s in most
    // scenarios.
    const moved = (h: number) =>
      Object.keys(def?.perScenario ?? {}).map(
        (name) =>
          (own?.perScenario[name]?.servedWithinS?.[String(h)] ?? 0) -
          (def?.perScenario[name]?.servedWithinS?.[String(h)] ?? 0),
      );
    const half = Object.keys(def?.perScenario ?? {}).length / 2;
    expect(moved(5).filter((d) => d > 0).length).toBeGreaterThan(half);
    expect(moved(30).filter((d) => d < 0).length).toBeGreaterThan(half);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "It moves requests from the 30 and 60 s horizons to the 5 and 15 s ones",
    );
  });

  it("backs docs/retry-policy.md's adaptive LIFO bullet: a shorter sustained p50 on both seed sets, within 5 s", () => {
    const { def, own, heldDef, heldOwn } = besideDefault("fifo-while-standing");
    const p50 = (v: VariantSummary | undefined) => v?.perScenario["sustained-1.3x"]?.timeToSuccessP50S ?? Number.NaN;
    expect(p50(def)).toBeLessThan(p50(own));
    expect(p50(heldDef)).toBeLessThan(p50(heldOwn));
    // The issue's target (at most 5 s), on both seed sets; arrival order missed it on the held-out seeds.
    expect(Math.max(p50(def), p50(heldDef))).toBeLessThanOrEqual(5);
    expect(p50(heldOwn)).toBeGreaterThan(5);
    // A burst's queue never stands: the default's figures in the bursts are arrival order's.
    for (const name of ["burst-3x", "demo-burst-3x", "burst-3x-legacy-clients"])
      expect(def?.perScenario[name]?.servedWithinS, name).toEqual(own?.perScenario[name]?.servedWithinS);
  });

  it("backs docs/retry-policy.md's bullet on shares of the turns: 5 s bought by the newest, 60-120 s by the demoted", () => {
    /** Per scenario, the variant's share served within `h` less the default's (tuning seeds). */
    const moved = (id: string, h: number) => {
      const { def, own } = besideDefault(id);
      return Object.keys(def?.perScenario ?? {}).map(
        (name) =>
          (own?.perScenario[name]?.servedWithinS?.[String(h)] ?? 0) -
          (def?.perScenario[name]?.servedWithinS?.[String(h)] ?? 0),
      );
    };
    const more = (id: string, h: number) => moved(id, h).filter((d) => d >= 0.005).length;
    const less = (id: string, h: number) => moved(id, h).filter((d) => d <= -0.005).length;
    const half = json.scenarios.length / 2;
    // The newest's share: more within 5 s in most scenarios (less only where the default takes the newest at every
    // turn, its queue standing); less within 15 to 60 s in some.
    expect(more("fresh-newest-half", 5)).toBeGreaterThan(half);
    expect(less("fresh-newest-half", 5)).toBeLessThanOrEqual(1);
    expect([15, 30, 60].every((h) => less("fresh-newest-half", h) > 0)).toBe(true);
    // The demoted's share: more within 60 and 120 s in some, less within 5 to 30 s in most (at 5 s in nearly all).
    expect(more("demoted-share-quarter", 60)).toBeGreaterThan(0);
    expect(more("demoted-share-quarter", 120)).toBeGreaterThan(0);
    expect(less("demoted-share-quarter", 5)).toBeGreaterThan(half);
    expect(less("demoted-share-quarter", 15)).toBeGreaterThan(half);
    // Neither is ahead of the default on the summed worst gaps on both seed sets.
    for (const id of ["fresh-newest-half", "demoted-share-quarter"]) {
      const { def, own, heldDef, heldOwn } = besideDefault(id);
      const ahead =
        (own?.worstCurveGapSumPts ?? Number.NEGATIVE_INFINITY) > (def?.worstCurveGapSumPts ?? 0) &&
        (heldOwn?.worstCurveGapSumPts ?? Number.NEGATIVE_INFINITY) > (heldDef?.worstCurveGapSumPts ?? 0);
      expect(ahead, id).toBe(false);
    }
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain("Neither is ahead on both seed sets.");
  });

  it("docs/evaluation.md's mean-wait section is the one evaluation.json's figures give", () => {
    expect(read("docs/evaluation.md")).toContain(meanWaitSection(json.scenarios, DEFAULT_POLICY_ID));
  });

  it("docs/evaluation.md's paragraph on each policy alone is the one evaluation.json's figures give", () => {
    expect(read("docs/evaluation.md")).toContain(pairwiseSection(json.scenarios, DEFAULT_POLICY_ID));
  });

  it("docs/evaluation.md's paragraph on every policy held to the curve target is the one evaluation.json's figures give", () => {
    expect(read("docs/evaluation.md")).toContain(envelopeSection(json.scenarios, DEFAULT_POLICY_ID, json.sweeps));
  });

  it("backs docs/retry-policy.md's bullet on the longer best effort when overloads recur (the default; row recurring-best-effort-off)", () => {
    // The default has it since 2026-12-07: the commit's code says so.
    expect(DEFAULT_CAPACITY_BOOKING_OPTIONS.bestEffortRecurMinEndS).toBe(120);
    expect(DEFAULT_CAPACITY_BOOKING_OPTIONS.probeS).toBe(25);
    const heldOut = (json.heldOut as HeldOutRun).variants;
    const row = (list: readonly VariantSummary[], id: string) => list.find((v) => v.id === id) as VariantSummary;
    const [tuned, held] = [json.variants, heldOut].map((list) => ({
      before: row(list, "recurring-best-effort-off"),
      def: row(list, "default"),
    })) as [{ before: VariantSummary; def: VariantSummary }, { before: VariantSummary; def: VariantSummary }];
    for (const { before, def } of [tuned, held]) {
      // One more scenario meets the oracle target on both seed sets (waves), and every other count is the rule
      // before's; smaller summed worst gaps.
      expect(def.met.oracle).toBe(before.met.oracle + 1);
      for (const key of ["curve", "served", "attempts"] as const) expect(def.met[key], key).toBe(before.met[key]);
      expect(def.perScenario.waves?.servedFraction).toBeGreaterThan(before.perScenario.waves?.servedFraction ?? 1);
      expect(def.worstCurveGapSumPts).toBeGreaterThan(before.worstCurveGapSumPts);
      // The sustained overload's p50 stays within the 5 s the issue allows.
      expect(def.perScenario["sustained-1.3x"]?.timeToSuccessP50S).toBeLessThanOrEqual(5);
      // "A lone overload is unchanged": the bursts' figures are the rule before's.
      for (const n of ["demo-burst-3x", "burst-3x", "mixed-fleet", "llm-sizes"])
        expect(def.perScenario[n], n).toEqual(before.perScenario[n]);
    }
    // "Both meet the end-to-end targets in the twin."
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, DEFAULT_POLICY_ID, DEFAULT_POLICY_ID)).toBe(true);
    expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:recurring-best-effort-off`, DEFAULT_POLICY_ID)).toBe(true);
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    expect(doc).toContain("A longer best effort when overloads recur");
    expect(doc).toContain("A lone overload is unchanged");
    expect(doc).toContain("Both meet the end-to-end targets in the twin");
  });

  it("backs docs/retry-policy.md's account of the variants ahead of the default on both seed sets", () => {
    const heldOut = (json.heldOut as HeldOutRun).variants;
    const tunedById = new Map(json.variants.map((v) => [v.id, v]));
    const held = new Map(heldOut.map((v) => [v.id, v]));
    const def = { tuned: json.variants[0] as VariantSummary, held: heldOut[0] as VariantSummary };
    const aheadOnBoth = json.variants
      .slice(1)
      .filter(
        (v) =>
          v.worstCurveGapSumPts > def.tuned.worstCurveGapSumPts &&
          (held.get(v.id)?.worstCurveGapSumPts ?? Number.NEGATIVE_INFINITY) > def.held.worstCurveGapSumPts,
      )
      .map((v) => v.id);
    expect(aheadOnBoth).toEqual(variantsAhead(json.variants, heldOut).both);
    expect(aheadOnBoth.length).toBeGreaterThan(0);
    expect(read("docs/retry-policy.md")).toContain("The variants ahead on both sets are not the default");
    // The default is not re-tuned with the drain-rate fix of 2026-12-06 (cc237ee): those ahead are candidates.
    for (const id of [
      "no-burst-fade",
      "slow-burst-rate",
      "no-queue-refill",
      "lowest-overload-floor",
      "floor-before-rise",
    ])
      expect(aheadOnBoth, id).toContain(id);
    expect(aheadOnBoth).toContain("clairvoyant-forecast");
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `The default is not changed with the drain-rate fix of 2026-12-06 (cc237ee), which moved every row: ${aheadOnBoth.length} variants are now ahead of it on the summed gaps of both seed sets (\`clairvoyant-forecast\` joined them with the fix, two are combinations of the others, added on 2026-12-07: "The candidates combined", below, and \`two-step\`, \`floor-before-rise-persistence\` and \`fifo-while-standing\` joined them when demoted requests began to wait up to 40 s, 2026-12-07, each then by less than a point on one of the sets; \`backlog-at-drain-rate\` and the two previous defaults of the demoted wait, \`demoted-timeout-off\` and \`demoted-quiet-off\`, when they began to wait up to 60 s while no one is turned away, the same day, each by less than a point on one of the sets: that change costs the curve a little for the attempts target, its bullet below; \`backlog-at-drain-rate\`, \`demoted-quiet-off\` and \`fifo-while-standing\` left them again, and \`demoted-headroom-1\` joined them, with the longer best effort in recurring overloads, the same day, its bullet below; \`backlog-at-drain-rate\` joined them again, and \`demoted-headroom-1\` and \`floor-before-rise-persistence\` left them, with the 120 s quiet wait, each then behind by less than 0.1 points on one of the sets), among them \`no-burst-fade\`, \`slow-burst-rate\`, \`no-queue-refill\`, \`lowest-overload-floor\` and \`floor-before-rise\`. They are candidates for re-tuning the default, not yet checked end to end`,
    );
    // What the sum does not show: in the end-to-end run's twin the default meets every end-to-end target from a cold
    // router and after a quiet spell, and none of them does (each is in the twin).
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, DEFAULT_POLICY_ID, DEFAULT_POLICY_ID)).toBe(true);
    for (const id of aheadOnBoth)
      expect(
        targetTwins(twin).every((t) => t.policies.some((p) => p.id === `${DEFAULT_POLICY_ID}:${id}`)),
        id,
      ).toBe(true);
    const meeting = aheadOnBoth.filter((id) => meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID));
    expect([...meeting].sort()).toEqual(
      [
        "best-effort-no-age",
        "candidates-combined",
        "draining-ignores-demoted",
        "fresh-past-target",
        "horizon-pack",
        "no-delay-target",
        "no-queue-refill",
        "probe-every-overload",
        "two-step",
        "demoted-timeout-off",
      ].sort(),
    );
    const p50 = (v?: VariantSummary) => v?.perScenario["sustained-1.3x"]?.timeToSuccessP50S ?? Number.NaN;
    // Adaptive LIFO's row: ahead on the tuning seeds only before the drain-rate fix of 2026-12-06 (cc237ee), on the
    // held-out seeds only since, by the figures quoted; "past the 5 s the issue allows on the held-out seeds".
    const fifo = { tuned: tunedById.get("fifo-while-standing"), held: held.get("fifo-while-standing") };
    const fifoLead = {
      tuned: (fifo.tuned?.worstCurveGapSumPts ?? Number.NaN) - def.tuned.worstCurveGapSumPts,
      held: (fifo.held?.worstCurveGapSumPts ?? Number.NaN) - def.held.worstCurveGapSumPts,
    };
    // Since the longer best effort in recurring overloads, "on the held-out seeds only, by N points there (on the
    // tuning seeds its summed gaps are larger by less than 0.1)".
    expect(fifoLead.tuned).toBeLessThan(0);
    expect(fifoLead.tuned).toBeGreaterThan(-0.1);
    expect(fifoLead.held).toBeGreaterThan(0);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `from demoted requests waiting up to 40 s until the longer best effort in recurring overloads (both 2026-12-07) on both again, and since on the held-out seeds only, by ${fifoLead.held.toFixed(1)} points there (on the tuning seeds its summed gaps are larger by less than 0.1), and`,
    );
    // Those that joined with the quiet wait, "each by less than a point on one of the sets" (those that joined with the
    // demoted wait, "each then by less than a point": two-step is ahead by more than one on both since, its bullet);
    // three of them left again with the longer best effort in recurring overloads; with the 120 s quiet wait
    // backlog-at-drain-rate joined them again, and demoted-headroom-1 and floor-before-rise-persistence left them,
    // "each then behind by less than 0.1 points on one of the sets".
    expect(aheadOnBoth).toContain("backlog-at-drain-rate");
    for (const id of ["fifo-while-standing", "demoted-quiet-off"]) expect(aheadOnBoth, id).not.toContain(id);
    for (const id of ["demoted-headroom-1", "floor-before-rise-persistence"]) {
      expect(aheadOnBoth, id).not.toContain(id);
      const behind = [
        def.tuned.worstCurveGapSumPts - (tunedById.get(id)?.worstCurveGapSumPts ?? Number.NaN),
        def.held.worstCurveGapSumPts - (held.get(id)?.worstCurveGapSumPts ?? Number.NaN),
      ].filter((by) => by > 0);
      expect(behind.length, id).toBe(1);
      expect(behind[0], id).toBeLessThan(0.1);
    }
    for (const id of ["demoted-timeout-off"]) {
      expect(aheadOnBoth, id).toContain(id);
      const leads = [
        (tunedById.get(id)?.worstCurveGapSumPts ?? Number.NaN) - def.tuned.worstCurveGapSumPts,
        (held.get(id)?.worstCurveGapSumPts ?? Number.NaN) - def.held.worstCurveGapSumPts,
      ];
      expect(Math.min(...leads), id).toBeLessThan(1);
    }
    expect(p50(fifo.held)).toBeGreaterThan(5);
    // Met in the twin since the floor's moving means; `floor-before-rise` until the drain-rate fix of 2026-12-06
    // (cc237ee): since, its attempts after a quiet spell are past the target's 1.5. The oracle target: fewer than the
    // default on the tuning seeds before that fix, as many since; `floor-before-rise` and `probe-every-overload` pay
    // with the attempts target.
    const quietRise = twinTargets(twin, "after-quiet", `${DEFAULT_POLICY_ID}:floor-before-rise`, DEFAULT_POLICY_ID);
    expect(quietRise?.met.attempts).toBe(false);
    expect(quietRise?.attemptsPerOffered ?? Number.NaN).toBeGreaterThan(1.5);
    const oracleBehind = { "floor-before-rise": 0, "no-queue-refill": 0, "probe-every-overload": 2 };
    for (const [id, fewer] of Object.entries(oracleBehind))
      expect(tunedById.get(id)?.met.oracle, id).toBe(def.tuned.met.oracle - fewer);
    for (const id of ["floor-before-rise", "probe-every-overload"])
      expect(tunedById.get(id)?.met.attempts, id).toBeLessThan(def.tuned.met.attempts);
    expect(tunedById.get("probe-every-overload")?.met.attempts).toBe(9);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `\`no-queue-refill\` and \`probe-every-overload\` meet them since the floor's moving means (2026-12-05), and \`floor-before-rise\` met them from then until the drain-rate fix of 2026-12-06 (cc237ee): since that fix, after a quiet spell it makes ${quietRise?.attemptsPerOffered.toFixed(3)} attempts per offered request, more than the 1.5 the target allows (its bullet below). Before that fix each of the three met the oracle target in fewer scenarios than the default on the tuning seeds, and from it in as many; since the longer best effort in recurring overloads (2026-12-07) the default meets it in ${def.tuned.met.oracle} of ${def.tuned.scenarios} there, \`floor-before-rise\` and \`no-queue-refill\` in as many and \`probe-every-overload\` in two fewer (\`no-queue-refill\` in one fewer from demoted requests waiting up to 40 s until then). \`floor-before-rise\` and \`probe-every-overload\` pay with the attempts target on the tuning seeds (\`probe-every-overload\` in 9 of 12;`,
    );
    // `no-queue-refill` pays with no target (the four met as often there until demoted requests waited up to 40 s; the
    // attempts once fewer on the tuning seeds from the 60 s quiet wait until the 120 s one; the oracle once fewer on the
    // tuning seeds and once more held out until the longer best effort in recurring overloads).
    const refillOff = { tuned: tunedById.get("no-queue-refill"), held: held.get("no-queue-refill") };
    for (const k of ["curve", "served", "oracle", "attempts"] as const) {
      expect(refillOff.tuned?.met[k], k).toBe(def.tuned.met[k]);
      expect(refillOff.held?.met[k], k).toBe(def.held.met[k]);
    }
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "`no-queue-refill` pays with no target in the simulator: it meets each of the four targets in as many scenarios as the default on both seed sets (the attempts target in one fewer on the tuning seeds from demoted requests waiting up to 60 s while no one is turned away until they waited up to 120 s; and the oracle target in one fewer on the tuning seeds and one more on the held-out ones until the longer best effort in recurring overloads, the same day); it pays at the demo's 30 and 60 s, in the twin's curves",
    );
    // "It pays at the demo's 30 and 60 s" in the twin's curves, from a cold router and after a quiet spell.
    for (const t of targetTwins(twin)) {
      const within = (id: string, h: number) => twinShare(t, id, h);
      for (const h of [30, 60])
        expect(within(`${DEFAULT_POLICY_ID}:no-queue-refill`, h), `${t.id} ${h}`).toBeLessThan(
          within(DEFAULT_POLICY_ID, h),
        );
    }
    expect(p50(held.get("default"))).toBeLessThanOrEqual(5);
    // No delay target: the twin's burst never stands long enough for it; the sustained overload's p50 is about
    // three times the issue's 5 s on both seed sets.
    for (const set of [tunedById, held]) expect(p50(set.get("no-delay-target"))).toBeGreaterThan(14);
    // "cannot be the default for the same reason" (README: its p50 "about doubles, past the 5 s"), on both seed sets.
    for (const set of [tunedById, held]) {
      expect(p50(set.get("draining-ignores-demoted"))).toBeGreaterThan(1.9 * p50(set.get("default")));
      expect(p50(set.get("draining-ignores-demoted"))).toBeGreaterThan(5);
    }
    // Every other ahead-on-both variant misses a target in the twin, as the prose names them.
    const named = ["slow-burst-rate", "no-burst-fade", "no-overload-floor", "lowest-overload-floor"];
    const missing = aheadOnBoth.filter((id) => !meeting.includes(id) && id !== "demoted-headroom-1");
    // `floor-before-rise` among them since the drain-rate fix of 2026-12-06 (cc237ee), `clairvoyant-forecast`
    // ahead on both since (each has its sentence).
    expect([...missing].sort()).toEqual(
      [
        ...named,
        "probe-beyond-30s",
        "floor-before-rise",
        "backlog-at-drain-rate",
        "clairvoyant-forecast",
        "candidates-unpacked",
      ].sort(),
    );
    // "`candidates-unpacked` ... misses the twin's curve target", and `backlog-at-drain-rate` (ahead on both from the
    // quiet wait until the longer best effort in recurring overloads, on the held-out seeds only from then until the
    // 120 s quiet wait, on both again since) "misses it too".
    expect(aheadOnBoth).toContain("backlog-at-drain-rate");
    expect(held.get("backlog-at-drain-rate")?.worstCurveGapSumPts).toBeGreaterThan(def.held.worstCurveGapSumPts);
    for (const id of ["candidates-unpacked", "backlog-at-drain-rate"])
      expect(
        targetTwins(twin).some(
          (t) => twinTargets(twin, t.id, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID)?.met.curve === false,
        ),
        id,
      ).toBe(true);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "`candidates-unpacked`, the same without horizon packing, misses the twin's curve target. `backlog-at-drain-rate` (the queue ahead assumed to drain at the whole drain rate), ahead on both seed sets from the quiet wait until the longer best effort in recurring overloads, on the held-out seeds only from then until the 120 s quiet wait and on both again since, misses it too.",
    );
    // "so does `probe-beyond-30s`, which ... misses the attempts and served targets in the simulator too".
    const probeBeyond = tunedById.get("probe-beyond-30s");
    expect(probeBeyond?.met.attempts).toBeLessThan(def.tuned.met.attempts);
    expect(probeBeyond?.met.served).toBeLessThan(def.tuned.met.served);
    // Its bullet: "The first moves requests from the 5 s horizon to the 30 and 60 s ones ... The second serves more
    // within 30 and 60 s, most in `waves`, and pays for it with the attempts and served targets".
    const scenarios = Object.keys(def.tuned.perScenario);
    const change = (id: string, name: string, h: number) =>
      (tunedById.get(id)?.perScenario[name]?.servedWithinS?.[h] ?? Number.NaN) -
      (def.tuned.perScenario[name]?.servedWithinS?.[h] ?? Number.NaN);
    const gaining = (id: string, h: number) => scenarios.filter((n) => change(id, n, h) > 0.005);
    const losing = (id: string, h: number) => scenarios.filter((n) => change(id, n, h) < -0.005);
    expect(losing("demoted-first-under-8s", 5).length).toBeGreaterThan(scenarios.length / 2);
    for (const h of [30, 60]) {
      expect(gaining("demoted-first-under-8s", h).length, `${h} s`).toBeGreaterThan(
        losing("demoted-first-under-8s", h).length,
      );
      expect(gaining("probe-beyond-30s", h).length, `${h} s`).toBeGreaterThan(losing("probe-beyond-30s", h).length);
      const most = scenarios.reduce((a, b) =>
        change("probe-beyond-30s", b, h) > change("probe-beyond-30s", a, h) ? b : a,
      );
      expect(most, `${h} s`).toBe("waves");
    }
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "The first moves requests from the 5 s horizon to the 30 and 60 s ones: the arrivals after an overload wait past their 5 s. The second serves more within 30 and 60 s, most in `waves`, and pays for it with the attempts and served targets",
    );
    // The last free slot kept: ahead on the tuning seeds only from refusals remembered until a request is placed until
    // the longer best effort in recurring overloads; on both from then until the 120 s quiet wait; on the tuning seeds
    // only since, held out behind "by less than 0.1 points" (its own bullet says more; so does the README's
    // configuration table).
    expect(aheadOnBoth).not.toContain("demoted-headroom-1");
    const headroomHeldBehind =
      def.held.worstCurveGapSumPts - (held.get("demoted-headroom-1")?.worstCurveGapSumPts ?? 0);
    expect(headroomHeldBehind).toBeGreaterThan(0);
    expect(headroomHeldBehind).toBeLessThan(0.1);
    expect(read("README.md").replace(/\s+/g, " ")).toContain(
      "1 is ahead on the summed curve gaps on the tuning seeds, mostly in `burst-10x`, and behind on the held-out ones by less than 0.1 points",
    );
    expect(tunedById.get("demoted-headroom-1")?.worstCurveGapSumPts).toBeGreaterThan(def.tuned.worstCurveGapSumPts);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "then ahead on the tuning seeds only, was ahead on both again with the longer best effort in recurring overloads (2026-12-07; on the held-out seeds by less than 0.1 points), and is ahead on the tuning seeds only since the 120 s quiet wait (on the held-out seeds behind by less than 0.1 points), and misses the twin's curve target from a cold router (after a quiet spell it meets it since the drain-rate fix",
    );
    // Horizon packing: "by 1.8 points on the tuning seeds" (its own bullet says why it is not the default).
    const packLead = (tunedById.get("horizon-pack")?.worstCurveGapSumPts ?? 0) - def.tuned.worstCurveGapSumPts;
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `\`horizon-pack\` meets every end-to-end target in the twin and is ahead on both sets, by ${packLead.toFixed(1)} points on the tuning seeds`,
    );
    // The other: ahead by less than 2 points on either set, less than the default's own sum moves between the sets.
    const moves = Math.abs(def.tuned.worstCurveGapSumPts - def.held.worstCurveGapSumPts);
    // (`draining-ignores-demoted`, ahead by 2.1 points on the tuning seeds since the drain-rate fix of 2026-12-06, is
    // explained by its p50, checked above; the doc claims no bound on its lead.)
    const otherwiseExplained = [
      "horizon-pack",
      "no-delay-target",
      "floor-before-rise",
      "probe-every-overload",
      "draining-ignores-demoted",
      // Its own bullet: its lead is horizon packing's and demoted-headroom-1's, and end to end it loses at 60 s.
      "candidates-combined",
    ];
    for (const id of meeting.filter((v) => !otherwiseExplained.includes(v))) {
      const lead = Math.max(
        (tunedById.get(id)?.worstCurveGapSumPts ?? 0) - def.tuned.worstCurveGapSumPts,
        (held.get(id)?.worstCurveGapSumPts ?? 0) - def.held.worstCurveGapSumPts,
      );
      expect(lead, id).toBeLessThan(2);
      expect(lead, id).toBeLessThan(moves);
    }
    for (const k of ["curve", "served", "oracle", "attempts"] as const) {
      const fewer = k === "oracle" ? 1 : 0;
      expect(tunedById.get("best-effort-no-age")?.met[k], k).toBe(def.tuned.met[k] - fewer);
      expect(held.get("best-effort-no-age")?.met[k], k).toBe(def.held.met[k]);
    }
    expect(DEFAULT_POLICY_VARIANTS.find((v) => v.id === "best-effort-no-age")?.spec.ledger).toMatchObject({
      bestEffortRecurMinEndS: 60,
    });
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "It is ahead of the default on the summed gaps by less than 2 points on either seed set, less than the default's own sum moves between the sets, and meets each target in as many scenarios as the default on both seed sets but the oracle target, in one fewer on the tuning seeds since the longer best effort in recurring overloads, which its row does not have (on the held-out ones too from then until the 120 s quiet wait; the served target in one fewer on both until demoted requests waited up to 40 s, 2026-12-07; its bullet below).",
    );
    // "`fresh-past-target` meets them too ..., is ahead by less than a point on either seed set, and meets the oracle
    // target in as many scenarios as the default on both" (history in the sentence); its bullet: the sustained
    // overload's p50 is the default's.
    const pastTarget = { tuned: tunedById.get("fresh-past-target"), held: held.get("fresh-past-target") };
    for (const [own, base] of [
      [pastTarget.tuned, def.tuned],
      [pastTarget.held, def.held],
    ] as const) {
      // "Less than a point" (so until the quiet wait; about a point from then until the longer best effort in
      // recurring overloads).
      expect((own?.worstCurveGapSumPts ?? 0) - base.worstCurveGapSumPts).toBeGreaterThan(0);
      expect((own?.worstCurveGapSumPts ?? 0) - base.worstCurveGapSumPts).toBeLessThan(1);
      expect(p50(own)).toBeCloseTo(p50(base), 1);
    }
    // The oracle: one fewer on the tuning seeds (`waves`, by the points quoted), as many held out.
    expect(pastTarget.tuned?.met.oracle).toBe(def.tuned.met.oracle - 1);
    expect(pastTarget.held?.met.oracle).toBe(def.held.met.oracle);
    const wavesBehind =
      (def.tuned.perScenario.waves?.servedFraction ?? 0) - (pastTarget.tuned?.perScenario.waves?.servedFraction ?? 0);
    const crossedTuned = Object.keys(def.tuned.perScenario).filter(
      (name) =>
        (def.tuned.perScenario[name]?.servedFraction ?? 0) >= 0.95 !==
        (pastTarget.tuned?.perScenario[name]?.servedFraction ?? 0) >= 0.95,
    );
    expect(crossedTuned).toEqual(["waves"]);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `\`fresh-past-target\` meets them too (in the twin's 10 s burst the queue never stands), is ahead by less than a point on either seed set, and meets the oracle target in one fewer scenario than the default on the tuning seeds, \`waves\` by ${(100 * wavesBehind).toFixed(1)} points of served share, and as many on the held-out ones since the longer best effort in recurring overloads (in as many on both before it; in one fewer on both before the drain-rate fix of 2026-12-06, cc237ee, in as many on both from it until demoted requests waited up to 40 s, 2026-12-07, and in one more on the held-out ones until they waited up to 60 s while no one is turned away, the same day, each time by less than half a point of served share;`,
    );
    // The held-out scenario it gains: `waves`, by the points quoted.
    const servedIn = (v: VariantSummary | undefined, name: string) =>
      v?.perScenario[name]?.servedFraction ?? Number.NaN;
    const crossed = Object.keys(def.held.perScenario).filter(
      (name) => servedIn(def.held, name) >= 0.95 !== servedIn(pastTarget.held, name) >= 0.95,
    );
    // (`waves` by 0.3 points from the 40 s demoted wait until the quiet wait; none since.)
    expect(crossed).toEqual([]);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `from that fix until demoted requests waited up to 40 s (2026-12-07) it met the oracle target in as many scenarios as the default on both, from then until they waited up to 60 s while no one is turned away (the same day) in as many on the tuning seeds and one more, \`waves\` by 0.3 points, on the held-out ones, from then until the longer best effort in recurring overloads (the same day) in as many on both, and since in one fewer on the tuning seeds, \`waves\` by ${(100 * wavesBehind).toFixed(1)} points, and as many on the held-out ones. Not kept: it moves no target of the issue.`,
    );
  });

  it("backs docs/retry-policy.md's claim: the bullets' findings on the variants hold on the held-out seeds", () => {
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "Every bullet below that finds a variant's summed worst curve gaps larger than the default's finds them larger on the held-out seeds too, and its findings on the attempts and served targets hold there as well.",
    );
    const held = new Map((json.heldOut as HeldOutRun).variants.map((v) => [v.id, v]));
    const def = held.get("default") as VariantSummary;
    const costlier = ["delay-target-0.5s", "delay-target-0.6s", "delay-target-0.7s", "standing-10s", "standing-20s"]
      .concat(["standing-from-start"])
      .concat(["demoted-fifo", "target-while-draining", "previous-default"])
      .concat(["no-demotion", "burst-persistence", "last-chance", "demote-after-30s", "newest-first-order"]);
    for (const id of costlier) expect(held.get(id)?.worstCurveGapSumPts, id).toBeLessThan(def.worstCurveGapSumPts);
    expect(def.worstCurveGapSumPts).toBeGreaterThan((held.get("no-demotion")?.worstCurveGapSumPts ?? 0) / 2);
    // (The overload floor's bullet quotes its row on both sets and claims nothing of attempts: since the room kept
    // for clients without SDK headers, its row meets the attempts target in fewer scenarios on the tuning seeds only.)
    // (Two-step promises met it in one fewer held out until demoted requests waited up to 60 s while no one is turned
    // away; in as many since, as their bullet says.)
    for (const id of ["standing-10s", "standing-20s", "target-while-draining"])
      expect(held.get(id)?.met.attempts, id).toBeLessThan(def.met.attempts);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "meet the attempts target in fewer scenarios (on the held-out seeds too).",
    );
    expect(held.get("previous-default")?.met.attempts).toBeLessThan(def.met.attempts);
    // Demoting after 30 s: larger on the held-out seeds by the points quoted (three and a half before the drain-rate
    // fix of 2026-12-06, cc237ee; two from it until demoted requests waited up to 40 s; less than half a point since).
    const later = def.worstCurveGapSumPts - (held.get("demote-after-30s")?.worstCurveGapSumPts ?? 0);
    expect(later).toBeGreaterThan(0);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `(on the held-out seeds by ${later.toFixed(1)} points)`,
    );
    for (const id of ["demoted-fifo", "demote-after-30s"])
      expect(held.get(id)?.met.curve, `${id} curve`).toBeLessThanOrEqual(def.met.curve);
    expect(held.get("demote-after-30s")?.met.served).toBeLessThanOrEqual(def.met.served);
    // Arrival order among the demoted meets the served target in no more scenarios, on both seed sets (in fewer
    // until the room kept for clients without SDK headers; in as many since).
    expect(held.get("demoted-fifo")?.met.served).toBeLessThanOrEqual(def.met.served);
    expect(json.variants.find((v) => v.id === "demoted-fifo")?.met.served).toBeLessThanOrEqual(
      json.variants.find((v) => v.id === "default")?.met.served ?? 0,
    );
    // Arrival order among the demoted: the attempts target met in more scenarios on the held-out seeds until the 120 s
    // quiet wait; since, the default meets it in every one there too.
    expect(held.get("demoted-fifo")?.met.attempts).toBe(def.scenarios);
    expect(def.met.attempts).toBe(def.scenarios);
  });

  it("backs docs/retry-policy.md's bullet on the floor read before the burst's rise: ahead on gaps, short in the twin", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    expect(doc).toContain("Not kept: the floor read before the burst's rise");
    const held = new Map((json.heldOut as HeldOutRun).variants.map((v) => [v.id, v]));
    const tuned = new Map(json.variants.map((v) => [v.id, v]));
    const sum = (m: Map<string, VariantSummary>, id: string) => m.get(id)?.worstCurveGapSumPts ?? Number.NaN;
    const moves = Math.abs(sum(tuned, "default") - sum(held, "default"));
    const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
    expect(meetsTwinTargets(twin, DEFAULT_POLICY_ID, DEFAULT_POLICY_ID)).toBe(true);
    for (const id of ["floor-before-rise", "floor-before-rise-fade-5s", "floor-before-rise-persistence"]) {
      // Within what the default's own sum moves between the seed sets, on both; ahead on both without a longer fade,
      // ahead on one set and behind on the other with the 5 s fade and with the age (with the age: behind on both
      // before the drain-rate fix of 2026-12-06, cc237ee, on one from it until demoted requests waited up to 40 s,
      // ahead on both from then until the 120 s quiet wait) ...
      for (const m of [tuned, held]) expect(Math.abs(sum(m, id) - sum(m, "default")), id).toBeLessThan(moves);
      const ahead = [tuned, held].filter((m) => sum(m, id) > sum(m, "default")).length;
      expect(ahead, id).toBe(id === "floor-before-rise" ? 2 : 1);
      // ... and short of an end-to-end target in the twin, which the default meets (all three since that fix).
      expect(meetsTwinTargets(twin, `${DEFAULT_POLICY_ID}:${id}`, DEFAULT_POLICY_ID), id).toBe(false);
    }
    expect(doc).toContain(
      "`floor-before-rise` is ahead of the default on the summed gaps of both seed sets, by less than the default's own sum moves between the two seed sets; `floor-before-rise-fade-5s` and `floor-before-rise-persistence` are ahead on one seed set and behind on the other, by as little (`floor-before-rise-persistence` was behind on both before the drain-rate fix of 2026-12-06, cc237ee, behind on one from it until demoted requests waited up to 40 s, 2026-12-07, and ahead on both from then until the 120 s quiet wait). Each of the three misses an end-to-end target in the twin that the default meets: `floor-before-rise` the attempts target after a quiet spell (before that fix it met them with no room on the attempts), and it meets the attempts target in fewer scenarios than the default on the tuning seeds (the oracle target in as many since that fix, in fewer before).",
    );
    // Past the 1.5 line after a quiet spell, where the default has room.
    const quietRise = twinTargets(twin, "after-quiet", `${DEFAULT_POLICY_ID}:floor-before-rise`, DEFAULT_POLICY_ID);
    const quietDefault = twinTargets(twin, "after-quiet", DEFAULT_POLICY_ID, DEFAULT_POLICY_ID);
    expect(quietRise?.attemptsPerOffered ?? Number.NaN).toBeGreaterThan(1.5);
    expect(quietRise?.met.attempts).toBe(false);
    expect(quietDefault?.attemptsPerOffered ?? Number.NaN).toBeLessThan((quietRise?.attemptsPerOffered ?? 0) - 0.02);
    expect(doc).toContain(
      "and without them the twin makes more attempts than the issue's end-to-end target allows, as it did until the floor's moving means of 2026-12-05",
    );
    expect(tuned.get("floor-before-rise")?.met.attempts).toBeLessThan(tuned.get("default")?.met.attempts ?? 0);
    expect(tuned.get("floor-before-rise")?.met.oracle).toBe(tuned.get("default")?.met.oracle);
    // Which targets the other two miss: 15 s from a cold router with the fade.
    const cold = twinTargets(twin, "cold", `${DEFAULT_POLICY_ID}:floor-before-rise-fade-5s`, DEFAULT_POLICY_ID);
    expect(cold?.met.curve).toBe(false);
    expect(cold?.worst.horizonS).toBe(15);
    expect(cold?.worst.gap).toBeLessThan(-0.02);
    // The burst's age instead "misses the 15 s target from a cold router too" (the attempts after a quiet spell it
    // meets since the floor's moving means).
    const persistence = `${DEFAULT_POLICY_ID}:floor-before-rise-persistence`;
    const coldPersistence = twinTargets(twin, "cold", persistence, DEFAULT_POLICY_ID);
    expect(coldPersistence?.met.curve).toBe(false);
    expect(coldPersistence?.worst.horizonS).toBe(15);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      "(`burstPersistence` 0.75, row `floor-before-rise-persistence`) misses the 15 s target from a cold router too:",
    );
    // In sharded-16 it is what the bullet says it is for: the one scenario where the gap moves by a point or more.
    const gap = (id: string, scenario: string) => tuned.get(id)?.perScenario[scenario]?.worstCurveGap.gapPts ?? 0;
    const moved = Object.keys(tuned.get("default")?.perScenario ?? {}).filter(
      (name) => Math.abs(gap("floor-before-rise", name) - gap("default", name)) >= 1,
    );
    expect(moved).toEqual(["sharded-16"]);
    expect(gap("floor-before-rise", "sharded-16")).toBeGreaterThan(gap("default", "sharded-16"));
  });

  it("backs docs/retry-policy.md's claim on idle while waiting: the default leaves the most in most scenarios", () => {
    const most = scenariosWhereDefaultIdlesMost();
    expect(most.length).toBeGreaterThan(json.scenarios.length / 2);
    expect(read("docs/retry-policy.md").replace(/\s+/g, " ")).toContain(
      `the most of all policies in ${most.length} of ${json.scenarios.length} scenarios`,
    );
  });

  it("backs docs/retry-policy.md's burst persistence bullet: a few attempts fewer, larger gaps, its first version end to end", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    expect(doc).toContain(
      "Its row makes fewer attempts per offered request than the default in most scenarios, by at most 0.03, and has larger summed worst curve gaps: it is not the default.",
    );
    const def = json.variants[0] as VariantSummary;
    const persistent = json.variants.find((v) => v.id === "burst-persistence") as VariantSummary;
    const saved = attemptsSaved(def, persistent);
    expect(saved.filter((d) => d > 0).length).toBeGreaterThan(def.scenarios / 2);
    expect(Math.max(...saved)).toBeLessThan(0.03);
    expect(persistent.worstCurveGapSumPts).toBeLessThan(def.worstCurveGapSumPts);
    // The end-to-end figures it quotes: the first version's run against the default's run 7 (the same three seeds).
    const e2e = (path: string) =>
      (JSON.parse(read(path)) as E2eOpenAiRun).policies.find((p) => p.id === DEFAULT_POLICY_ID);
    const twice = (p: ReturnType<typeof e2e>) => (p?.requestsByAttempts?.["3"] ?? Number.NaN) / (p?.requests ?? 1);
    const [on, off] = [
      e2e("docs/evaluation-e2e-openai-burst-persistence.json"),
      e2e("docs/evaluation-e2e-openai-run7.json"),
    ];
    expect(doc).toContain(
      `${on?.attemptsPerOffered.toFixed(3)} attempts per offered request against ${off?.attemptsPerOffered.toFixed(3)}, and ${pct(twice(on))} of requests refused twice against ${pct(twice(off))}, but ${pct(on?.servedWithinS[15])} served within 15 s against ${pct(off?.servedWithinS[15])} and ${pct(on?.servedWithinS[30])} within 30 s against ${pct(off?.servedWithinS[30])}.`,
    );
  });

  it("backs docs/retry-policy.md's queue refill bullets: why both became the default, and what the twin says", () => {
    const doc = read("docs/retry-policy.md").replace(/\s+/g, " ");
    const tuned = new Map(json.variants.map((v) => [v.id, v]));
    const held = new Map((json.heldOut as HeldOutRun).variants.map((v) => [v.id, v]));
    // The default of the day before met the attempts target in half the scenarios; the default meets it in more.
    // (Half is history: the row inherits today's demoted waits, and since the quiet wait meets it in more, as quoted;
    // in fewer than the default on the tuning seeds still, in as many held out.)
    const before = { tuned: tuned.get("before-queue-refill"), held: held.get("before-queue-refill") };
    expect(doc).toContain(
      `the default of that day met the attempts target in half the scenarios (its row, whose demoted requests wait as today's do, up to 40 s and up to 120 s while no one is turned away, meets it in ${WORDS[before.tuned?.met.attempts ?? Number.NaN]}).`,
    );
    expect(before.tuned?.met.attempts).toBeLessThan(tuned.get("default")?.met.attempts ?? 0);
    expect(before.held?.met.attempts).toBeLessThanOrEqual(held.get("default")?.met.attempts ?? 0);
    // Each of the two alone meets the attempts target in no more scenarios than both together (queue refill alone,
    // without the floor, in fewer).
    for (const id of ["no-queue-refill", "no-overload-floor"])
      expect(tuned.get(id)?.met.attempts, id).toBeLessThanOrEqual(tuned.get("default")?.met.attempts ?? 0);
    expect(tuned.get("no-overload-floor")?.met.attempts).toBeLessThan(tuned.get("default")?.met.attempts ?? 0);
    // Queue refill alone exceeds the end-to-end attempts target in the twin after a quiet spell; both do not.
    expect(doc).toContain(
      "Queue refill alone made more attempts after a quiet spell than the issue's end-to-end target allows",
    );
    const twin = JSON.parse(read("docs/e2e-twin.json")) as { twins: { id: string; policies: BenchmarkRow[] }[] };
    const quiet = (policy: string) =>
      twin.twins.find((t) => t.id === "after-quiet")?.policies.find((p) => p.id === policy) as BenchmarkRow;
    expect(quiet("booked_capacity:no-overload-floor").attemptsPerOffered).toBeGreaterThan(1.5);
    expect(quiet(DEFAULT_POLICY_ID).attemptsPerOffered).toBeLessThanOrEqual(1.5);
    // The curve target: met in sharded-16 by the default of that morning, in no scenario by today's.
    // (Met in one scenario by the row of that morning before the drain-rate fix of 2026-12-06, cc237ee; since, the
    // row meets it in as many as the default, and no target in more, on either seed set.)
    expect(doc).toContain("the curve target was met in one scenario by the default of that morning and in none since");
    expect(tuned.get("default")?.met.curve).toBe(0);
    expect(doc).toContain(
      `with the drain-rate fix of 2026-12-06 (cc237ee) the row of that morning meets it in ${WORDS[before.tuned?.met.curve ?? Number.NaN]} either, and on these counts the two pay with no target.`,
    );
    expect(before.tuned?.met.curve).toBe(tuned.get("default")?.met.curve);
    for (const k of ["curve", "served", "oracle", "attempts"] as const) {
      expect(before.tuned?.met[k], k).toBeLessThanOrEqual(tuned.get("default")?.met[k] ?? 0);
      expect(before.held?.met[k], k).toBeLessThanOrEqual(held.get("default")?.met[k] ?? 0);
    }
    // End to end: run 9 (today's code, every policy) made more attempts than wanted, and its 30 and 60 s shares moved
    // from the day before's as the default-only run's did.
    const runOf = (path: string) =>
      (JSON.parse(read(path)) as E2eOpenAiRun).policies.find((p) => p.id === DEFAULT_POLICY_ID) as BenchmarkRow;
    const [run9, ab, dayBefore] = [
      runOf("docs/evaluation-e2e-openai-run9.json"),
      runOf("docs/evaluation-e2e-openai-queue-refill-floor.json"),
      runOf("docs/evaluation-e2e-openai-before-queue-refill.json"),
    ];
    expect(run9.attemptsPerOffered).toBeGreaterThan(1.5);
    for (const h of [30, 60]) {
      expect(run9.servedWithinS[h] ?? 0).toBeGreaterThan(dayBefore.servedWithinS[h] ?? 1);
      expect(ab.servedWithinS[h] ?? 0).toBeGreaterThan(dayBefore.servedWithinS[h] ?? 1);
    }
  });

  it("its variants table starts with the default, scored on the same targets", () => {
    expect(json.variants[0]).toEqual(defaultSummary(json.scenarios));
    const met = json.targets.filter((t) => t.met.served).length;
    expect(json.variants[0]?.met.served).toBe(met);
    expect(json.variants.map((v) => v.id).slice(1)).toEqual(DEFAULT_POLICY_VARIANTS.map((v) => v.id));
  });

  it("docs/evaluation.md and docs/retry-policy.md are rendered from it: no figure is pasted by hand", () => {
    const figures: Record<string, string[]> = { summary: ["figures/served-within-30s.svg"] };
    for (const s of json.scenarios) figures[s.name] = [`figures/retries-${s.name}.svg`];
    const report = renderReport({
      results: json.scenarios,
      checks: json.targets,
      sweeps: json.sweeps,
      defaultPolicy: json.defaultPolicy,
      seeds: json.seedsPerScenario,
      method: read("eval/method.md"),
      analysis: read("eval/analysis.md"),
      e2e: json.e2e,
      e2eOpenAi: json.e2eOpenAi ?? undefined,
      e2eOpenAiAgain: json.e2eOpenAiAgain ? { run: json.e2eOpenAiAgain, file: RUN_18 } : undefined,
      e2eOpenAiHeld: json.e2eOpenAiHeld ? { run: json.e2eOpenAiHeld, file: RUN_HELD_2 } : undefined,
      e2eOpenAiDefaultLater: json.e2eOpenAiDefaultLater
        ? { run: json.e2eOpenAiDefaultLater, file: RUN_31_QUIET_120_AGAIN }
        : undefined,
      heldOut: json.heldOut ?? undefined,
      arrivals: json.arrivals ?? undefined,
      figures,
    });
    expect(read("docs/evaluation.md")).toBe(report);
    // The end-to-end runs it quotes are the files the runs wrote.
    expect(json.e2eOpenAi).toEqual(JSON.parse(read(RUN_17)));
    // Its repeat is run 18 (runs 13 to 16 ran the defaults before it).
    expect(json.e2eOpenAiAgain).toEqual(JSON.parse(read(RUN_18)));
    expect(json.e2eOpenAiHeld).toEqual(JSON.parse(read(RUN_HELD_2)));
    // The default alone again on the headline run's seeds, with later code: today's default's latest run (run 19
    // until 2026-12-07).
    expect(json.e2eOpenAiDefaultLater).toEqual(JSON.parse(read(RUN_31_QUIET_120_AGAIN)));
    const policyDoc = renderPolicyDoc({
      template: read("eval/retry-policy.md"),
      results: json.scenarios,
      checks: json.targets,
      sweeps: json.sweeps,
      variants: json.variants,
      heldOutVariants: json.heldOut?.variants,
      heldOutScenarios: json.heldOut?.scenarios,
      defaultPolicy: json.defaultPolicy,
      twin: JSON.parse(read("docs/e2e-twin.json")),
      queueRefillAb: {
        before: JSON.parse(read("docs/evaluation-e2e-openai-before-queue-refill.json")),
        after: JSON.parse(read("docs/evaluation-e2e-openai-queue-refill-floor.json")),
      },
      medianFloorAb: {
        before: JSON.parse(read("docs/evaluation-e2e-openai-lowest-floor.json")),
        after: JSON.parse(read("docs/evaluation-e2e-openai-median-floor.json")),
      },
      fastFadeAb: {
        before: JSON.parse(read("docs/evaluation-e2e-openai-run10.json")),
        after: JSON.parse(read(RUN_11)),
      },
      heldSeeds: JSON.parse(read("docs/held-out-seeds.json")),
    });
    expect(read("docs/retry-policy.md")).toBe(policyDoc);
  });
});

/** What one row of an end-to-end table in docs/benchmarks.md shows. */
type BenchmarkRow = Pick<
  E2eOpenAiRun["policies"][number],
  "id" | "servedFraction" | "servedWithinS" | "attemptsPerOffered"
>;

/** docs/benchmarks.md holds an end-to-end run's table: one row per policy, as the run's JSON has it. */
/** Per scenario, the attempts per offered request `variant` makes fewer than `def` (negative: more). */
function attemptsSaved(def: VariantSummary, variant: VariantSummary): number[] {
  return Object.keys(def.perScenario).map(
    (name) =>
      (def.perScenario[name]?.attemptsPerOffered ?? Number.NaN) -
      (variant.perScenario[name]?.attemptsPerOffered ?? Number.NaN),
  );
}

/**
 * Run 17, the headline end-to-end run (`npx tsx eval/e2e-openai.ts --seeds 6 --out
 * docs/evaluation-e2e-openai-run17.json`, moved to the headline's file): today's default beside every policy.
 */
/** The account of why `booked_capacity` is the default and where it loses, that the README summarises. */
const RETRY_AFTER_DOC = "docs/retry-after-default.md";
const RUN_17 = "docs/evaluation-e2e-openai.json";
/** Run 17 made again with the same code: `docs/evaluation.md` renders it as "The same run again, seed by seed". */
const RUN_18 = "docs/evaluation-e2e-openai-run18.json";
/** Run 15, the headline end-to-end run until run 17 (`npx tsx eval/e2e-openai.ts --seeds 6`): the default of 2026-12-04. */
const RUN_15 = "docs/evaluation-e2e-openai-run15.json";
/** Run 13, the headline end-to-end run until run 15: the default before the room kept for header-less clients. */
const RUN_13 = "docs/evaluation-e2e-openai-run13.json";
/** Run 13 made again with the same code (until run 15 `docs/evaluation.md` rendered it beside run 13). */
const RUN_14 = "docs/evaluation-e2e-openai-run14.json";
/** Run 15 made again with the same code (until run 17 `docs/evaluation.md` rendered it beside run 15). */
const RUN_16 = "docs/evaluation-e2e-openai-run16.json";
/** The default of 2026-12-04 beside every policy on six arrival seeds no earlier run used (`--first-seed 3026`). */
const RUN_HELD = "docs/evaluation-e2e-openai-held.json";
/** Run 17's default (that of 2026-12-05) beside every policy on the same six seeds: `docs/evaluation.md` renders it. */
const RUN_HELD_2 = "docs/evaluation-e2e-openai-held2.json";
/** The default alone on run 17's seeds with later code: `docs/evaluation.md` rendered it as "The default again on later code" until run 31. */
const RUN_19_DEFAULT = "docs/evaluation-e2e-openai-run19.json";
/** Run 20: the default and `retry_schedule`, each alone, on run 17's seeds with the code after retry_schedule's work-conservation fix. */
const RUN_20_DEFAULT = "docs/evaluation-e2e-openai-run20.json";
const RUN_20_RS = "docs/evaluation-e2e-openai-run20-retry-schedule.json";
const RUN_21_RQDR = "docs/evaluation-e2e-openai-run21-rqdr.json";
/** Run 22: the default alone on run 17's seeds with the code of 2026-12-06 (docs/benchmarks.md). */
const RUN_22_DEFAULT = "docs/evaluation-e2e-openai-run22.json";
/** The default alone on run 17's seeds with the drain-rate fix (cc237ee). */
const RUN_23_DEFAULT = "docs/evaluation-e2e-openai-run23.json";
/** Run 26: the variant candidates-combined made the default for one run, run 23's seeds (docs/benchmarks.md). */
const RUN_26_CANDIDATES = "docs/evaluation-e2e-openai-run26.json";
/** Run 27: the default with the demoted wait (booking.demotedTimeoutS 40), run 23's seeds (docs/benchmarks.md). */
const RUN_27_DEMOTED_WAIT = "docs/evaluation-e2e-openai-run27.json";
/** Run 28: the default with the quiet wait (booking.demotedQuietTimeoutS 60), run 23's seeds (docs/benchmarks.md). */
const RUN_28_QUIET_WAIT = "docs/evaluation-e2e-openai-run28.json";
/**
 * Run 29: the default with the longer best effort in recurring overloads (bestEffortRecurMinEndS 120, probeS 25), run
 * 28's seeds (docs/benchmarks.md).
 */
const RUN_29_RECURRING_BEST_EFFORT = "docs/evaluation-e2e-openai-run29.json";
/** Run 30: the default with the 120 s quiet wait (booking.demotedQuietTimeoutS), run 29's seeds (docs/benchmarks.md). */
const RUN_30_QUIET_120 = "docs/evaluation-e2e-openai-run30.json";
/**
 * Run 31: run 30's default again, same seeds, with every page regenerated (docs/benchmarks.md); today's default, so
 * `docs/evaluation.md` renders it as "The default again on later code".
 */
const RUN_31_QUIET_120_AGAIN = "docs/evaluation-e2e-openai-run31.json";
/** Run 24: every policy on the spike-train schedule (`--schedule spikes`), three seeds (docs/benchmarks.md). */
/** Run 32: today's default alone on the held-out run's seeds (3026-3031), with the code of 2026-12-08. */
const RUN_32_HELD_DEFAULT = "docs/evaluation-e2e-openai-run32-held.json";
/** Run 33: `router_queue_drain_rate` and `retry_schedule` on the same seeds with the same code, right after run 32. */
const RUN_33_HELD_OTHERS = "docs/evaluation-e2e-openai-run33-held.json";
const RUN_24_SPIKES = "docs/evaluation-e2e-openai-spikes.json";
/** Run 25: run 24's default and static 30 s again, same seeds, later commit (docs/benchmarks.md). */
const RUN_25_SPIKES = "docs/evaluation-e2e-openai-spikes-run25.json";
/** Run 11, the headline end-to-end run until the default changed after it (run 13 took its place). */
const RUN_11 = "docs/evaluation-e2e-openai-run11.json";
/** The end-to-end runs of every policy whose seeds the default-only runs repeat. */
const RUNS_11_AND_12 = [RUN_11, "docs/evaluation-e2e-openai-run12.json"] as const;

/**
 * How far one policy's figures moved from one end-to-end run to another: the largest change of its served share
 * within 5, 15, 30 or 60 s (points) and the change of its attempts per offered request.
 */
function movedBetween(from: E2eOpenAiRun, to: E2eOpenAiRun, id: string): { curve: number; attempts: number } {
  const [a, b] = [from, to].map((r) => r.policies.find((p) => p.id === id) as E2eOpenAiPolicy) as [
    E2eOpenAiPolicy,
    E2eOpenAiPolicy,
  ];
  const curve = Math.max(
    ...[5, 15, 30, 60].map((h) => Math.abs((a.servedWithinS[h] ?? 0) - (b.servedWithinS[h] ?? 0))),
  );
  return { curve: 100 * curve, attempts: Math.abs(a.attemptsPerOffered - b.attemptsPerOffered) };
}

/** How far the default's completion curve, and the other policies' at most, moved from `from` to `to` (points, "1.6"). */
function curveMoved(from: E2eOpenAiRun, to: E2eOpenAiRun): { byDefault: string; byOthers: string } {
  const others = to.policies.filter((p) => p.id !== DEFAULT_POLICY_ID).map((p) => movedBetween(from, to, p.id).curve);
  return {
    byDefault: movedBetween(from, to, DEFAULT_POLICY_ID).curve.toFixed(1),
    byOthers: Math.max(...others).toFixed(1),
  };
}

/**
 * The two sentences docs/benchmarks.md gives a repeated end-to-end run (`to`, `from`'s command again): how far the
 * default's and the other policies' figures moved between the two, and the default's attempts seed by seed in `to`.
 */
function repeatSentences(from: E2eOpenAiRun, to: E2eOpenAiRun, fromName: string, toName: string): [string, string] {
  const others = to.policies.filter((p) => p.id !== DEFAULT_POLICY_ID).map((p) => movedBetween(from, to, p.id));
  const [a, b] = [defaultOf(from), defaultOf(to)];
  return [
    `From ${fromName} to ${toName} the default's completion curve moved by at most ${movedBetween(from, to, DEFAULT_POLICY_ID).curve.toFixed(1)} points and its attempts per offered request from ${a.attemptsPerOffered.toFixed(3)} to ${b.attemptsPerOffered.toFixed(3)}; the other policies' curves by up to ${Math.max(...others.map((m) => m.curve)).toFixed(1)} points and their attempts by up to ${Math.max(...others.map((m) => m.attempts)).toFixed(3)}.`,
    `${seedBySeedAttempts(b)}.`,
  ];
}

/**
 * docs/benchmarks.md's sentence on a run's default seed by seed, without its closing stop: "Seed by seed the
 * default's attempts per offered request run from 1.427 to 1.483 (at most 1.5 in 6 of 6 seeds)".
 */
/** The most a policy's served share within 5, 15, 30 or 60 s differs between two end-to-end runs, in points ("0.6"). */
/** A share as the docs print it: "92.2%" (NaN for a missing figure, so a missing one cannot match). */
function pct(v: number | undefined): string {
  return `${(100 * (v ?? Number.NaN)).toFixed(1)}%`;
}

/** The share of a run's ended promises that broke, as docs/benchmarks.md prints it: "7.7%". */
function brokenShare(l: PromiseOutcomes): string {
  return `${((100 * l.broken) / (l.broken + l.kept + l.noShow)).toFixed(1)}%`;
}

/** A policy's share served within `h` s in one twin of docs/e2e-twin.json (NaN when the twin lacks it). */
function twinShare(twin: E2eTwinRun["twins"][number], id: string, h: number): number {
  return twin.policies.find((p) => p.id === id)?.servedWithinS[h] ?? Number.NaN;
}

/** A policy's share served within 60 s of first attempts. */
function at60(p: { servedWithinS: Record<string, number> }): number {
  return p.servedWithinS[60] ?? Number.NaN;
}

function policyCurveMoved(a: E2eOpenAiPolicy, b: E2eOpenAiPolicy): string {
  const most = Math.max(...[5, 15, 30, 60].map((h) => Math.abs((a.servedWithinS[h] ?? 0) - (b.servedWithinS[h] ?? 0))));
  return (100 * most).toFixed(1);
}

/**
 * Checks docs/benchmarks.md's section on a default-only end-to-end run made after a change of the default (`after`),
 * on the seeds of the one before it (`before`): its row, its command and commit, that it meets every end-to-end target
 * held to `laterRunReferences()`, the sentences comparing the two runs, and that the end-to-end twin's default rows
 * are `previousVariant`'s (the default before the change) to the last digit at the end-to-end targets' horizons (5 to
 * 60 s) and in attempts ("as the twin said"). Returns the two runs' default rows.
 */
function expectDefaultRunBeside(
  before: { name: string; file: string },
  after: { name: string; file: string },
  previousVariant: string,
): { before: E2eOpenAiPolicy; after: E2eOpenAiPolicy } {
  const bench = read("docs/benchmarks.md");
  const flat = bench.replace(/\s+/g, " ");
  const [runBefore, runAfter] = [before.file, after.file].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun];
  const { policy: b, check: checkB } = expectDefaultOnlyRun(runBefore, runAfter, "the change with every page");
  const a = defaultOf(runBefore) as E2eOpenAiPolicy;
  const checkA = checkE2eTargets([...laterRunReferences(), a], DEFAULT_POLICY_ID);
  const worst = (c: typeof checkB) => `worst gap ${(100 * (c?.worst.gap ?? 0)).toFixed(1)} at ${c?.worst.horizonS} s`;
  expect(flat).toContain(
    `${after.name}'s default meets every end-to-end target (${worst(checkB)}, ${b.attemptsPerOffered.toFixed(3)} attempts per offered request). Its curve moved by at most ${policyCurveMoved(a, b)} points from ${before.name}'s, the default before the change on the same seeds (${before.name}: ${worst(checkA)}, ${a.attemptsPerOffered.toFixed(3)} attempts per offered request);`,
  );
  const [la, lb] = [a.ledger, b.ledger] as [PromiseOutcomes, PromiseOutcomes];
  expect(flat).toContain(
    `its router broke ${brokenShare(lb)} (${lb.broken} of ${lb.made}) of its promises, where ${before.name}'s broke ${brokenShare(la)}, and ${b.requestsByAttempts?.["3"]} requests took a third attempt (${before.name}: ${a.requestsByAttempts?.["3"]}). ${seedBySeedAttempts(b)}.`,
  );
  const twin = JSON.parse(read("docs/e2e-twin.json")) as E2eTwinRun;
  for (const t of twin.twins) {
    const [now, previous] = [DEFAULT_POLICY_ID, `${DEFAULT_POLICY_ID}:${previousVariant}`].map((id) =>
      t.policies.find((p) => p.id === id),
    );
    for (const h of [5, 15, 30, 60]) expect(previous?.servedWithinS[h], `${t.id} ${h} s`).toBe(now?.servedWithinS[h]);
    expect(previous?.attemptsPerOffered, t.id).toBe(now?.attemptsPerOffered);
  }
  return { before: a, after: b };
}

/**
 * Checks docs/benchmarks.md's section on a run of the default alone (`run`) on `seedsFrom`'s seeds: its table row,
 * its command, its commit followed by `commitNote`, and that it meets every end-to-end target against
 * {@link laterRunReferences}. Returns its default's figures and the check.
 */
function expectDefaultOnlyRun(
  seedsFrom: E2eOpenAiRun,
  run: E2eOpenAiRun,
  commitNote: string,
): { policy: E2eOpenAiPolicy; check: ReturnType<typeof checkE2eTargets> } {
  const bench = read("docs/benchmarks.md");
  const flat = bench.replace(/\s+/g, " ");
  expect(run.seeds).toEqual(seedsFrom.seeds);
  expect(run.policies.map((p) => p.id)).toEqual([DEFAULT_POLICY_ID]);
  expectBenchmarkRows(bench, run);
  expect(flat).toContain(`\`${run.generatedBy}\``.replace(/\s+/g, " "));
  expect(flat).toContain(`with nothing else running (commit \`${run.commit}\`, ${commitNote}`);
  const policy = defaultOf(run) as E2eOpenAiPolicy;
  const check = checkE2eTargets([...laterRunReferences(), policy], DEFAULT_POLICY_ID);
  expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
  return { policy, check };
}

/** Each seed's share served within 60 s in two runs of the default on the same seeds, with its request count. */
function seedSharesAt60(
  before: E2eOpenAiPolicy,
  after: E2eOpenAiPolicy,
): { seed: number; requests: number; before: number; after: number }[] {
  const at60 = (d: { servedWithinS: Record<string, number> }) => d.servedWithinS[60] ?? Number.NaN;
  return (after.perSeed ?? []).map((s) => {
    const was = (before.perSeed ?? []).find((x) => x.seed === s.seed);
    return { seed: s.seed, requests: s.requests, before: was ? at60(was) : Number.NaN, after: at60(s) };
  });
}

/**
 * The other policies the default's later end-to-end runs (22, 23, 26, 27) are held to: run 17's static 30 s, run 21's
 * `router_queue_drain_rate` and run 20's `retry_schedule`, each the latest run of that policy on the same seeds.
 */
function laterRunReferences(): E2eOpenAiPolicy[] {
  const [run17, run20Rs, run21] = [RUN_17, RUN_20_RS, RUN_21_RQDR].map(runOf) as [
    E2eOpenAiRun,
    E2eOpenAiRun,
    E2eOpenAiRun,
  ];
  return [...run17.policies.filter((p) => p.id === "static-30"), ...run21.policies, ...run20Rs.policies];
}

/**
 * The other policies today's default is held to on the held-out seeds (3026-3031, run 32): the held-out run's static
 * 30 s and run 33's `router_queue_drain_rate` and `retry_schedule`, the latest run of each there.
 */
function heldRunReferences(): E2eOpenAiPolicy[] {
  const [held, run33] = [RUN_HELD_2, RUN_33_HELD_OTHERS].map(runOf) as [E2eOpenAiRun, E2eOpenAiRun];
  return [...held.policies.filter((p) => p.id === "static-30"), ...run33.policies];
}

function seedBySeedAttempts(d: E2eOpenAiPolicy): string {
  const attempts = (d.perSeed ?? []).map((x) => x.attemptsPerOffered);
  return `Seed by seed the default's attempts per offered request run from ${Math.min(...attempts).toFixed(3)} to ${Math.max(...attempts).toFixed(3)} (at most 1.5 in ${attempts.filter((x) => x <= 1.5).length} of ${attempts.length} seeds)`;
}

/** The most any other policy's served share within 5, 15, 30 or 60 s moved between runs 11 and 12 (same code). */
function otherPoliciesMovedBetweenRuns11And12(): number {
  const [run11, run12] = RUNS_11_AND_12.map(runOf) as [E2eOpenAiRun, E2eOpenAiRun];
  const moved = run11.policies
    .filter((p) => p.id !== DEFAULT_POLICY_ID)
    .flatMap((p) => {
      const q = run12.policies.find((x) => x.id === p.id) as E2eOpenAiPolicy;
      return ["5", "15", "30", "60"].map((h) => Math.abs((p.servedWithinS[h] ?? 0) - (q.servedWithinS[h] ?? 0)));
    });
  return Math.max(...moved);
}

/**
 * A default-only end-to-end run against another run's other policies, on the same seeds: it meets every end-to-end
 * target, its worst gap is at 15 s, and that gap in points ("-0.5").
 */
function gapAgainstRun(alone: E2eOpenAiRun, path: string): string {
  const worst = worstAgainstRun(alone, path);
  expect(worst.horizonS).toBe(15);
  return (100 * worst.gap).toFixed(1);
}

/**
 * A default-only end-to-end run against another run's other policies, on the same seeds: it meets the targets
 * `met` says (every one, unless told); its worst gap.
 */
function worstAgainstRun(
  alone: E2eOpenAiRun,
  path: string,
  met = { served: true, curve: true, attempts: true },
): { horizonS: number; gap: number } {
  const run = runOf(path);
  expect(run.seeds).toEqual(alone.seeds);
  const others = run.policies.filter((p) => p.id !== DEFAULT_POLICY_ID);
  const check = checkE2eTargets([...alone.policies, ...others], DEFAULT_POLICY_ID);
  expect(check?.met, path).toEqual(met);
  return check?.worst ?? { horizonS: Number.NaN, gap: Number.NaN };
}

/**
 * The default alone on runs 15 and 16's seeds, without and with the floor's moving means (the two default-only
 * end-to-end runs of 2026-12-05).
 */
function movingFloorRuns(): [E2eOpenAiPolicy, E2eOpenAiPolicy] {
  return ["docs/evaluation-e2e-openai-refusal-memory.json", "docs/evaluation-e2e-openai-moving-floor.json"].map(
    (path) => defaultOf(runOf(path)) as E2eOpenAiPolicy,
  ) as [E2eOpenAiPolicy, E2eOpenAiPolicy];
}

/**
 * {@link worstAgainstRun} against each of `paths`, each expected at `horizonS`: the worst gaps in points as
 * docs/benchmarks.md prints them ("-0.9").
 */
function worstGapPtsAt(
  alone: E2eOpenAiRun,
  paths: readonly string[],
  horizonS: number,
  met?: { served: boolean; curve: boolean; attempts: boolean },
): string[] {
  return paths.map((path) => {
    const w = worstAgainstRun(alone, path, met);
    expect(w.horizonS, path).toBe(horizonS);
    return (100 * w.gap).toFixed(1);
  });
}

/**
 * `to`'s served share less `from`'s at 5, 15, 30 and 60 s, and the largest change (by size with `bySize`), in points
 * as docs/benchmarks.md quotes it, with its horizon.
 */
function curveChange(
  from: E2eOpenAiPolicy,
  to: E2eOpenAiPolicy,
  { bySize = false } = {},
): { byHorizon: number[]; largest: number; largestPts: string; atS: string } {
  const horizons = ["5", "15", "30", "60"];
  const byHorizon = horizons.map((h) => (to.servedWithinS[h] ?? 0) - (from.servedWithinS[h] ?? 0));
  const sized = bySize ? byHorizon.map(Math.abs) : byHorizon;
  const largest = Math.max(...sized);
  return {
    byHorizon,
    largest,
    largestPts: (100 * largest).toFixed(1),
    atS: horizons[sized.indexOf(largest)] as string,
  };
}

/**
 * What docs/benchmarks.md says of a run of every end-to-end policy: its rows, every target met, the default against
 * static 30 s at each horizon (ahead at every one, static 30 s serving all) and the default's attempts seed by seed.
 */
function expectEveryPolicyRun(bench: string, run: E2eOpenAiRun): void {
  const flat = bench.replace(/\s+/g, " ");
  expectBenchmarkRows(bench, run);
  const d = defaultOf(run);
  const check = checkE2eTargets(run.policies, DEFAULT_POLICY_ID);
  expect(check?.met).toEqual({ served: true, curve: true, attempts: true });
  expect(flat).toContain(
    `Every end-to-end target is met: ${d.served} of ${d.requests} requests served, a worst gap of ${(100 * (check?.worst.gap ?? Number.NaN)).toFixed(1)} points (at ${check?.worst.horizonS} s) and ${d.attemptsPerOffered.toFixed(3)} attempts per offered request.`,
  );
  const s30 = run.policies.find((p) => p.id === "static-30") as E2eOpenAiPolicy;
  const ahead = curveChange(s30, d).byHorizon.map((v) => (100 * v).toFixed(1));
  for (const a of ahead) expect(Number(a)).toBeGreaterThan(0);
  expect(flat).toContain(
    `the default serves more within 5, 15, 30 and 60 s (by ${ahead.slice(0, 3).join(", ")} and ${ahead[3]} points) with ${(s30.attemptsPerOffered - d.attemptsPerOffered).toFixed(3)} fewer attempts per offered request; static 30 s serves all ${s30.requests}.`,
  );
  expect(s30.served).toBe(s30.requests);
  expect(flat).toContain(`${seedBySeedAttempts(d)}.`);
}

function expectBenchmarkRows(bench: string, run: { policies: readonly BenchmarkRow[] }): void {
  const p = (v: number | undefined) => `${(100 * (v ?? Number.NaN)).toFixed(1)}%`;
  for (const policy of run.policies) {
    const w = policy.servedWithinS;
    const row = `| ${policy.id} | ${p(policy.servedFraction)} | ${p(w[5])} | ${p(w[15])} | ${p(w[30])} | ${p(w[60])} | ${policy.attemptsPerOffered.toFixed(3)} |`;
    expect(bench, policy.id).toContain(row);
  }
}

/** An attempts-per-offered difference as docs/benchmarks.md prints it: "+0.002", "-0.011". */
function signedAttempts(v: number): string {
  return `${v >= 0 ? "+" : ""}${v.toFixed(3)}`;
}

/** The fit of one replaying twin (`cold`, `after-quiet`) among `fits` (docs/e2e-twin.json). */
function replayedFitOf(fits: readonly (TwinFit & { twin: string; arrivals: string })[], id: string): TwinFit {
  const f = fits.find((x) => x.twin === id && x.arrivals === "replayed");
  if (!f) throw new Error(`no replayed fit for ${id}`);
  return f;
}
