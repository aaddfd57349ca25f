import { describe, expect, it } from "vitest";
import { TENANT_ACTIVE_WINDOW_MS, TenantHeadroom } from "../../../src/core/tenant-headroom";

describe("TenantHeadroom", () => {
  it("shares by weight: a tenant of weight 3 beside one of weight 1 is at its share with 24 of 32 slots", () => {
    const headroom = new TenantHeadroom(2, 32, () => false);
    headroom.arrived("heavy", 3, "interactive", 0);
    headroom.arrived("light", 1, "interactive", 0);
    for (let i = 0; i < 23; i++) headroom.placed("heavy", "interactive");
    expect(headroom.gate(0, 2)).toBeUndefined(); // 23 of its 24: below its share, as is light
    headroom.placed("heavy", "interactive");
    expect(headroom.gate(0, 2)?.holds("heavy", "interactive")).toBe(true);
    expect(headroom.gate(0, 2)?.holds("light", "interactive")).toBe(false);
    expect(headroom.gate(0, 3)).toBeUndefined(); // placing one still leaves 2 free
  });

  it("a waiting request keeps its tenant active past the window", () => {
    let waiting = true;
    const headroom = new TenantHeadroom(1, 4, (tenant) => tenant === "b" && waiting);
    headroom.arrived("a", 1, "interactive", 0);
    headroom.arrived("b", 1, "interactive", 0);
    for (let i = 0; i < 3; i++) headroom.placed("a", "interactive");
    const later = 10 * TENANT_ACTIVE_WINDOW_MS;
    expect(headroom.gate(later, 1)?.holds("a", "interactive")).toBe(true);
    waiting = false;
    expect(headroom.gate(later, 1)).toBeUndefined();
  });

  it("forgets quiet tenants: a stream of one-off tenant names does not grow its memory", () => {
    const headroom = new TenantHeadroom(1, 32, () => false);
    for (let i = 0; i < 10_000; i++) headroom.arrived(`t${i}`, 1, "interactive", i * TENANT_ACTIVE_WINDOW_MS);
    expect(headroom.tracked).toBeLessThanOrEqual(64);
  });

  it("rechecks when a hold of interactive work lapses, though its protector stays active in batch", () => {
    // b, below its share, protects interactive work until 5 s after its interactive request and batch work until
    // 5 s after its batch one: the router sleeps until recheckAtMs, so that must be the first of the two.
    const headroom = new TenantHeadroom(1, 2, () => false);
    headroom.arrived("a", 1, "interactive", 0);
    headroom.placed("a", "interactive");
    headroom.arrived("b", 1, "interactive", 0);
    headroom.arrived("b", 1, "batch", 3000);
    const gate = headroom.gate(4000, 1);
    expect(gate?.holds("a", "interactive")).toBe(true);
    expect(gate?.recheckAtMs).toBe(TENANT_ACTIVE_WINDOW_MS);
    expect(headroom.gate(TENANT_ACTIVE_WINDOW_MS, 1)?.holds("a", "interactive")).toBe(false);
    expect(headroom.gate(TENANT_ACTIVE_WINDOW_MS, 1)?.holds("a", "batch")).toBe(true);
  });
});
