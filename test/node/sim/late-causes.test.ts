import { describe, expect, it } from "vitest";
import type { ScenarioResult } from "../../../src/sim/evaluation";
import { LATE_CAUSES, lateCauseOf, lateCauses } from "../../../src/sim/late-causes";
import {
  excessByCause,
  type LateCausesReport,
  type LateCausesRow,
  renderLateCauses,
} from "../../../src/sim/late-causes-report";
import type { TargetCheck } from "../../../src/sim/targets";
import type { AttemptRecord, RequestTrace } from "../../../src/sim/trace";
import { repoJson, repoText } from "../../support/repo-files";

/** An attempt at `atS`, answered `waitS` later (placed, or refused), its delay the server's hint or not. */
const attempt = (atS: number, outcome: AttemptRecord["outcome"], waitS = 0, hinted = false): AttemptRecord => ({
  atMs: atS * 1000,
  outcome,
  answeredAtMs: (atS + waitS) * 1000,
  hinted,
});

/** A request first sent at 0 s: its attempts, and when its client had the answer (served) or none (lost). */
const request = (attempts: AttemptRecord[], completedAtS?: number): RequestTrace => ({
  id: 1,
  arrivalMs: 0,
  client: "openai_node",
  roundTripMs: 80,
  attempts,
  result: completedAtS === undefined ? "gave_up" : "served",
  ...(completedAtS === undefined ? {} : { completedAtMs: completedAtS * 1000 }),
  outputTokens: 10,
});

describe("lateCauseOf: why a request missed a horizon (30 s here)", () => {
  it("served within it: no cause", () => {
    expect(lateCauseOf(request([attempt(0, "rejected"), attempt(10, "admitted", 1, true)], 14), 30)).toBeUndefined();
  });

  it("never served: lost, whatever came before", () => {
    expect(lateCauseOf(request([attempt(0, "rejected"), attempt(40, "rejected", 0, true)]), 30)).toBe("lost");
  });

  it("an attempt in time waited in the queue and was shed: shed", () => {
    const shed = request([attempt(0, "rejected", 20), attempt(45, "admitted", 0, true)], 49);
    expect(lateCauseOf(shed, 30)).toBe("shed");
  });

  it("a retry in time refused at once: refused again (a broken promise)", () => {
    const broken = request(
      [attempt(0, "rejected"), attempt(12, "rejected", 0, true), attempt(50, "admitted", 0, true)],
      54,
    );
    expect(lateCauseOf(broken, 30)).toBe("refusedAgain");
  });

  it("refused in time and brought back after the horizon: by the hint, or by the client's own backoff", () => {
    const hinted = request([attempt(0, "rejected"), attempt(35, "admitted", 0, true)], 39);
    expect(lateCauseOf(hinted, 30)).toBe("sentPastHint");
    const backoff = request([attempt(0, "rejected"), attempt(35, "admitted", 0, false)], 39);
    expect(lateCauseOf(backoff, 30)).toBe("sentPastBackoff");
  });

  it("served attempt in time: waited for a slot if placed at once it would have made it, else came back too near", () => {
    // Came at 20 s, placed at 28 s, answered 4 s after placement: at once it would have finished at 24 s.
    expect(lateCauseOf(request([attempt(0, "rejected"), attempt(20, "admitted", 8, true)], 32), 30)).toBe("waited");
    // Came at 27 s, placed at once, answered 4 s later: nothing to wait for, it came back too near the horizon.
    expect(lateCauseOf(request([attempt(0, "rejected"), attempt(27, "admitted", 0, true)], 31), 30)).toBe(
      "cameBackNear",
    );
  });

  it("counts a run's late requests by cause, and every late request under one cause", () => {
    const run = [
      request([attempt(0, "admitted")], 3),
      request([attempt(0, "rejected"), attempt(35, "admitted", 0, true)], 39),
      request([attempt(0, "rejected"), attempt(40, "rejected", 0, true)]),
      request([attempt(0, "rejected"), attempt(20, "admitted", 8, true)], 32),
    ];
    const counts = lateCauses(run, 30);
    expect(counts.offered).toBe(4);
    expect(counts.late).toBe(3);
    expect(counts.byCause).toEqual({
      ...Object.fromEntries(LATE_CAUSES.map((c) => [c, 0])),
      sentPastHint: 1,
      lost: 1,
      waited: 1,
    });
  });
});

/** Counts of 100 offered requests with the given late ones by cause. */
const countsOf = (byCause: Partial<Record<(typeof LATE_CAUSES)[number], number>>) => {
  const full = Object.fromEntries(LATE_CAUSES.map((c) => [c, byCause[c] ?? 0])) as Record<
    (typeof LATE_CAUSES)[number],
    number
  >;
  return { offered: 100, late: Object.values(full).reduce((a, b) => a + b, 0), byCause: full };
};

describe("renderLateCauses", () => {
  const row: LateCausesRow = {
    scenario: "toy",
    horizonS: 30,
    leader: "static-5",
    default: countsOf({ sentPastHint: 12, waited: 2, lost: 1 }),
    leaderCounts: countsOf({ lost: 10 }),
  };

  it("sums the default's excess over the leader by cause, in shares of the offered", () => {
    const excess = excessByCause([row, row]);
    expect(excess.sentPastHint).toBeCloseTo(0.24, 12);
    expect(excess.lost).toBeCloseTo(-0.18, 12);
    expect(excess.waited).toBeCloseTo(0.04, 12);
  });

  it("says where the excess lies, from the figures", () => {
    const text = renderLateCauses({ generatedBy: "test", seedsPerScenario: 3, scenarios: [row] });
    expect(text).toContain("| toy | 30 s (static-5) | 15.0 / 10.0 |");
    expect(text).toContain("The leaders' late requests are mostly never served (10.0 of their 10.0 points)");
    expect(text).toContain("the default's, sent past it by a hint (12.0 of 15.0)");
    expect(text).toContain("largest in sent past it by a hint (+12.0), then waited for a slot (+2.0)");
    expect(text).toContain("(sent past by a hint, refused again: +12.0 points together)");
    expect(text).toContain("(shed from it, waited for a slot, came back too near the horizon: +2.0 points together)");
  });
});

describe("docs/late-causes.md", () => {
  const report = repoJson<LateCausesReport>("docs/late-causes.json");
  const evaluation = repoJson<{ scenarios: ScenarioResult[]; targets: TargetCheck[]; defaultPolicy: string }>(
    "docs/evaluation.json",
  );

  it("bears out docs/evaluation.md's summary: the default's late requests mostly sent past by a hint, the leaders' never served", () => {
    // The largest cause summed over the scenarios in shares of the offered, as the page sums them.
    const largest = (pick: (r: LateCausesRow) => LateCausesRow["default"]) =>
      LATE_CAUSES.map((c) => ({
        c,
        n: report.scenarios.reduce((s, r) => s + pick(r).byCause[c] / pick(r).offered, 0),
      })).sort((a, b) => b.n - a.n)[0]?.c;
    expect(largest((r) => r.default)).toBe("sentPastHint");
    expect(largest((r) => r.leaderCounts)).toBe("lost");
    expect(repoText("docs/evaluation.md")).toContain(
      "(mostly sent past the horizon by a hint, where the leader's late requests are mostly never served)",
    );
  });

  it("is rendered from its data", () => {
    expect(repoText("docs/late-causes.md")).toBe(renderLateCauses(report));
  });

  it("covers every scenario at the default's worst horizon and its leader there, with docs/evaluation.json's curves", () => {
    expect(report.scenarios.map((r) => r.scenario).sort()).toEqual(evaluation.scenarios.map((s) => s.name).sort());
    for (const row of report.scenarios) {
      const target = evaluation.targets.find((t) => t.scenario === row.scenario) as TargetCheck;
      expect(row.horizonS, row.scenario).toBe(target.worstCurveGap.horizonS);
      expect(row.leader, row.scenario).toBe(target.worstCurveGap.bestOther);
      const result = evaluation.scenarios.find((s) => s.name === row.scenario) as ScenarioResult;
      const within = (id: string) => result.policies.find((p) => p.id === id)?.servedWithinS[String(row.horizonS)];
      expect(1 - row.default.late / row.default.offered, row.scenario).toBeCloseTo(
        within(evaluation.defaultPolicy) ?? -1,
        9,
      );
      expect(1 - row.leaderCounts.late / row.leaderCounts.offered, row.scenario).toBeCloseTo(
        within(row.leader) ?? -1,
        9,
      );
      const causes = Object.values(row.default.byCause).reduce((a, b) => a + b, 0);
      expect(causes, row.scenario).toBe(row.default.late);
    }
  });
});
