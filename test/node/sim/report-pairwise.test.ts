import { describe, expect, it } from "vitest";
import type { PolicyResult, ScenarioResult } from "../../../src/sim/evaluation";
import { horizonTallies, pairwiseRows, pairwiseSection } from "../../../src/sim/report-pairwise";

/** A policy's result with only what the pairwise rows read: its curve, served share and attempts. */
function policy(id: string, curve: number[], attempts: number): PolicyResult {
  const servedWithinS = Object.fromEntries([5, 15, 30, 60, 120].map((h, i) => [String(h), curve[i] as number]));
  return {
    id,
    metrics: { servedWithinS, servedFraction: curve[4] as number, attemptsPerOffered: attempts },
  } as unknown as PolicyResult;
}

const scenario = (name: string, policies: PolicyResult[]) => ({ name, policies }) as unknown as ScenarioResult;

describe("the default against each policy alone", () => {
  // Two scenarios. In "a" the default is 3 points behind static-5 at 30 s and ahead of static-30 everywhere; in "b"
  // it is 1 point behind static-5 at 5 s (within the target's 2) and 2.5 behind static-30 at 120 s, with more attempts.
  const results = [
    scenario("a", [
      policy("booked_capacity", [0.5, 0.7, 0.8, 0.95, 0.99], 1.2),
      policy("static-5", [0.5, 0.7, 0.83, 0.83, 0.83], 1.3),
      policy("static-30", [0.4, 0.6, 0.7, 0.9, 0.98], 1.25),
    ]),
    scenario("b", [
      policy("booked_capacity", [0.49, 0.7, 0.8, 0.9, 0.9], 1.3),
      policy("static-5", [0.5, 0.7, 0.8, 0.8, 0.8], 1.4),
      policy("static-30", [0.4, 0.6, 0.7, 0.9, 0.925], 1.25),
    ]),
  ];

  it("counts, per other policy, the scenarios within the curve, served and attempts targets, and the worst gap", () => {
    const [vsStatic5, vsStatic30] = pairwiseRows(results, "booked_capacity");
    expect(vsStatic5).toMatchObject({
      policy: "static-5",
      scenarios: 2,
      curveWithin: 1,
      servedWithin: 2,
      attemptsAtMost: 2,
    });
    expect(vsStatic5?.worst).toMatchObject({ scenario: "a", horizonS: 30 });
    expect(vsStatic5?.worst.gap).toBeCloseTo(-0.03);
    expect(vsStatic30).toMatchObject({ policy: "static-30", curveWithin: 1, servedWithin: 1, attemptsAtMost: 1 });
    expect(vsStatic30?.worst).toMatchObject({ scenario: "b", horizonS: 120 });
  });

  it("renders the rows and names the constants it beats in every scenario (here none)", () => {
    const section = pairwiseSection(results, "booked_capacity");
    expect(section).toContain("| static-5 | 1 of 2 | 2 of 2 | 2 of 2 | -3.0 (a, 30 s) |");
    expect(section).toContain("| static-30 | 1 of 2 | 1 of 2 | 1 of 2 | -2.5 (b, 120 s) |");
    expect(section).toContain(
      "(static-5, static-30), it stays within 2 points of none at every horizon, with no more attempts per offered request, in every scenario; furthest behind static-5, -3.0 points (a, 30 s).",
    );
    const ahead = pairwiseSection([results[0] as ScenarioResult], "booked_capacity");
    expect(ahead).toContain("it stays within 2 points of static-30 only at every horizon");
  });

  it("tallies each horizon: ahead of the constant, or behind it by more than the target's 2 points", () => {
    // Against static-30: ahead at 5 to 60 s in both; at 120 s ahead in "a", 2.5 points behind in "b".
    // Against static-5: equal at 5 s in "a" (neither), 1 point behind in "b" (within 2); 3 points behind at 30 s in "a".
    expect(horizonTallies(results, "booked_capacity", "static-30")).toEqual([
      { horizonS: 5, ahead: 2, behind: 0 },
      { horizonS: 15, ahead: 2, behind: 0 },
      { horizonS: 30, ahead: 2, behind: 0 },
      { horizonS: 60, ahead: 1, behind: 0 },
      { horizonS: 120, ahead: 1, behind: 1 },
    ]);
    expect(horizonTallies(results, "booked_capacity", "static-5").map((t) => [t.ahead, t.behind])).toEqual([
      [0, 0],
      [0, 0],
      [0, 1],
      [2, 0],
      [2, 0],
    ]);
    const section = pairwiseSection(results, "booked_capacity");
    expect(section).toContain("| static-30 | 2 / 0 | 2 / 0 | 2 / 0 | 1 / 0 | 1 / 1 |");
    expect(section).toContain("| static-5 | 0 / 0 | 0 / 0 | 0 / 1 | 2 / 0 | 2 / 0 |");
    expect(section).toContain(
      "Against static-30 it is ahead in every scenario at 5 s, 15 s and 30 s, and more than 2 points behind in 1 at 120 s.",
    );
  });
});
