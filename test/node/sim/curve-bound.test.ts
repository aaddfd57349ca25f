import loadHighs from "highs";
import { beforeAll, describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { type BoundJob, boundInstance, curveBound, jointCurveBound } from "../../../src/sim/curve-bound";
import { computeMetrics } from "../../../src/sim/metrics";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { sameShareAtEveryHorizon, smallBurst } from "./small-scenario";

let highs: Awaited<ReturnType<typeof loadHighs>>;
beforeAll(async () => {
  highs = await loadHighs();
});

describe("curveBound", () => {
  // Ten requests at t = 0 that take 0.5 s; one start per second with a budget of one: bins 0-4 start at most
  // 1 + 5 = 6 of them in time to finish within 5 s, all ten by 15 s.
  const jobs: BoundJob[] = Array.from({ length: 10 }, () => ({
    arrivalS: 0,
    releaseS: 0,
    deadlineS: 100,
    minCompletionS: 0.5,
  }));
  const instance = { jobs, startRateAt: () => 1, burstStarts: 1, endS: 200 };

  it("finds the horizon no schedule can fill: 6 of 10 within 5 s", () => {
    const bound = curveBound(highs, [instance], sameShareAtEveryHorizon(1));
    expect(bound.margin).toBeCloseTo(-0.4, 6);
    expect(bound.curve["5"]).toBeCloseTo(0.6, 6);
    const rest = curveBound(highs, [instance], { "5": 0.6, "15": 1, "30": 1, "60": 1, "120": 1 });
    expect(rest.margin).toBeCloseTo(0, 6);
    expect(rest.curve["15"]).toBeCloseTo(1, 6);
  });

  it("reaches targets a schedule can meet, with the margin the tightest horizon leaves", () => {
    const bound = curveBound(highs, [instance], { "5": 0.5, "15": 0.9, "30": 0.9, "60": 0.9, "120": 0.9 });
    expect(bound.margin).toBeCloseTo(0.1, 6);
  });

  it("gives its schedule by release: every request counted once, adding up to the curve", () => {
    // Five more requests released at 20 s, which nothing keeps from starting at once.
    const later = [...jobs, ...jobs.slice(0, 5).map((j) => ({ ...j, arrivalS: 20, releaseS: 20, deadlineS: 120 }))];
    const bound = curveBound(highs, [{ ...instance, jobs: later }], { "5": 0.6, "15": 1, "30": 1, "60": 1, "120": 1 });
    expect(bound.byRelease.map((r) => [r.releaseS, r.requests])).toEqual([
      [0, 10],
      [20, 5],
    ]);
    bound.byRelease.forEach((row) => {
      for (const n of row.servedWithin) expect(n).toBeLessThanOrEqual(row.requests + 1e-6);
    });
    ["5", "15", "30", "60", "120"].forEach((h, i) => {
      const started = bound.byRelease.reduce((n, row) => n + (row.servedWithin[i] ?? 0), 0);
      expect(started / 15).toBeCloseTo(bound.curve[h] ?? 0, 6);
    });
  });

  it("held to a median too, serves at least that share of what it serves within the median's horizon", () => {
    const target = { "5": 0, "15": 1, "30": 1, "60": 1, "120": 1 };
    expect(curveBound(highs, [instance], target).margin).toBeCloseTo(0, 6);
    // Half within 5 s binds nothing: 6 of 10 can be.
    const half = curveBound(highs, [instance], target, 1, { medianWithin: { horizonS: 5, share: 0.5 } });
    expect(half.margin).toBeCloseTo(0, 6);
    // 70% cannot be, of all ten: at most 6 / 0.7 of them may be served at all, so every horizon from 15 s falls short.
    const most = curveBound(highs, [instance], target, 1, { medianWithin: { horizonS: 5, share: 0.7 } });
    expect(most.margin).toBeCloseTo(0.6 / 0.7 - 1, 6);
    expect(most.curve["5"] as number).toBeGreaterThanOrEqual(0.7 * (most.curve["120"] as number) - 1e-6);
    expect(() => curveBound(highs, [instance], target, 1, { medianWithin: { horizonS: 7, share: 0.5 } })).toThrow(
      /not a completion horizon/,
    );
  });

  it("pools instances: their offered requests add up and each keeps its own start budget", () => {
    const bound = curveBound(highs, [instance, instance], sameShareAtEveryHorizon(1));
    expect(bound.margin).toBeCloseTo(-0.4, 6);
  });

  it("with preferSooner, shows of the schedules that reach the margin one that serves the most within the horizons", () => {
    const scenario = smallBurst();
    const capacity = measureCapacity(scenario);
    const inst = boundInstance(scenario, generateWorkload(scenario, capacity), capacity);
    const target = { "5": 0.5, "15": 0.7, "30": 0.8, "60": 0.9, "120": 0.9 };
    const any = curveBound(highs, [inst], target);
    const sooner = curveBound(highs, [inst], target, 1, { preferSooner: true });
    expect(sooner.margin).toBeCloseTo(any.margin, 5);
    const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
    expect(total(sooner.curve)).toBeGreaterThanOrEqual(total(any.curve) - 1e-6);
    for (const [h, share] of Object.entries(target))
      expect(sooner.curve[h]).toBeGreaterThanOrEqual(share + sooner.margin - 1e-6);
  });

  it("relaxes the simulator: every policy's own completion curve fits under it", () => {
    const scenario = smallBurst();
    const capacity = measureCapacity(scenario);
    const workload = generateWorkload(scenario, capacity);
    const inst = boundInstance(scenario, workload, capacity);
    for (const policy of EVAL_POLICIES) {
      const curve = computeMetrics(runSimulation(scenario, policy, workload)).servedWithinS;
      expect(curveBound(highs, [inst], curve).margin, policy.id).toBeGreaterThanOrEqual(-1e-6);
    }
  });
});

describe("jointCurveBound", () => {
  // Twins that part at 1 s. Both: two requests at 0 that finish within 5 s only if started at once (bin 0).
  // Twin A: three more at 1 s that must start in bin 1. One start per second with a budget of two: A keeps
  // its budget for them by starting only one of the first two in bin 0; B should start both.
  const early: BoundJob[] = Array.from({ length: 2 }, () => ({
    arrivalS: 0,
    releaseS: 0,
    deadlineS: 100,
    minCompletionS: 4.5,
  }));
  const late: BoundJob[] = Array.from({ length: 3 }, () => ({
    arrivalS: 1,
    releaseS: 1,
    deadlineS: 1.9,
    minCompletionS: 0.5,
  }));
  const fleet = { startRateAt: () => 1, burstStarts: 2, endS: 200 };
  const twinA = {
    instances: [{ jobs: [...early, ...late], ...fleet }],
    target: { ...sameShareAtEveryHorizon(1), "5": 0.8 },
  };
  const twinB = { instances: [{ jobs: early, ...fleet }], target: sameShareAtEveryHorizon(1) };

  it("each twin alone, and both with foresight, reach their targets exactly", () => {
    expect(curveBound(highs, twinA.instances, twinA.target).margin).toBeCloseTo(0, 6);
    expect(curveBound(highs, twinB.instances, twinB.target).margin).toBeCloseTo(0, 6);
    expect(jointCurveBound(highs, [twinA, twinB], 0).margin).toBeCloseTo(0, 6);
  });

  it("without foresight the starts before they part are one decision: the best split costs both 1/7", () => {
    // x of the early requests start in bin 0: A loses (x - 1) / 5 at 15 s, B loses 1 - x / 2 at 5 s; x = 12/7.
    const joint = jointCurveBound(highs, [twinA, twinB], 1);
    expect(joint.margin).toBeCloseTo(-1 / 7, 5);
    expect(joint.curves[1]?.["5"]).toBeCloseTo(6 / 7, 5);
  });

  it("identical twins are bounded as one scenario", () => {
    const alone = curveBound(highs, twinA.instances, twinA.target);
    expect(jointCurveBound(highs, [twinA, twinA], 50).margin).toBeCloseTo(alone.margin, 6);
  });

  it("refuses twins that differ before they are said to part", () => {
    expect(() => jointCurveBound(highs, [twinA, twinB], 2)).toThrow(/differs from set 0 before 2 s/);
  });
});
