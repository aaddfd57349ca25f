import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../../../src/core/capacity-booking";
import { DEFAULT_BOOKING_ADMISSION } from "../../../src/core/router-options";
import { seededRandom } from "../../../src/engine/rng";
import {
  brokenConstraints,
  renderTuneReport,
  type TunedCandidate,
  type TunedFigures,
  type TuneReport,
} from "../../../src/sim/tune-report";
import {
  changedTunables,
  hillClimb,
  neighbour,
  TUNING_SPACE,
  type TuningCandidate,
  type TuningSpace,
} from "../../../src/sim/tune-search";
import type { VariantSummary } from "../../../src/sim/variants";

const root = resolve(import.meta.dirname, "../../..");
const start: TuningCandidate = { ledger: {}, booking: {} };
const space: TuningSpace = { ledger: { burstFadeS: [0, 1, 2, 3, 5], leadS: [0.5, 1, 2] }, booking: {} };

describe("the tuning search (npm run eval:tune)", () => {
  it("every default is on the grid, so the search starts on it", () => {
    for (const [key, values] of Object.entries(TUNING_SPACE.ledger))
      expect(values, key).toContain(
        DEFAULT_CAPACITY_BOOKING_OPTIONS[key as keyof typeof DEFAULT_CAPACITY_BOOKING_OPTIONS],
      );
    for (const [key, values] of Object.entries(TUNING_SPACE.booking))
      expect(values, key).toContain(DEFAULT_BOOKING_ADMISSION[key as keyof typeof DEFAULT_BOOKING_ADMISSION]);
  });

  it("a neighbour changes at most three tunables, each to a value of its grid, and leaves its origin alone", () => {
    const random = seededRandom(7);
    for (let i = 0; i < 200; i++) {
      const from: TuningCandidate = { ledger: { burstFadeS: 2 }, booking: {} };
      const next = neighbour(from, TUNING_SPACE, random);
      expect(from).toEqual({ ledger: { burstFadeS: 2 }, booking: {} });
      const changed = [
        ...Object.entries(next.ledger).filter(([k, v]) => k !== "burstFadeS" || v !== 2),
        ...Object.entries(next.booking),
      ];
      expect(changed.length).toBeLessThanOrEqual(3);
      for (const [k, v] of Object.entries(next.ledger))
        expect(TUNING_SPACE.ledger[k as keyof typeof TUNING_SPACE.ledger]).toContain(v);
      for (const [k, v] of Object.entries(next.booking))
        expect(TUNING_SPACE.booking[k as keyof typeof TUNING_SPACE.booking]).toContain(v);
    }
  });

  it("climbs to the grid's best point of a separable objective, deterministically for a seed", () => {
    const evaluate = (c: TuningCandidate) => ({
      objective: -Math.abs((c.ledger.burstFadeS ?? 2) - 5) - Math.abs((c.ledger.leadS ?? 1) - 0.5),
    });
    const run = () =>
      hillClimb({ start, space, iterations: 60, random: seededRandom(3), evaluate, feasible: () => true });
    const a = run();
    expect(a.best.candidate.ledger).toMatchObject({ burstFadeS: 5, leadS: 0.5 });
    expect(a.best.score.objective).toBeCloseTo(0, 9);
    expect(run().steps).toEqual(a.steps);
    // Only steps that improved on the best so far are marked better, and the last of them is the best.
    const better = a.steps.filter((s) => s.verdict === "better");
    expect(better.at(-1)?.candidate).toEqual(a.best.candidate);
  });

  it("keeps no candidate that fails the feasibility check, however well it scores", () => {
    const evaluate = (c: TuningCandidate) => ({ objective: c.ledger.burstFadeS ?? 2 });
    const feasible = (c: TuningCandidate) => (c.ledger.burstFadeS ?? 2) <= 3;
    const run = hillClimb({ start, space, iterations: 80, random: seededRandom(5), evaluate, feasible });
    expect(run.best.candidate.ledger.burstFadeS).toBe(3);
    expect(run.steps.some((s) => s.verdict === "infeasible" && s.candidate.ledger.burstFadeS === 5)).toBe(true);
  });

  it("names only the tunables that differ from the defaults", () => {
    const defaults = { ledger: { burstFadeS: 2, leadS: 1 }, booking: { demoteAfterS: 3 } };
    expect(changedTunables({ ledger: { burstFadeS: 2, leadS: 2 }, booking: { demoteAfterS: 3 } }, defaults)).toEqual({
      leadS: 2,
    });
  });

  it("names what a candidate breaks that the default keeps: the p50 target, the twin, a target met less often", () => {
    const figures = (p50: number, served: number): TunedFigures => ({
      objective: 0,
      worstCurveGapSumPts: -60,
      met: { curve: 0, served, oracle: 8, attempts: 12 },
      scenarios: 12,
      sustainedP50S: p50,
      worstCurveGapPts: {},
    });
    const twin = (attempts: number, within15: number) => [
      { id: "cold", attemptsPerOffered: attempts, servedWithinS: { "15": within15, "30": 0.8 } },
    ];
    const candidate = (p50: number, served: number, attempts: number, within15: number): TunedCandidate => ({
      changed: {},
      candidate: start,
      tuning: figures(p50, served),
      heldOut: figures(p50, served),
      twin: twin(attempts, within15),
    });
    const report = {
      sustainedP50TargetS: 5,
      twinCheck: { maxAttempts: 1.47, curveSlack: 0.01 },
      default: { tuning: figures(4.9, 12), heldOut: figures(4.9, 12), twin: twin(1.44, 0.62) },
    } as unknown as TuneReport;
    expect(brokenConstraints(report, candidate(4.9, 12, 1.44, 0.615))).toEqual([]);
    const broken = brokenConstraints(report, candidate(6.02, 11, 1.53, 0.6));
    expect(broken).toContain("sustained-1.3x p50 6.02 s on the tuning seeds (target 5 s)");
    expect(broken).toContain("served target met in 11 of 12 held-out scenarios (default 12)");
    expect(broken).toContain("cold twin: 1.530 attempts per offered request (at most 1.47)");
    expect(broken).toContain("cold twin: 60.0% within 15 s (default 62.0%)");
    expect(broken).toHaveLength(6);
  });

  it.runIf(existsSync(resolve(root, "docs/tune-search.json")))(
    "docs/tune-search.md is the rendering of its JSON, and the best found is no worse than the default it started from",
    () => {
      const report = JSON.parse(readFileSync(resolve(root, "docs/tune-search.json"), "utf8")) as TuneReport;
      expect(readFileSync(resolve(root, "docs/tune-search.md"), "utf8")).toBe(renderTuneReport(report));
      expect(report.best.tuning.objective).toBeGreaterThanOrEqual(report.default.tuning.objective - 1e-9);
      for (const t of report.best.twin) expect(t.attemptsPerOffered).toBeLessThanOrEqual(report.twinCheck.maxAttempts);
    },
  );

  // The search starts from the default as docs/evaluation.json scores it: a change that moves the default's figures
  // (the drain-rate fix of 2026-12-06 did, and docs/tune-search.md went on describing the default before it) must
  // rerun the search too.
  it.runIf(existsSync(resolve(root, "docs/tune-search.json")))(
    "docs/tune-search.json's default is today's: its figures are docs/evaluation.json's default row on both seed sets",
    () => {
      const report = JSON.parse(readFileSync(resolve(root, "docs/tune-search.json"), "utf8")) as TuneReport;
      const evaluation = JSON.parse(readFileSync(resolve(root, "docs/evaluation.json"), "utf8")) as {
        variants: VariantSummary[];
        heldOut: { variants: VariantSummary[] };
      };
      const [tuning, heldOut] = [evaluation.variants[0], evaluation.heldOut.variants[0]] as [
        VariantSummary,
        VariantSummary,
      ];
      for (const [own, row] of [
        [report.default.tuning, tuning],
        [report.default.heldOut, heldOut],
      ] as const) {
        expect(own.worstCurveGapSumPts).toBeCloseTo(row.worstCurveGapSumPts, 6);
        expect(own.met).toEqual(row.met);
      }
    },
  );

  it.runIf(existsSync(resolve(root, "docs/tune-search.json")))(
    "backs docs/benchmarks.md: with the demoted wait the search finds part of the best candidate it found before the drain-rate fix, and others",
    () => {
      const report = JSON.parse(readFileSync(resolve(root, "docs/tune-search.json"), "utf8")) as TuneReport;
      // The best candidate of the runs before the drain-rate fix of 2026-12-06 (cc237ee), from docs/tune-search.md then.
      const before = [
        "trustGain",
        "probeYoungS",
        "minBacklogDrainShare",
        "baselineWindowS",
        "probeRecurS",
        "maxHeldRoomShare",
        "queueDelayTargetS",
      ];
      // With the drain-rate fix it found 5 of them and no other; with the 40 s demoted wait (2026-12-07), 2 and 4
      // others; with the quiet wait, all 7 and 3 others; since the longer best effort in recurring overloads, the run
      // quoted.
      const found = Object.keys(report.best.changed);
      const kept = found.filter((key) => before.includes(key));
      const other = found.filter((key) => !before.includes(key));
      const names = (keys: string[]) => keys.map((k) => `\`${k}\``).join(", ");
      expect(readFileSync(resolve(root, "docs/benchmarks.md"), "utf8").replace(/\s+/g, " ")).toContain(
        `run again with the drain-rate fix of 2026-12-06 (cc237ee), it found 5 of that candidate's ${before.length} changes and no other; run again when demoted requests began to wait up to 40 s (2026-12-07), 2 of them (\`baselineWindowS\`, \`queueDelayTargetS\`) and 4 others (\`lateS\`, \`leadS\`, \`twoStepHorizons\`, \`demoteAfterS\`); run again when demoted requests began to wait up to 60 s while no one is turned away (2026-12-07), all 7 and 3 others (\`priorShowRate\`, \`overloadFloorMovingS\`, \`demoteAfterS\`); run again since the longer best effort in recurring overloads (the same day), ${kept.length} of them (${names(kept)}) and ${other.length} others (${names(other)}), \`docs/tune-search.md\``,
      );
    },
  );

  it.runIf(existsSync(resolve(root, "docs/tune-search.json")))(
    "backs docs/retry-policy.md: no candidate the search kept or scored meets the curve target in every scenario",
    () => {
      const report = JSON.parse(readFileSync(resolve(root, "docs/tune-search.json"), "utf8")) as TuneReport;
      const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
      expect(doc).toContain("Nor is it a matter of tuning those choices");
      for (const c of [report.best, report.bestByGap])
        for (const f of [c.tuning, c.heldOut]) expect(f.met.curve).toBeLessThan(f.scenarios);
    },
  );
});
