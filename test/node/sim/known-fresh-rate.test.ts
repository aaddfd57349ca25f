import { describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { knownFreshRate } from "../../../src/sim/known-fresh-rate";
import { computeMetrics } from "../../../src/sim/metrics";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload, type WorkloadRequest } from "../../../src/sim/workload";
import { smallBurst } from "./small-scenario";

const at = (seconds: number[]): WorkloadRequest[] =>
  seconds.map((s, id) => ({ id, arrivalMs: s * 1000, promptTokens: 8, outputTokens: 8, maxTokens: 8 }));

describe("knownFreshRate", () => {
  it("is the mean of the first attempts over the window centred on t, per shard", () => {
    // 10 arrivals in second 5, 5 in second 6: a 5 s window over seconds 3-7 at t = 5.
    const rate = knownFreshRate(at([...Array(10).fill(5), ...Array(5).fill(6)]), 1);
    expect(rate(5.5)).toBeCloseTo(15 / 5, 12);
    expect(rate(9)).toBeCloseTo(0, 12); // seconds 7-11: nothing
    expect(rate(8)).toBeCloseTo(5 / 5, 12); // seconds 6-10
    expect(knownFreshRate(at([...Array(10).fill(5)]), 2, 1)(5)).toBeCloseTo(5, 12);
  });

  it("the clairvoyant-forecast variant runs the default with it: same arrivals, other hints", () => {
    const scenario = smallBurst();
    const workload = generateWorkload(scenario, measureCapacity(scenario));
    const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;
    const plain = computeMetrics(runSimulation(scenario, base, workload));
    const known = computeMetrics(runSimulation(scenario, { ...base, clairvoyantForecast: true }, workload));
    expect(known.requests).toBe(plain.requests);
    expect(known.servedWithinS).not.toEqual(plain.servedWithinS);
  });
});
