import loadHighs from "highs";
import { beforeAll, describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { type BoundJob, boundInstance, jointCurveBound } from "../../../src/sim/curve-bound";
import { type CompletionCurve, computeMetrics } from "../../../src/sim/metrics";
import { computeOracle } from "../../../src/sim/oracle";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { sameShareAtEveryHorizon, smallBurst } from "./small-scenario";

let highs: Awaited<ReturnType<typeof loadHighs>>;
beforeAll(async () => {
  highs = await loadHighs();
});

describe("the curve bound's served floor (BoundSet.servedAtLeast)", () => {
  // Ten requests at t = 0 that take 0.5 s, each with a window to 150 s; one start every 20 s with a budget of one:
  // 1 + 5 x 0.05 = 1.25 starts within 5 s, 1 + 120 x 0.05 = 7 within 120 s, 1 + 151 x 0.05 = 8.55 by 150 s.
  const jobs: BoundJob[] = Array.from({ length: 10 }, () => ({
    arrivalS: 0,
    releaseS: 0,
    deadlineS: 150,
    minCompletionS: 0.5,
  }));
  const instance = { jobs, startRateAt: () => 0.05, burstStarts: 1, endS: 400 };
  const bound = (servedAtLeast?: number, medianWithin?: { horizonS: number; share: number }) =>
    jointCurveBound(
      highs,
      [
        {
          instances: [instance],
          target: sameShareAtEveryHorizon(0),
          ...(servedAtLeast !== undefined ? { servedAtLeast } : {}),
        },
      ],
      0,
      1,
      medianWithin ? { medianWithin } : {},
    );

  it("without a floor counts only the starts within the longest horizon", () => {
    const alone = bound();
    expect(alone.margin).toBeCloseTo(0.125, 6);
    expect(alone.servedShares[0]).toBeLessThanOrEqual(0.7 + 1e-6);
  });

  it("serves the floor with starts after every horizon, which the curve does not count", () => {
    const held = bound(0.85);
    expect(held.margin).toBeCloseTo(0.125, 6);
    expect(held.servedShares[0]).toBeGreaterThanOrEqual(0.85 - 1e-6);
    expect(held.curves[0]?.["120"]).toBeLessThanOrEqual(0.7 + 1e-6);
  });

  it("cannot serve past a client's last chance: 8.55 starts by 150 s, so a floor of 9 of 10 has no schedule", () => {
    expect(() => bound(0.9)).toThrow(/not optimal/);
  });

  it("counts a late start in the median's whole: half of what it serves must be served within 5 s", () => {
    // Within 120 s alone, 2.5 served (1.25 within 5 s) keep the median; a floor of 5 served cannot.
    expect(bound(undefined, { horizonS: 5, share: 0.5 }).margin).toBeCloseTo(0.125, 6);
    expect(() => bound(0.5, { horizonS: 5, share: 0.5 })).toThrow(/not optimal/);
  });

  it("is not tied across twins", () => {
    const set = { instances: [instance], target: sameShareAtEveryHorizon(0), servedAtLeast: 0.5 };
    expect(() => jointCurveBound(highs, [set, set], 10)).toThrow(/served floor/);
  });

  it("relaxes the simulator and the oracle: every policy's served share and the oracle's fit under it", () => {
    const scenario = smallBurst({ tailS: 200 });
    const capacity = measureCapacity(scenario);
    const workload = generateWorkload(scenario, capacity);
    const inst = boundInstance(scenario, workload, capacity);
    const oracle = computeOracle(scenario, workload, capacity);
    const floorOf = (servedAtLeast: number, target: CompletionCurve = sameShareAtEveryHorizon(0)) =>
      jointCurveBound(highs, [{ instances: [inst], target, servedAtLeast }]);
    expect(floorOf(oracle.servedFraction).servedShares[0]).toBeGreaterThanOrEqual(oracle.servedFraction - 1e-6);
    for (const policy of EVAL_POLICIES) {
      const metrics = computeMetrics(runSimulation(scenario, policy, workload));
      const held = floorOf(metrics.servedFraction, metrics.servedWithinS);
      expect(held.margin, policy.id).toBeGreaterThanOrEqual(-1e-6);
    }
  });
});
