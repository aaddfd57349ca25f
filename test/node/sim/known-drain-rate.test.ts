import { describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { evaluatePolicy } from "../../../src/sim/evaluation";
import { knownDrainRate } from "../../../src/sim/known-drain-rate";
import { computeMetrics } from "../../../src/sim/metrics";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { DEFAULT_POLICY_VARIANTS } from "../../../src/sim/variants";
import { generateWorkload } from "../../../src/sim/workload";
import { smallBurst } from "./small-scenario";

const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;

describe("knownDrainRate", () => {
  it("is the measured capacity scaled by the speed of the replicas still up, shared by the shards", () => {
    const fleet = {
      replicas: [
        { count: 2, speed: 1 },
        { count: 1, speed: 2 },
      ],
      maxOngoingRequests: 4,
      maxTotalTokens: 8192,
      // The last replica listed (speed 2 of the 4) is lost at 30 s.
      loss: { atS: 30, replicas: 1 },
    };
    const scenario = smallBurst({ fleet, router: { shards: 2, maxQueuedRequests: 10, queueTimeoutS: 30 } });
    const rate = knownDrainRate(scenario, 12);
    expect(rate(10)).toBeCloseTo(6, 12);
    expect(rate(29.9)).toBeCloseTo(6, 12);
    expect(rate(30)).toBeCloseTo(3, 12);
  });

  it("the known-capacity variant runs the default planning on it: same arrivals, other promises", () => {
    const scenario = smallBurst();
    const capacityRps = measureCapacity(scenario);
    const variant = DEFAULT_POLICY_VARIANTS.find((v) => v.id === "known-capacity")?.spec as PolicySpec;
    const plain = evaluatePolicy(scenario, [scenario.seed], capacityRps, base);
    const known = evaluatePolicy(scenario, [scenario.seed], capacityRps, variant);
    expect(known.metrics.requests).toBe(plain.metrics.requests);
    expect(known.metrics.ledger).not.toEqual(plain.metrics.ledger);
  });

  it("a run of the variant without the scenario's capacity fails loudly rather than running the default", () => {
    const scenario = smallBurst();
    const workload = generateWorkload(scenario, measureCapacity(scenario));
    const variant = { ...base, id: "booked_capacity:known-capacity", knownCapacity: true };
    expect(() => runSimulation(scenario, variant, workload)).toThrow(
      /knownCapacity needs the scenario's measured capacity/,
    );
    const run = computeMetrics(runSimulation(scenario, variant, workload, undefined, { capacityRps: 20 }));
    expect(run.requests).toBe(workload.length);
  });
});
