import { describe, expect, it } from "vitest";
import { CapacityBooking, DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../../../src/core/capacity-booking";
import { RouterCore } from "../../../src/core/router-core";
import type { BookingAdmission } from "../../../src/core/router-options";
import { prometheusText } from "../../../src/edge/prometheus";
import { routerOptions } from "../../support/router-options";

describe("CapacityBooking.promiseOutcomes", () => {
  it("counts promises made and how they ended: kept, broken, no-show; best efforts and replaced hints are none", () => {
    const ledger = new CapacityBooking(DEFAULT_CAPACITY_BOOKING_OPTIONS, 0);
    ledger.book("kept", 0, { delayS: 5, promised: true });
    ledger.book("broken", 0, { delayS: 5, promised: true });
    ledger.book("late", 0, { delayS: 5, promised: true });
    ledger.book("lapsed", 0, { delayS: 5, promised: true });
    ledger.book("replaced", 0, { delayS: 5, promised: true });
    ledger.book("effort", 0, { delayS: 5, promised: false });
    expect(ledger.promiseOutcomes).toEqual({ made: 5, kept: 0, broken: 0, noShow: 0 });

    // The router settles a claimed promise once its retry is placed (kept) or refused or shed (broken).
    const kept = ledger.claim("kept", 5_000);
    expect(kept).toEqual({ promised: true, leadS: 5 });
    ledger.kept(true, kept?.leadS ?? Number.NaN);
    const broken = ledger.claim("broken", 5_200);
    expect(broken).toMatchObject({ promised: true });
    ledger.kept(false, broken?.leadS ?? Number.NaN);
    // A new hint to the same request replaces its promise: it ended neither way.
    ledger.book("replaced", 5_300, { delayS: 20, promised: false });
    // A best effort claimed: it was no promise, so it ends none of them.
    expect(ledger.claim("effort", 5_400)).toMatchObject({ promised: false });
    // Back past `lateS` (3 s): a no-show, whose claim takes nothing; one never back is a no-show as time passes.
    expect(ledger.claim("late", 8_500)).toBeUndefined();
    ledger.onFresh(20_000);
    expect(ledger.promiseOutcomes).toEqual({ made: 5, kept: 1, broken: 1, noShow: 2 });
    expect(ledger.outstanding).toBe(1); // the replaced request's best effort, not yet lapsed
    expect(ledger.outstandingAt(20_000)).toBe(1);
    // Read at a later clock without moving the ledger: lapsed (due at 25.3 s, 3 s late allowed) though not swept yet.
    expect(ledger.outstandingAt(28_400)).toBe(0);
    expect(ledger.anyOutstandingAt(28_200)).toBe(true);
    expect(ledger.anyOutstandingAt(28_400)).toBe(false);
    expect(ledger.outstanding).toBe(1);
  });

  it("is a copy: the caller cannot change the ledger's counts", () => {
    const ledger = new CapacityBooking(DEFAULT_CAPACITY_BOOKING_OPTIONS, 0);
    ledger.book("a", 0, { delayS: 5, promised: true });
    const seen = ledger.promiseOutcomes;
    seen.made = 100;
    expect(ledger.promiseOutcomes.made).toBe(1);
  });
});

/**
 * A router whose one slot drains two requests a second while five arrive: refused requests are told when to come
 * back and do, on time, at their hint (their fingerprint is their name).
 */
function overloaded(retryAfterPolicy: "booked_capacity" | "router_queue_drain_rate", peek = false) {
  let now = 0;
  const booking: BookingAdmission = { queueDelayTargetS: 1, standingIntervalS: 5, maxHeldRoomShare: 0 };
  const core = new RouterCore(
    routerOptions({ maxQueuedRequests: 20, queueTimeoutMs: 600_000, booking }, { retryAfterPolicy, retryAfterS: 5 }),
    { now: () => now },
    () => 0.5,
  );
  const comeBack = new Map<number, string[]>();
  const submit = (name: string) => {
    const result = core.submit(`${name}@${now}`, { fingerprint: name });
    if (peek) core.ledgerView();
    const ms = result.kind === "rejected" ? result.rejection.decision.retryAfterMs : undefined;
    if (ms === undefined) return;
    const at = Math.ceil((now + ms) / 500) * 500;
    comeBack.set(at, [...(comeBack.get(at) ?? []), name]);
  };
  let n = 0;
  for (let tick = 0; tick < 240; tick++) {
    now += 500;
    const plan = core.beginRound();
    if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
    const outcome = plan ? core.finishRound(plan) : undefined;
    if (outcome?.kind === "placed") core.release(outcome.ticket);
    if (tick < 60) for (let k = 0; k < 5; k++) submit(`r${n++}`);
    for (const name of comeBack.get(now) ?? []) submit(name);
    comeBack.delete(now);
  }
  return core;
}

describe("RouterCore's ledger view", () => {
  it("reports booked_capacity's promises and trust in its stats, and nothing for the other policies", () => {
    const core = overloaded("booked_capacity");
    const view = core.ledgerView();
    if (!view) throw new Error("booked_capacity keeps a ledger");
    expect(core.stats().ledger).toEqual(view);
    const { made, kept, broken, noShow } = view.promises;
    expect(made).toBeGreaterThan(10);
    expect(kept).toBeGreaterThan(0);
    expect(kept + broken + noShow).toBeLessThanOrEqual(made);
    expect(view.trust).toBeGreaterThan(0);
    expect(view.trust).toBeLessThanOrEqual(1);
    const other = overloaded("router_queue_drain_rate");
    expect(other.ledgerView()).toBeUndefined();
    expect(other.stats().ledger).toBeNull();
  });

  it("changes nothing when read (the simulator samples it every second)", () => {
    const plain = overloaded("booked_capacity").stats();
    const read = overloaded("booked_capacity", true).stats();
    expect(read).toEqual(plain);
  });

  it("is exported on /spillway/metrics: promises made, by how they ended, and the trust", () => {
    const core = overloaded("booked_capacity");
    const shard = (s: ReturnType<RouterCore["stats"]>, deployment: string) => ({
      ...s,
      deployment,
      shard: 0,
      internal: { waiters: 0, recentlyCancelled: 0, pendingObservations: 0 },
      calls: { acquire: 0, releaseCalls: 0, slotsReleased: 0, handedOff: 0 },
    });
    const stats = core.stats();
    const text = prometheusText([shard(stats, "llm"), shard(overloaded("router_queue_drain_rate").stats(), "plain")]);
    const promises = stats.ledger?.promises;
    if (!promises) throw new Error("no ledger");
    expect(text).toContain("# TYPE spillway_promises_made_total counter");
    expect(text).toContain(`spillway_promises_made_total{deployment="llm",shard="0"} ${promises.made}\n`);
    expect(text).toContain(
      `spillway_promises_ended_total{deployment="llm",shard="0",outcome="kept"} ${promises.kept}\n`,
    );
    expect(text).toContain(
      `spillway_promises_ended_total{deployment="llm",shard="0",outcome="broken"} ${promises.broken}\n`,
    );
    expect(text).toContain(
      `spillway_promises_ended_total{deployment="llm",shard="0",outcome="no_show"} ${promises.noShow}\n`,
    );
    expect(text).toContain(`spillway_booking_trust{deployment="llm",shard="0"} ${stats.ledger?.trust}\n`);
    expect(text).toContain(`spillway_booking_show_rate{deployment="llm",shard="0"} ${stats.ledger?.showRate}\n`);
    expect(stats.ledger?.freshBaseline).toBeGreaterThan(0);
    expect(text).toContain(
      `spillway_booking_fresh_baseline{deployment="llm",shard="0"} ${stats.ledger?.freshBaseline}\n`,
    );
    // A router of another policy keeps no ledger: no series, rather than zeros that read as a ledger never used.
    expect(text).not.toMatch(/spillway_(promises|booking)_[a-z_]+\{deployment="plain"/);
  });
});
