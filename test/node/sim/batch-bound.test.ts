import loadHighs from "highs";
import { beforeAll, describe, expect, it } from "vitest";
import { batchBoundInstance, batchSizes, batchWay } from "../../../src/sim/batch-bound";
import { measureCapacity } from "../../../src/sim/capacity";
import { type BoundJob, curveBound } from "../../../src/sim/curve-bound";
import { computeMetrics } from "../../../src/sim/metrics";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { smallBurst } from "./small-scenario";

let highs: Awaited<ReturnType<typeof loadHighs>>;
beforeAll(async () => {
  highs = await loadHighs();
});

describe("batchWay", () => {
  const fleet = { fastestSpeed: 1, smallestPrompt: 1000, tailS: 0.1 };

  it("alone: the prefill and one step per output token after the first, at the timing model's step time", () => {
    // Prefill 0.005 + 1000 / 3900; 100 steps of 0.02 + 0.0005 + 0.0006 s; work splits the base over up to 2.
    const way = batchWay({ promptTokens: 1000, outputTokens: 101 }, 1, 2, fleet);
    expect(way.minCompletionS).toBeCloseTo(0.005 + 1000 / 3900 + 100 * 0.0211 + 0.1, 9);
    expect(way.work).toBeCloseTo(1000 / 3900 + 100 * (0.01 + 0.0005 + 0.0006), 9);
  });

  it("in a bigger batch a request is slower and costs the fleet less", () => {
    const ways = batchSizes(8).map((k, i, all) =>
      batchWay({ promptTokens: 500, outputTokens: 200 }, k, all[i + 1] ?? k, fleet),
    );
    for (let i = 1; i < ways.length; i++) {
      expect(ways[i]?.minCompletionS).toBeGreaterThan(ways[i - 1]?.minCompletionS as number);
      // The last two share the full batch's split of the step: no way is cheaper than a full batch.
      if (i < ways.length - 1) expect(ways[i]?.work).toBeLessThan(ways[i - 1]?.work as number);
      else expect(ways[i]?.work).toBeCloseTo(ways[i - 1]?.work as number, 12);
    }
    // A replica twice as fast finishes sooner; the work is counted at speed 1 either way.
    const fast = batchWay({ promptTokens: 500, outputTokens: 200 }, 4, 6, { ...fleet, fastestSpeed: 2 });
    expect(fast.minCompletionS - 0.1).toBeCloseTo(((ways[3]?.minCompletionS as number) - 0.1) / 2, 9);
    expect(fast.work).toBeCloseTo(ways[3]?.work as number, 9);
  });

  it("distinguishes the batch sizes up to the fleet's limit", () => {
    expect(batchSizes(8)).toEqual([1, 2, 3, 4, 6, 8]);
    expect(batchSizes(4)).toEqual([1, 2, 3, 4]);
    expect(batchSizes(1)).toEqual([1]);
    expect(batchSizes(10)).toEqual([1, 2, 3, 4, 6, 8, 10]);
  });
});

describe("curveBound with ways to serve", () => {
  // Twenty requests at t = 0: alone (4.5 s, one unit of work) or in a batch (5.5 s, half a unit); one unit per
  // second with a budget of one. Within 15 s only the batch serves them all: bins 0-9 hold 11 units.
  const ways = [
    { minCompletionS: 4.5, work: 1 },
    { minCompletionS: 5.5, work: 0.5 },
  ];
  const job: BoundJob = { arrivalS: 0, releaseS: 0, deadlineS: 100, minCompletionS: 4.5, ways };
  const instance = { jobs: Array.from({ length: 20 }, () => job), startRateAt: () => 1, burstStarts: 1, endS: 200 };
  const target = (at5: number) => ({ "5": at5, "15": 1, "30": 1, "60": 1, "120": 1 });

  it("the cheaper, slower way serves more within a horizon than the fast one alone could", () => {
    expect(curveBound(highs, [instance], target(0)).margin).toBeCloseTo(0, 6);
    const aloneOnly = { ...instance, jobs: instance.jobs.map((j) => ({ ...j, ways: [ways[0] as (typeof ways)[0]] })) };
    // Alone only: bins 0-10 hold 12 units, 12 of 20 within 15 s.
    expect(curveBound(highs, [aloneOnly], target(0)).margin).toBeCloseTo(-0.4, 6);
  });

  it("refuses ways that are not ordered from the fastest to the cheapest", () => {
    const unordered = { ...job, ways: [ways[1], ways[0]] as typeof ways };
    expect(() => curveBound(highs, [{ ...instance, jobs: [unordered] }], target(0))).toThrow(/fastest to the cheapest/);
  });

  it("only the fast way serves within 5 s, and each start that way costs the budget a whole unit", () => {
    // Bin 0 holds two units: two requests alone within 5 s (10%); the other 18 in a batch by bin 9 (9 units).
    expect(curveBound(highs, [instance], target(0.1)).margin).toBeCloseTo(0, 6);
    expect(curveBound(highs, [instance], target(0.2)).margin).toBeLessThan(-1e-3);
  });
});

describe("batchBoundInstance", () => {
  const scenario = smallBurst();
  const capacity = measureCapacity(scenario);
  const workload = generateWorkload(scenario, capacity);

  it("budgets the fleet's replica time, and at a full batch its rate is the measured capacity's, within 5%", () => {
    const inst = batchBoundInstance(scenario, workload, capacity);
    expect(inst.startRateAt(0)).toBe(8); // two replicas at speed 4
    expect(inst.fullBatchRps / capacity).toBeGreaterThan(0.95);
    expect(inst.fullBatchRps / capacity).toBeLessThan(1.05);
    expect(inst.jobs[0]?.ways).toHaveLength(4);
    const lossy = batchBoundInstance(
      smallBurst({ fleet: { ...scenario.fleet, loss: { atS: 20, replicas: 1 } } }),
      workload,
      capacity,
    );
    expect(lossy.startRateAt(19)).toBe(8);
    expect(lossy.startRateAt(20)).toBe(4);
  });

  // The second fleet decodes at speed 1 in batches of up to 8: there a full batch is far slower than alone.
  const fleets = {
    "two fast replicas": scenario,
    "two slow replicas, batches of 8": smallBurst({
      fleet: { replicas: [{ count: 2, speed: 1 }], maxOngoingRequests: 8, maxTotalTokens: 16384 },
    }),
  };
  for (const [name, fleetScenario] of Object.entries(fleets))
    it(`relaxes the simulator: every policy's own completion curve fits under it (${name})`, () => {
      const rps = measureCapacity(fleetScenario);
      const requests = generateWorkload(fleetScenario, rps);
      const inst = batchBoundInstance(fleetScenario, requests, rps);
      for (const policy of EVAL_POLICIES) {
        const curve = computeMetrics(runSimulation(fleetScenario, policy, requests)).servedWithinS;
        expect(curveBound(highs, [inst], curve).margin, policy.id).toBeGreaterThanOrEqual(-1e-6);
      }
    });
});
