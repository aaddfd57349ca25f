import { describe, expect, it } from "vitest";
import { type SweepPoint, sweepTable, sweepTargetsLine } from "../../../src/sim/report-markdown";

const curve = { "5": 0.5, "15": 0.7, "30": 0.8, "60": 0.9, "120": 0.95 };
const policy = (id: string, served: number, attempts = 1.2) => ({
  id,
  servedFraction: served,
  attemptsPerOffered: attempts,
  hintCoverage: 1,
  servedWithinS: curve,
  timeToSuccessP50S: 2,
});
const point = (queue: number, defaultServed: number, static30Served: number): SweepPoint => {
  const servedGap = defaultServed - static30Served;
  return {
    scenario: "waves",
    maxQueuedRequests: queue,
    queueDrainS: queue / 8.5,
    oracle: { servedFraction: 1, servedWithinS: curve },
    policies: [policy("booked_capacity", defaultServed), policy("static-30", static30Served), policy("none", 0.5)],
    targets: {
      scenario: "waves",
      curveGap: {},
      worstCurveGap: { horizonS: 60, gap: -0.03, bestOther: "static-30" },
      servedGap,
      oracleGap: 1 - defaultServed,
      attemptsVsStatic30: 0,
      met: { curve: false, served: servedGap >= -0.01, oracle: 1 - defaultServed <= 0.05, attempts: true },
    },
  };
};

describe("the queue-bound sweep's targets", () => {
  it("counts each target over the points and names the points where the default serves more than a point less", () => {
    const points = [point(9, 0.87, 0.9), point(17, 0.96, 0.965), point(34, 0.9, 0.915)];
    expect(sweepTargetsLine(points, "booked_capacity")).toBe(
      "Of the sweep's 3 points the default meets the curve target at 0, the served target at 1, the oracle target at 1 and the attempts target at 3. It serves more than a point less than the best other policy at 2: waves at queue 9 (-3.0 against static-30), waves at queue 34 (-1.5 against static-30).",
    );
  });

  it("says so when the default serves within a point everywhere", () => {
    expect(sweepTargetsLine([point(9, 0.96, 0.965)], "booked_capacity")).toContain(
      "It serves within a point of the best other policy at every point.",
    );
  });

  it("marks each point's targets in the table", () => {
    const rows = sweepTable([point(9, 0.87, 0.9)], "booked_capacity").split("\n");
    expect(rows[0]).toContain(
      "| curve within 2 pts | served within 1 pt | within 5 pts of oracle | attempts <= static 30 s |",
    );
    expect(rows[2]?.endsWith("| **missed** | **missed** | **missed** | met |")).toBe(true);
  });
});
