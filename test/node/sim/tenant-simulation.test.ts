import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { scenarioSchema } from "../../../src/sim/scenario";
import { runSimulation } from "../../../src/sim/simulation";
import { tenantFigures } from "../../../src/sim/tenant-metrics";
import { type TenantStream, tenantWorkload } from "../../../src/sim/tenant-workload";

const spec = JSON.parse(readFileSync(new URL("../../../eval/tenants/scenarios.json", import.meta.url), "utf8"));
const base = scenarioSchema.parse(spec.base);
const policy = EVAL_POLICIES.find((p) => p.id === "router_queue_drain_rate") as (typeof EVAL_POLICIES)[number];

describe("tenants in the simulator", () => {
  it("a 10x burst of one tenant: the fair queue keeps the other's requests first-attempt, FIFO sheds them", () => {
    const capacity = measureCapacity(base, 10, 30);
    const streams: TenantStream[] = [
      { tenant: "A", weight: 1, priority: "interactive", phases: [{ durationS: 15, load: 10 }] },
      { tenant: "B", weight: 1, priority: "interactive", phases: [{ durationS: 15, load: 0.3 }] },
    ];
    const scenario = { ...base, tailS: 60, phases: [{ durationS: 15, load: 0 }] };
    const workload = tenantWorkload(scenario, capacity, streams);
    expect(new Set(workload.map((r) => r.tenant?.tenant))).toEqual(new Set(["A", "B"]));
    const run = (tagged: boolean) => {
      const submitted = tagged ? workload : workload.map(({ tenant: _, ...request }) => request);
      const figures = tenantFigures([{ workload, requests: runSimulation(scenario, policy, submitted).requests }]);
      return figures.find((f) => f.tenant === "B");
    };
    const fair = run(true);
    const fifo = run(false);
    expect(fair?.servedShare).toBe(1);
    expect(fair?.firstAttemptAdmission).toBeGreaterThanOrEqual(0.95);
    expect(fifo?.firstAttemptAdmission).toBeLessThan(0.8);
  });

  it("tenant workloads are reproducible and a tenant's arrivals do not move when another is added", () => {
    const capacity = 8;
    const b: TenantStream = { tenant: "B", weight: 1, priority: "interactive", phases: [{ durationS: 20, load: 0.5 }] };
    const c: TenantStream = { tenant: "C", weight: 2, priority: "batch", phases: [{ durationS: 20, load: 1 }] };
    const arrivalsOfB = (streams: TenantStream[]) =>
      tenantWorkload(base, capacity, streams)
        .filter((r) => r.tenant?.tenant === "B")
        .map((r) => r.arrivalMs);
    // The same tenant index keeps the same seed: B first in both.
    expect(arrivalsOfB([b, c])).toEqual(arrivalsOfB([b]));
    const merged = tenantWorkload(base, capacity, [b, c]);
    expect(merged.map((r) => r.id)).toEqual(merged.map((_, i) => i));
    expect(merged.every((r, i) => i === 0 || (merged[i - 1]?.arrivalMs as number) <= r.arrivalMs)).toBe(true);
  });
});
