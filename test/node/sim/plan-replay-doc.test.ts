import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type PlanReplayReport, renderPlanReplay, worstGap } from "../../../src/sim/plan-replay";
import type { QueueBoundReport } from "../../../src/sim/queue-bound";

const root = resolve(import.meta.dirname, "../../..");
const report = JSON.parse(readFileSync(resolve(root, "docs/plan-replay.json"), "utf8")) as PlanReplayReport;
const queueBound = JSON.parse(readFileSync(resolve(root, "docs/queue-bound.json"), "utf8")) as QueueBoundReport;

describe("docs/plan-replay (npm run eval:plan-replay)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/plan-replay.md"), "utf8")).toBe(renderPlanReplay(report));
  });

  it("replays the queue-aware bound itself: as bounded, the program is docs/queue-bound.json's, margin and target", () => {
    const bounded = report.rows.filter((r) => r.setting.marginS === 0 && r.setting.depth === undefined);
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
    for (const r of report.rows.filter((r) => r.setting.marginS === 0 && r.setting.depth === undefined))
      expect(gap(r.replayed.curve, r.target), r.scenario).toBeLessThan(gap(r.defaultCurve, r.target));
    const margin = report.rows.filter((r) => r.setting.marginS > 0);
    expect(margin.map((r) => r.scenario)).toEqual(["demo-burst-3x", "burst-3x", "waves"]);
    for (const r of margin) {
      const met = gap(r.replayed.curve, r.target) >= -0.02;
      expect(met, r.scenario).toBe(r.scenario === "demo-burst-3x");
      if (met) expect(r.replayed.attemptsPerOffered).toBeLessThan(r.staticThirtyAttempts);
    }
  });
});
