import { describe, expect, it } from "vitest";
import { OTHER_TENANTS, TenantCounters, topTenants } from "../../../src/core/tenant-counters";

describe("tenant counters", () => {
  it("count per tenant, with tenants past the bound (and one named 'other') under other", () => {
    const counts = new TenantCounters(2);
    counts.add("a", "admitted");
    counts.add("a", "admitted");
    counts.add("b", "shed");
    counts.add("c", "shed");
    counts.add("d", "admitted");
    counts.add(OTHER_TENANTS, "admitted");
    expect(counts.snapshot()).toEqual({
      a: { admitted: 2, shed: 0 },
      b: { admitted: 0, shed: 1 },
      other: { admitted: 2, shed: 1 },
    });
  });

  it("a flood of names stays bounded", () => {
    const counts = new TenantCounters(10);
    for (let i = 0; i < 10_000; i++) counts.add(`t${i}`, "shed");
    const snapshot = counts.snapshot();
    expect(Object.keys(snapshot)).toHaveLength(11);
    expect(snapshot.other?.shed).toBe(9_990);
  });

  it("the exporter's view: the top k by decisions, the rest summed as other", () => {
    const top = topTenants(
      {
        a: { admitted: 9, shed: 0 },
        b: { admitted: 1, shed: 0 },
        c: { admitted: 2, shed: 1 },
        other: { admitted: 5, shed: 5 },
      },
      2,
    );
    expect(top).toEqual({ a: { admitted: 9, shed: 0 }, c: { admitted: 2, shed: 1 }, other: { admitted: 6, shed: 5 } });
    expect(topTenants({ a: { admitted: 1, shed: 0 } }, 10)).toEqual({ a: { admitted: 1, shed: 0 } });
  });
});
