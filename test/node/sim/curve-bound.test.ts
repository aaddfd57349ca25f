import loadHighs from "highs";
import { beforeAll, describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { type BoundJob, boundInstance, curveBound } from "../../../src/sim/curve-bound";
import { computeMetrics } from "../../../src/sim/metrics";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { smallBurst } from "./small-scenario";

let highs: Awaited<ReturnType<typeof loadHighs>>;
beforeAll(async () => {
  highs = await loadHighs();
});

const everyone = (share: number) => ({ "5": share, "15": share, "30": share, "60": share, "120": share });

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
    const bound = curveBound(highs, [instance], everyone(1));
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

  it("pools instances: their offered requests add up and each keeps its own start budget", () => {
    const bound = curveBound(highs, [instance, instance], everyone(1));
    expect(bound.margin).toBeCloseTo(-0.4, 6);
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
