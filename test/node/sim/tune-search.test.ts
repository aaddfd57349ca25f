import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../../../src/core/capacity-booking";
import { DEFAULT_BOOKING_ADMISSION } from "../../../src/core/router-core";
import { seededRandom } from "../../../src/engine/rng";
import { renderTuneReport, type TuneReport } from "../../../src/sim/tune-report";
import {
  changedTunables,
  hillClimb,
  neighbour,
  TUNING_SPACE,
  type TuningCandidate,
  type TuningSpace,
} from "../../../src/sim/tune-search";

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

  it.runIf(existsSync(resolve(root, "docs/tune-search.json")))(
    "docs/tune-search.md is the rendering of its JSON, and the best found is no worse than the default it started from",
    () => {
      const report = JSON.parse(readFileSync(resolve(root, "docs/tune-search.json"), "utf8")) as TuneReport;
      expect(readFileSync(resolve(root, "docs/tune-search.md"), "utf8")).toBe(renderTuneReport(report));
      expect(report.best.tuning.worstCurveGapSumPts).toBeGreaterThanOrEqual(
        report.default.tuning.worstCurveGapSumPts - 1e-9,
      );
      for (const t of report.best.twin) expect(t.attemptsPerOffered).toBeLessThanOrEqual(report.twinCheck.maxAttempts);
    },
  );
});
