import loadHighs from "highs";
import { beforeAll, describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { type BoundJob, jointCurveBound } from "../../../src/sim/curve-bound";
import { computeMetrics } from "../../../src/sim/metrics";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { queueBoundInstance } from "../../../src/sim/queue-bound";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { smallBurst } from "./small-scenario";

let highs: Awaited<ReturnType<typeof loadHighs>>;
beforeAll(async () => {
  highs = await loadHighs();
});

describe("the queue-aware curve bound (queueBound, attemptsAtMost)", () => {
  // Ten requests at t = 0 that take 0.5 s; one start per second with a budget of one (bin 0 starts two): six can
  // be served within 5 s, all ten within 15 s - the target below, met with a margin of 0 without the queue model.
  const target = { "5": 0.6, "15": 1, "30": 1, "60": 1, "120": 1 };
  const jobs = (over: Partial<BoundJob> = {}): BoundJob[] =>
    Array.from({ length: 10 }, () => ({
      arrivalS: 0,
      releaseS: 0,
      deadlineS: 100,
      minCompletionS: 0.5,
      queueEndS: 100,
      certainRetry: true,
      ...over,
    }));
  const fleet = { startRateAt: () => 1, burstStarts: 1, endS: 200 };
  const margin = (queueBound: number, attemptsAtMost: number, over: Partial<BoundJob> = {}) =>
    jointCurveBound(highs, [{ instances: [{ jobs: jobs(over), ...fleet }], target, queueBound, attemptsAtMost }])
      .margin;

  it("serves from the queue only what it may hold: two start at once, the bound's worth wait, the rest retry", () => {
    // A queue of 2: two start in bin 0, two wait for bins 1 and 2; six retry, 1.6 attempts per request.
    expect(margin(2, 1.6)).toBeCloseTo(0, 6);
    expect(() => margin(2, 1.59)).toThrow(/not optimal/);
    // A queue of 3: one more waits, one fewer retries.
    expect(margin(3, 1.5)).toBeCloseTo(0, 6);
  });

  it("starts a request from the queue by its timeout only", () => {
    // Queued until 1 s: two start in bin 0 and one in bin 1; seven retry.
    expect(margin(10, 1.7, { queueEndS: 1 })).toBeCloseTo(0, 6);
    expect(() => margin(10, 1.65, { queueEndS: 1 })).toThrow(/not optimal/);
  });

  it("counts no attempt for a client that does not retry", () => {
    expect(margin(2, 1, { certainRetry: false })).toBeCloseTo(0, 6);
  });

  it("relaxes the simulator: every policy's own curve and attempts fit under it", () => {
    // A tail long enough for the clients' retries to count (the bound counts only those certain to come).
    const scenario = smallBurst({ tailS: 200 });
    const capacity = measureCapacity(scenario);
    const workload = generateWorkload(scenario, capacity);
    const inst = queueBoundInstance(scenario, workload, capacity);
    expect(inst.jobs.filter((j) => j.certainRetry).length).toBeGreaterThan(workload.length / 2);
    for (const policy of EVAL_POLICIES) {
      const metrics = computeMetrics(runSimulation(scenario, policy, workload));
      const set = {
        instances: [inst],
        target: metrics.servedWithinS,
        queueBound: scenario.router.maxQueuedRequests,
        attemptsAtMost: metrics.attemptsPerOffered,
      };
      expect(jointCurveBound(highs, [set]).margin, policy.id).toBeGreaterThanOrEqual(-1e-6);
    }
  });
});
