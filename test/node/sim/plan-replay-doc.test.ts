import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { isAsBounded, type PlanReplayReport, renderPlanReplay, worstGap } from "../../../src/sim/plan-replay";
import type { QueueBoundReport } from "../../../src/sim/queue-bound";

const root = resolve(import.meta.dirname, "../../..");
const report = JSON.parse(readFileSync(resolve(root, "docs/plan-replay.json"), "utf8")) as PlanReplayReport;
const queueBound = JSON.parse(readFileSync(resolve(root, "docs/queue-bound.json"), "utf8")) as QueueBoundReport;

describe("docs/plan-replay (npm run eval:plan-replay)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/plan-replay.md"), "utf8")).toBe(renderPlanReplay(report));
  });

  it("replays the queue-aware bound itself: as bounded, the program is docs/queue-bound.json's, margin and target", () => {
    const bounded = report.rows.filter(isAsBounded);
    expect(bounded.length).toBeGreaterThan(0);
    for (const row of bounded) {
      const same = queueBound.scenarios.find((s) => s.name === row.scenario);
      expect(row.planMargin, row.scenario).toBeCloseTo(same?.margin ?? Number.NaN, 4);
      expect(row.target, row.scenario).toEqual(same?.target);
      expect(row.staticThirtyAttempts, row.scenario).toBe(same?.attemptsAtMost);
    }
  });

  it("backs docs/retry-policy.md's account: as bounded, behind the default; with a margin, the target met in demo-burst-3x only", () => {
    const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
    expect(doc).toContain(
      "the queue-aware bound's own schedule is further from the target than the default in every scenario replayed",
    );
    expect(doc).toContain(
      "it meets the curve target in the issue's reproduction (`demo-burst-3x`), with fewer attempts than static 30 s, and not in `burst-3x` or `waves`",
    );
    const gap = (c: Record<string, number>, t: Record<string, number>) => worstGap(c, t).gap;
    for (const r of report.rows.filter(isAsBounded))
      expect(gap(r.replayed.curve, r.target), r.scenario).toBeLessThan(gap(r.defaultCurve, r.target));
    const margin = report.rows.filter((r) => r.setting.marginS > 0);
    expect(margin.map((r) => r.scenario)).toEqual(["demo-burst-3x", "burst-3x", "waves"]);
    for (const r of margin) {
      const met = gap(r.replayed.curve, r.target) >= -0.02;
      expect(met, r.scenario).toBe(r.scenario === "demo-burst-3x");
      if (met) expect(r.replayed.attemptsPerOffered).toBeLessThan(r.staticThirtyAttempts);
    }
  });

  it("re-plans from the bound's own schedule: its first plan is the as-bounded row's, its last is the row's", () => {
    const replanned = report.rows.filter((r) => r.setting.plans !== undefined);
    expect(replanned.map((r) => r.scenario)).toEqual(["demo-burst-3x", "burst-3x", "waves"]);
    for (const row of replanned) {
      const passes = row.passes ?? [];
      expect(passes, row.scenario).toHaveLength(row.setting.plans ?? 0);
      const bounded = report.rows.find((r) => r.scenario === row.scenario && isAsBounded(r));
      expect(passes[0]?.replayedCurve, row.scenario).toEqual(bounded?.replayed.curve);
      expect(passes[0]?.planMargin, row.scenario).toBeCloseTo(bounded?.planMargin ?? Number.NaN, 9);
      expect(passes.at(-1)?.replayedCurve, row.scenario).toEqual(row.replayed.curve);
    }
  });

  it("backs docs/retry-policy.md's account of the re-planned schedule", () => {
    const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
    expect(doc).toContain(
      "it misses the target in `demo-burst-3x` by half a point at 15 s (it met it before the drain-rate fix of 2026-12-06, cc237ee), and in `burst-3x` and `waves` it comes within 2 points at the 60 s horizon, where the default does not, but falls further behind than the default at 5 s: in those two scenarios no schedule found, with foresight or without, is within 2 points of the best other policy at every horizon at once",
    );
    const at = (c: Record<string, number>, r: { target: Record<string, number> }, h: string) =>
      (c[h] ?? 0) - (r.target[h] ?? 0);
    const replanned = report.rows.filter((r) => r.setting.plans !== undefined);
    expect(replanned.map((r) => r.setting.plans)).toEqual([4, 4, 4]); // "three times more"
    for (const r of replanned) {
      if (r.scenario === "demo-burst-3x") {
        // "Misses by half a point at 15 s": past the target's 2 points, by less than one.
        const worst = worstGap(r.replayed.curve, r.target);
        expect(worst.gap).toBeLessThan(-0.02);
        expect(worst.gap).toBeGreaterThan(-0.03);
        expect(worst.horizonS).toBe(15);
        continue;
      }
      expect(at(r.replayed.curve, r, "60"), r.scenario).toBeGreaterThanOrEqual(-0.02);
      expect(at(r.defaultCurve, r, "60"), r.scenario).toBeLessThan(-0.02);
      expect(at(r.replayed.curve, r, "5"), r.scenario).toBeLessThan(at(r.defaultCurve, r, "5"));
      // No row on the page, nor the default, meets the target in this scenario.
      for (const row of report.rows.filter((x) => x.scenario === r.scenario)) {
        expect(worstGap(row.replayed.curve, row.target).gap, `${r.scenario} ${row.setting.name}`).toBeLessThan(-0.02);
        expect(worstGap(row.defaultCurve, row.target).gap, r.scenario).toBeLessThan(-0.02);
      }
    }
  });
});
