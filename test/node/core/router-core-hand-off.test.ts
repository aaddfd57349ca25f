import { describe, expect, it } from "vitest";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptions } from "../../support/router-options";

/** One replica `a` with `slots` slots; places whatever waits, answering probes with what the router holds. */
function router(slots: number, tenantHeadroomSlots = 0) {
  let now = 0;
  const core = new RouterCore(
    routerOptions({ maxOngoingRequests: slots, tenantHeadroomSlots }),
    { now: () => now },
    () => 0.5,
  );
  const place = () => {
    const plan = core.beginRound();
    if (!plan) return undefined;
    for (const r of plan.probe) core.reportProbe(r, 0);
    return core.finishRound(plan);
  };
  return { core, place, advance: (ms: number) => (now += ms) };
}

describe("RouterCore.handOff and handoffAllowed", () => {
  it("counts a hand-off as one request ending and the next placed, on the same slot", () => {
    const { core, place } = router(2);
    core.submit("t1", { tenant: "alpha" });
    expect(place()).toMatchObject({ kind: "placed", ticket: "t1" });
    expect(core.handOff("t1", { tenant: "beta" })).toBe(true);
    const stats = core.stats();
    expect(stats.admitted).toBe(2);
    expect(stats.completed).toBe(1);
    expect(stats.activeLeases).toBe(1);
    expect(stats.tenants.beta?.admitted).toBe(1);
    expect(core.leaseOf("t1")).toBe("a");
    core.release("t1");
    expect(core.stats()).toMatchObject({ activeLeases: 0, completed: 2 });
  });

  it("counts a retry it hinted that comes back by a hand-off as a hinted retry admitted, by its timing", () => {
    let now = 0;
    const core = new RouterCore(routerOptions({ maxQueuedRequests: 1 }, { jitter: 0 }), { now: () => now }, () => 0.5);
    core.submit("t1", { fingerprint: "first" });
    core.submit("t2", { fingerprint: "second" }); // the queue's one place
    const refused = core.submit("t3", { fingerprint: "hinted" });
    if (refused.kind !== "rejected") throw new Error("expected a refusal with a hint");
    const hintMs = refused.rejection.decision.retryAfterMs as number;
    expect(hintMs).toBeGreaterThan(0);
    const plan = core.beginRound();
    if (!plan) throw new Error("expected a round");
    for (const r of plan.probe) core.reportProbe(r, 0);
    expect(core.finishRound(plan)).toMatchObject({ kind: "placed", ticket: "t1" });
    now += hintMs;
    // t1's slot went, in an isolate, to the hinted request's retry (same fingerprint), on time.
    expect(core.handOff("t1", { fingerprint: "hinted" })).toBe(true);
    expect(core.stats().hintedRetries.admitted.on_time).toBe(1);
    // Counted once: the same fingerprint handed a slot again is no longer a hinted retry.
    expect(core.handOff("t1", { fingerprint: "hinted" })).toBe(true);
    expect(core.stats().hintedRetries.admitted).toEqual({ early: 0, on_time: 1, late: 0 });
  });

  it("refuses a hand-off of an unknown ticket (released, or from before a restart)", () => {
    const { core, place } = router(2);
    core.submit("t1");
    place();
    core.release("t1");
    expect(core.handOff("t1")).toBe(false);
    expect(core.stats().admitted).toBe(1);
  });

  it("restarts the lease's lifetime: a slot handed on is not reclaimed as a leaked one", () => {
    const { core, place, advance } = router(2);
    core.submit("t1");
    place();
    advance(500_000);
    core.handOff("t1");
    advance(500_000); // 1,000 s after the placement, 500 s after the hand-off: within the 600 s lifetime
    expect(core.expire().reclaimed).toEqual([]);
    advance(100_001);
    expect(core.expire().reclaimed).toEqual(["t1"]);
  });

  it("allows hand-offs only while nothing waits and more slots are free than the tenant headroom keeps", () => {
    const { core, place } = router(2, 1);
    expect(core.handoffAllowed()).toBe(true);
    core.submit("t1");
    place();
    expect(core.handoffAllowed()).toBe(false); // one slot free, and the headroom keeps one
    const open = router(2, 0);
    open.core.submit("t1");
    open.place();
    expect(open.core.handoffAllowed()).toBe(true);
    open.core.submit("t2");
    open.place();
    expect(open.core.handoffAllowed()).toBe(false); // no slot free
    open.core.submit("t3"); // waits
    open.core.release("t1");
    expect(open.core.handoffAllowed()).toBe(false); // a slot is free, but a request waits for it
  });
});
