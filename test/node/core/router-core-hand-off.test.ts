import { describe, expect, it } from "vitest";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptions } from "../../support/router-options";

/** One replica `a` with `slots` slots (and `policy`); places whatever waits, answering probes with what the router holds. */
function router(
  slots: number,
  tenantHeadroomSlots = 0,
  policy: "router_queue_drain_rate" | "booked_capacity" = "router_queue_drain_rate",
) {
  let now = 0;
  const core = new RouterCore(
    routerOptions({ maxOngoingRequests: slots, tenantHeadroomSlots }, { retryAfterPolicy: policy }),
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

  it("counts a request handed a slot as a fresh arrival of booked_capacity's forecast, as it counts a submitted one", () => {
    /** Four arrivals a second for 20 s on two slots (one held by t0), each one submitted or handed t0's slot. */
    const baselineAfter = (arrive: (core: RouterCore, i: number) => void) => {
      const { core, place, advance } = router(2, 0, "booked_capacity");
      core.submit("t0");
      place();
      for (let i = 0; i < 80; i++) {
        advance(250);
        arrive(core, i);
      }
      // Then an overload (nothing placed any more): the first request refused shows the forecast's baseline in its
      // record.
      for (let k = 0; k < 20; k++) {
        const result = core.submit(`x${k}`, { fingerprint: `x${k}` });
        if (result.kind === "rejected") return result.rejection.record.booking?.baseline;
      }
      throw new Error("expected a refusal");
    };
    const submitted = baselineAfter((core, i) => {
      core.submit(`r${i}`, { fingerprint: `r${i}` });
      core.release(`r${i}`);
    });
    const handedOff = baselineAfter((core, i) => core.handOff("t0", { fingerprint: `r${i}` }));
    expect(submitted).toBeGreaterThan(3);
    expect(handedOff).toBeCloseTo(submitted as number, 6);
  });

  it("keeps a promise that a hand-off places: its booking is claimed, not left to lapse as a no-show", () => {
    const { core, refused, holder, advance } = promisedRefusal();
    const made = core.ledgerView()?.promises.made as number;
    advance(refused.decision.retryAfterMs as number);
    // The promised retry comes back on time and takes a slot handed on in an isolate (the router's answers lag).
    expect(core.handOff(holder, { fingerprint: "promised" })).toBe(true);
    expect(core.ledgerView()?.promises).toMatchObject({ made, kept: 1, noShow: 0 });
    expect(core.stats().outstandingBookings).toBe(0);
  });

  it("counts a promise outstanding until it lapses, though no request comes to move the ledger on", () => {
    const { core, holder, advance } = promisedRefusal();
    core.release(holder);
    advance(31_000);
    core.expire(); // the queued warm-up request times out, refused with a hint of its own: nothing waits now
    expect(core.queueDepth).toBe(0);
    expect(core.stats().outstandingBookings).toBeGreaterThanOrEqual(1);
    expect(core.handoffAllowed()).toBe(false);
    // Nothing arrives any more: once every booking is past its lateness allowance, none is outstanding, and the
    // router lets isolates hand slots on again.
    advance(200_000);
    expect(core.stats().outstandingBookings).toBe(0);
    expect(core.handoffAllowed()).toBe(true);
  });
});

/**
 * A booked_capacity router (one one-slot replica, one queue place) warmed by two drains a second for 4 s, its slot
 * held by `holder` and its queue full, that has just refused `promised` with a promise (an on-time retry claims it).
 */
function promisedRefusal() {
  let now = 0;
  const core = new RouterCore(
    routerOptions(
      {
        maxQueuedRequests: 1,
        queueTimeoutMs: 30_000,
        booking: { queueDelayTargetS: undefined, standingIntervalS: 10, maxHeldRoomShare: 1 },
      },
      { retryAfterPolicy: "booked_capacity", retryAfterS: undefined, jitter: 0 },
    ),
    { now: () => now },
    () => 0.5,
  );
  let n = 0;
  for (let i = 0; i < 8; i++) {
    now += 500;
    const plan = core.beginRound();
    if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
    const outcome = plan ? core.finishRound(plan) : undefined;
    if (outcome?.kind === "placed" && i < 7) core.release(outcome.ticket);
    core.submit(`w${n++}`, { fingerprint: `w${n}` });
  }
  while (core.queueDepth < 1) core.submit(`w${n++}`, { fingerprint: `w${n}` });
  const result = core.submit("p.0", { fingerprint: "promised" });
  if (result.kind !== "rejected") throw new Error("expected a refusal");
  expect(result.rejection.record.booking?.promised).toBe(true);
  const holder = [...Array(n).keys()].map((i) => `w${i}`).find((t) => core.leaseOf(t) !== undefined) as string;
  return { core, refused: result.rejection, holder, advance: (ms: number) => (now += ms) };
}
