import { describe, expect, it } from "vitest";
import { QUEUE_LENGTH_STALE_MS } from "../../../src/core/queue-length-cache";
import { RETRY_AFTER_POLICIES, type RetryAfterPolicyName } from "../../../src/core/retry-after";
import { DEFAULT_RETRY_SCHEDULE_OPTIONS as OPTIONS, RetrySchedule } from "../../../src/core/retry-schedule";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptions } from "../../support/router-options";

const mid = () => 0.5;

describe("RetrySchedule", () => {
  it("forgets lapsed bookings even when no retry ever comes back (memory stays bounded)", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    for (let i = 0; i < 500; i++) schedule.book(0, 5 + (i % 20));
    expect(schedule.outstanding).toBe(500);
    schedule.estimate(30_000, { queueDepth: 0, drainRate: 10 }, () => 0.5); // time passes; nobody returns
    expect(schedule.outstanding).toBe(0);
  });

  it("a burst of refusals at one instant is spread over time, one slot's capacity at a time", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    const hints: number[] = [];
    for (let i = 0; i < 50; i++) {
      const s = schedule.estimate(0, { queueDepth: 20, drainRate: 10 }, mid) as number;
      hints.push(s);
      schedule.book(0, s);
    }
    // No fresh arrivals seen: 10 retries per second fit, after the queue's 2 s; u = 0.5 is the slot's middle.
    expect(hints.slice(0, 10).every((s) => s === 2.5)).toBe(true);
    expect(hints.slice(10, 20).every((s) => s === 3.5)).toBe(true);
    expect(hints.at(-1)).toBe(6.5);
    expect(new Set(hints).size).toBe(5);
    expect([2, 3, 4, 5, 6].map((s) => schedule.promisedAt(0, s))).toEqual([10, 10, 10, 10, 10]);
  });

  it("jitter stays inside the booked second", () => {
    const schedule = new RetrySchedule(OPTIONS, 400);
    const low = schedule.estimate(400, { queueDepth: 30, drainRate: 10 }, () => 0) as number;
    const high = schedule.estimate(400, { queueDepth: 30, drainRate: 10 }, () => 0.999999) as number;
    // The queue drains at 3.4 s: the slot is second 4, i.e. 3.6 s to 4.6 s from now, less the 50 ms margins.
    expect(low).toBeCloseTo(3.65, 9);
    expect(high).toBeCloseTo(4.55, 5);
  });

  it("fresh arrivals shrink the room left for retries; retries are not counted as fresh", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    for (let t = 0; t < 10; t++) {
      for (let i = 0; i < 6; i++) schedule.onArrival(t * 1000 + i, false);
      for (let i = 0; i < 3; i++) schedule.onArrival(t * 1000 + 10 + i, true);
    }
    schedule.onArrival(10_000, false);
    expect(schedule.freshRate).toBeCloseTo(6, 5);
    const hints: number[] = [];
    for (let i = 0; i < 8; i++) {
      const s = schedule.estimate(10_000, { queueDepth: 0, drainRate: 10 }, mid) as number;
      hints.push(s);
      schedule.book(10_000, s);
    }
    // 10 drains/s minus 6 fresh/s: 4 retries per one-second slot.
    expect(hints).toEqual([1.5, 1.5, 1.5, 1.5, 2.5, 2.5, 2.5, 2.5]);
  });

  it("a booking holds room from 2 s before its second; only a retry at or after its due instant takes it", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    for (let i = 0; i < 3; i++) schedule.book(0, 5.5);
    expect(schedule.reservedRoom(2_900)).toBe(0);
    expect(schedule.reservedRoom(3_000)).toBe(3);
    expect(schedule.claim(4_500)).toBe(false); // early: that room is still someone else's
    // Same second, but before the instant the booked clients were told: an SDK backoff retry, not one of them.
    expect(schedule.claim(5_200)).toBe(false);
    expect(schedule.reservedRoom(5_200)).toBe(3);
    expect([schedule.claim(5_500), schedule.claim(5_500), schedule.claim(5_600), schedule.claim(5_700)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(schedule.reservedRoom(5_700)).toBe(0);
  });

  it("bookings are taken earliest-due first, whatever the order they were made in", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    for (const s of [7.9, 5.2, 6.4, 5.8, 7.1]) schedule.book(0, s);
    expect(schedule.claim(5_100)).toBe(false);
    expect([5_200, 5_800].map((t) => schedule.claim(t))).toEqual([true, true]);
    expect(schedule.claim(6_300)).toBe(false); // 6.4 is not due yet
    expect(schedule.promisedAt(6_300, 0)).toBe(1);
    expect([6_400, 7_100, 7_900, 8_000].map((t) => schedule.claim(t))).toEqual([true, true, true, false]);
  });

  it("full: set when no second within 60 s has room, for that second and the next", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    expect(schedule.isFull(0)).toBe(false);
    while (schedule.estimate(0, { queueDepth: 0, drainRate: 1 }, mid) !== undefined)
      schedule.book(0, schedule.estimate(0, { queueDepth: 0, drainRate: 1 }, mid) as number);
    expect(schedule.isFull(500)).toBe(true);
    expect(schedule.isFull(1_999)).toBe(true);
    expect(schedule.isFull(2_000)).toBe(false);
  });

  it("a booking nobody claims lapses 2 s after its second", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    schedule.book(0, 5.5);
    schedule.book(0, 5.5);
    expect(schedule.reservedRoom(7_900)).toBe(2);
    expect(schedule.claim(7_900)).toBe(true); // a late client, within the grace
    expect(schedule.reservedRoom(8_000)).toBe(0);
    expect(schedule.claim(8_000)).toBe(false);
  });

  it("when every second up to 60 s is booked full, there is no estimate (the ladder falls back)", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    const hints: number[] = [];
    for (;;) {
      const s = schedule.estimate(0, { queueDepth: 0, drainRate: 1 }, mid);
      if (s === undefined) break;
      hints.push(s);
      schedule.book(0, s);
    }
    // One retry per second (no fresh arrivals, drain 1/s) in seconds 1..59: every hint in [1, 60] s, none twice.
    expect(hints).toHaveLength(59);
    expect(new Set(hints).size).toBe(59);
    expect(Math.min(...hints)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...hints)).toBeLessThanOrEqual(60);
  });

  it("no usable drain rate: no estimate", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    expect(schedule.estimate(0, { queueDepth: 5, drainRate: undefined }, mid)).toBeUndefined();
    expect(schedule.estimate(0, { queueDepth: 5, drainRate: 0 }, mid)).toBeUndefined();
    expect(schedule.estimate(0, { queueDepth: 5, drainRate: Number.NaN }, mid)).toBeUndefined();
  });

  it("a restart is cold: a new schedule holds nothing", () => {
    const schedule = new RetrySchedule(OPTIONS, 0);
    schedule.book(0, 3.5);
    const restarted = new RetrySchedule(OPTIONS, 1_000);
    expect(restarted.freshRate).toBeUndefined();
    expect(restarted.reservedRoom(3_000)).toBe(0);
  });
});

describe("RouterCore with retry_schedule", () => {
  function setup(policy: RetryAfterPolicyName = "retry_schedule") {
    let now = 0;
    const options = routerOptions(
      { maxQueuedRequests: 5, queueTimeoutMs: 600_000 },
      { retryAfterPolicy: policy, retryAfterS: undefined },
    );
    const core = new RouterCore(options, { now: () => now }, () => 0.5);
    const placeOne = () => {
      const plan = core.beginRound();
      if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
      const outcome = plan ? core.finishRound(plan) : undefined;
      if (outcome?.kind === "placed") core.release(outcome.ticket);
    };
    /** Two drains per second for 4 s, six fresh submits per drain: a warm estimator and a full queue. */
    const warm = () => {
      let n = 0;
      for (let i = 0; i < 8; i++) {
        now += 500;
        placeOne();
        for (let k = 0; k < 6; k++) core.submit(`w${n++}`);
      }
    };
    return { core, tick: (ms: number) => (now += ms), now: () => now, placeOne, warm };
  }

  it("at an empty queue whose room the bookings hold, a fresh request waits for a probe instead of being refused", () => {
    // Found by the router's property test: with no replica known free (its last report said full, and is stale now),
    // the held room refused a fresh request while nothing waited, and no probe ever asked whether the slot was free.
    let now = 0;
    const options = routerOptions(
      { maxQueuedRequests: 2, queueTimeoutMs: 600_000 },
      { retryAfterPolicy: "retry_schedule", retryAfterS: undefined },
    );
    const core = new RouterCore(options, { now: () => now }, mid);
    const round = (load: number) => {
      const plan = core.beginRound();
      if (!plan) throw new Error("nothing queued");
      for (const r of plan.probe) core.reportProbe(r, load);
      return core.finishRound(plan);
    };
    // Warm, then a burst refused with bookings, one a second from about 17 s on: they hold the queue's whole room.
    let n = 0;
    for (let i = 0; i < 8; i++) {
      now += 500;
      const outcome = core.queueDepth > 0 ? round(0) : undefined;
      if (outcome?.kind === "placed") core.release(outcome.ticket);
      for (let k = 0; k < 6; k++) core.submit(`w${n++}`);
    }
    for (let i = 0; i < 30; i++) expect(core.submit(`burst${i}`).kind).toBe("rejected");
    while (core.queueDepth > 0) {
      const outcome = round(0);
      if (outcome.kind === "placed") core.release(outcome.ticket);
    }
    // Once its report is stale, a probe finds the replica full of another router's requests; the request it was
    // for gives up. Ten seconds on, that report is stale too.
    now += QUEUE_LENGTH_STALE_MS + 1;
    core.submit("gives-up");
    expect(round(1).kind).toBe("backoff");
    expect(core.cancel("gives-up")).toBe("dequeued");
    now += QUEUE_LENGTH_STALE_MS + 1;
    // The report is stale: the replica may have room. The request waits for the probe, which finds the slot free.
    expect(core.submit("fresh").kind).toBe("queued");
    expect(round(0)).toMatchObject({ kind: "placed", ticket: "fresh" });
    // Had the probe found it full, the request would have been refused after all, with its hint.
    now += QUEUE_LENGTH_STALE_MS + 1;
    expect(core.submit("fresh.2").kind).toBe("queued");
    expect(round(1)).toMatchObject({
      kind: "backoff",
      shed: [{ ticket: "fresh.2", rejection: { reason: "queue_full" } }],
    });
    expect(core.queueDepth).toBe(0);
  });

  it("is a configurable policy name", () => {
    expect(RETRY_AFTER_POLICIES).toContain("retry_schedule");
  });

  it("cold: no header (the ladder's last rung); warm: a burst's hints spread instead of stacking", () => {
    const { core, warm } = setup();
    for (let i = 0; i < 5; i++) core.submit(`q${i}`);
    const cold = core.submit("cold");
    expect(cold.kind === "rejected" && cold.rejection.decision.rung).toBe("none");
    warm();
    expect(core.stats().estimatorWarm).toBe(true);
    const hints: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = core.submit(`burst${i}`);
      if (r.kind === "rejected" && r.rejection.decision.retryAfterMs !== undefined)
        hints.push(r.rejection.decision.retryAfterMs);
    }
    // Fresh arrivals outrun the drain, so a quarter of it (0.5/s) goes to retries: one per second, no two alike.
    expect(hints.length).toBeGreaterThan(15);
    expect(new Set(hints.map((ms) => Math.floor(ms / 1000))).size).toBe(hints.length);
    expect(Math.min(...hints)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...hints)).toBeLessThanOrEqual(60_000);
  });

  it("the hint is a reservation: at the booked second a fresh request is refused and the retry is admitted", () => {
    const { core, warm, tick, placeOne } = setup();
    warm();
    const refused = core.submit("burst");
    if (refused.kind !== "rejected") throw new Error("expected a refusal");
    const hintMs = refused.rejection.decision.retryAfterMs as number;
    tick(hintMs); // the client comes back when told, meanwhile the queue drains to one below its bound
    while (core.queueDepth > 4) placeOne();
    expect(core.queueDepth).toBe(4);
    const fresh = core.submit("fresh");
    expect(fresh.kind).toBe("rejected");
    expect(core.submit("burst.1", { retry: true }).kind).toBe("queued");
  });

  it("a retry nobody booked, or a retry under another policy, is just a request", () => {
    const { core, warm, placeOne } = setup("router_queue_drain_rate");
    warm();
    while (core.queueDepth > 4) placeOne();
    expect(core.submit("r", { retry: true }).kind).toBe("queued");
    expect(core.submit("f").kind).toBe("rejected");

    const s = setup();
    s.warm();
    while (s.core.queueDepth > 4) s.placeOne();
    expect(s.core.submit("unbooked", { retry: true }).kind).toBe("queued");
  });

  it("while the schedule is full, a retry without a booking is refused even with room (the room is the fresh arrivals')", () => {
    const { core, warm, tick, placeOne } = setup();
    warm();
    // Refuse until the schedule has no second with room within 60 s: the last refusals carry no header.
    let last: ReturnType<typeof core.submit> | undefined;
    for (let i = 0; i < 200; i++) {
      last = core.submit(`over${i}`);
      if (last.kind === "rejected" && last.rejection.decision.rung === "none") break;
    }
    expect(last?.kind === "rejected" && last.rejection.decision.rung).toBe("none");
    tick(450); // the SDK's first backoff retry of that client
    while (core.queueDepth > 2) placeOne();
    expect(core.submit("over.1", { retry: true }).kind).toBe("rejected");
    expect(core.submit("fresh").kind).toBe("queued");
    // Two seconds later (no refusal meanwhile found the schedule full) an unbooked retry is a request again.
    tick(2_000);
    while (core.queueDepth > 2) placeOne();
    expect(core.submit("later.1", { retry: true }).kind).toBe("queued");
  });
});
