import { describe, expect, it } from "vitest";
import { FairQueue } from "../../../src/core/fair-queue";
import { RefusalCounts } from "../../../src/core/refusal-counts";
import { RouterCore } from "../../../src/core/router-core";
import type { BookingAdmission, RouterOptions } from "../../../src/core/router-options";
import { parseConfig, routerOptionsFor } from "../../../src/edge/config";
import { routerOptions } from "../../support/router-options";
import { standingQueueRouter } from "../../support/standing-queue";

const entry = (ticket: string, enqueuedAtMs: number, yields = false, firstRefusedAtMs?: number) => ({
  ticket,
  tenant: "",
  weight: 1,
  priority: "interactive" as const,
  enqueuedAtMs,
  ...(yields ? { yields: true } : {}),
  ...(firstRefusedAtMs !== undefined ? { firstRefusedAtMs } : {}),
});

/**
 * A `booked_capacity` router on a clock the test sets (`clock.ms`): demotion after 3 s, no delay target, no room held
 * for promises; `round` runs one placement round, every probe reading an empty replica.
 */
function demotingRouter(booking: Partial<BookingAdmission>, options: Partial<RouterOptions>) {
  const clock = { ms: 0 };
  const core = new RouterCore(
    routerOptions(
      {
        ...options,
        booking: {
          queueDelayTargetS: undefined,
          standingIntervalS: 600,
          maxHeldRoomShare: 0,
          demoteAfterS: 3,
          ...booking,
        },
      },
      { retryAfterPolicy: "booked_capacity", retryAfterS: undefined },
    ),
    { now: () => clock.ms },
    () => 0.5,
  );
  const round = () => {
    const plan = core.beginRound();
    if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
    return plan ? core.finishRound(plan) : undefined;
  };
  return { core, round, clock };
}

/** The admission a deployment configured with these `booking` settings gives its router (parseConfig's defaults). */
function configuredAdmission(booking: Record<string, unknown>): BookingAdmission | undefined {
  const config = parseConfig({ deployments: { m: { replicas: ["http://127.0.0.1:1"], booking } } });
  return config.deployments.m && routerOptionsFor(config.deployments.m).booking;
}

describe("FairQueue: entries that yield", () => {
  it("wait behind every entry that does not, whenever they came", () => {
    const q = new FairQueue();
    q.offer(entry("old", 0, true), 10);
    q.offer(entry("a", 1), 10);
    q.offer(entry("b", 2), 10);
    expect([q.dispatch()?.ticket, q.dispatch()?.ticket, q.dispatch()?.ticket]).toEqual(["a", "b", "old"]);
  });

  it("take no room from the others: they count only towards the queue's bound", () => {
    const q = new FairQueue();
    expect(q.offer(entry("old1", 0, true), 3).kind).toBe("queued");
    expect(q.offer(entry("old2", 1, true), 3).kind).toBe("queued");
    // Capacity 1 for the others: the two that yield do not fill it.
    expect(q.offer(entry("a", 2), 1, 3)).toEqual({ kind: "queued" });
    // At the bound (3), the next one pushes out the one that yields whose client was first refused longest ago
    // (none says when: when it was queued).
    const pushed = q.offer(entry("b", 3), 2, 3);
    expect(pushed.kind === "queued" && pushed.displaced?.ticket).toBe("old1");
    expect(q.size).toBe(3);
    // Over capacity without them, it is refused as before, and none of them is chosen to make room.
    expect(q.offer(entry("c", 4), 2, 10).kind).toBe("refused");
    expect([...q.entries()].map((e) => e.ticket)).toEqual(["old2", "a", "b"]);
  });

  it("are served the most recently first refused first, behind batch entries that do not yield (adaptive LIFO)", () => {
    const q = new FairQueue();
    q.offer(entry("refused-at-10", 50, true, 10_000), 10);
    q.offer(entry("refused-at-30", 51, true, 30_000), 10);
    q.offer({ ...entry("flex", 52), priority: "batch" }, 10);
    q.offer(entry("refused-at-20", 53, true, 20_000), 10);
    const order = [q.dispatch(), q.dispatch(), q.dispatch(), q.dispatch()].map((e) => e?.ticket);
    expect(order).toEqual(["flex", "refused-at-30", "refused-at-20", "refused-at-10"]);
  });

  it("at the bound, give the place of the one first refused longest ago, whenever it was queued", () => {
    const q = new FairQueue();
    q.offer(entry("refused-at-20", 0, true, 20_000), 3);
    q.offer(entry("refused-at-10", 1, true, 10_000), 3);
    q.offer(entry("refused-at-30", 2, true, 30_000), 3);
    const pushed = q.offer(entry("fresh", 3), 3, 3);
    expect(pushed.kind === "queued" && pushed.displaced?.ticket).toBe("refused-at-10");
  });

  it("in `arrival` order, wait in line with the batch class and the newest queued gives its place", () => {
    const q = new FairQueue({ ordering: "start_time", yieldOrder: "arrival" });
    q.offer(entry("refused-at-10", 0, true, 10_000), 3);
    q.offer(entry("refused-at-30", 1, true, 30_000), 3);
    q.offer(entry("refused-at-20", 2, true, 20_000), 3);
    const pushed = q.offer(entry("fresh", 3), 3, 3);
    expect(pushed.kind === "queued" && pushed.displaced?.ticket).toBe("refused-at-20");
    expect([q.dispatch(), q.dispatch(), q.dispatch()].map((e) => e?.ticket)).toEqual([
      "fresh",
      "refused-at-10",
      "refused-at-30",
    ]);
  });

  it("push nobody out themselves: one is refused at the bound", () => {
    const q = new FairQueue();
    q.offer(entry("a", 0), 2);
    q.offer(entry("old1", 1, true), 2);
    expect(q.offer(entry("old2", 2, true), 2).kind).toBe("refused");
    expect(q.size).toBe(2);
  });
});

describe("RefusalCounts.firstRefusedAtMs", () => {
  it("keeps the first refusal's time until the request is admitted or forgotten", () => {
    const counts = new RefusalCounts(2);
    counts.refused("a", 1_000);
    counts.refused("a", 6_000);
    expect(counts.firstRefusedAtMs("a")).toBe(1_000);
    counts.forget("a");
    expect(counts.firstRefusedAtMs("a")).toBeUndefined();
    counts.refused("a", 9_000);
    counts.refused("b", 9_000);
    counts.refused("c", 9_000); // "a" is forgotten: only two are remembered
    expect(counts.firstRefusedAtMs("a")).toBeUndefined();
  });
});

/** `booked_capacity` over a queue that stands, with a 1 s delay target: fresh arrivals beyond two waiting are refused. */
function standingQueue(demoteAfterS: number | undefined) {
  const booking: BookingAdmission = { queueDelayTargetS: 1, standingIntervalS: 10, maxHeldRoomShare: 0 };
  if (demoteAfterS !== undefined) booking.demoteAfterS = demoteAfterS;
  return standingQueueRouter(booking);
}

describe("booking.demoteAfterS", () => {
  it("queues a request first refused long ago behind the fresh ones, past the delay target", () => {
    const { core, run, placeOne, placed } = standingQueue(30);
    run(30);
    expect(core.submit("old.0", { fingerprint: "old" }).kind).toBe("rejected");
    run(20);
    // 20 s after its first refusal it is not demoted: refused like any fresh request.
    expect(core.submit("old.1", { fingerprint: "old" }).kind).toBe("rejected");
    run(11);
    expect(core.submit("fresh", { fingerprint: "fresh" }).kind).toBe("rejected");
    expect(core.stats().demoted).toBe(0);
    expect(core.submit("old.2", { fingerprint: "old" }).kind).toBe("queued");
    expect(core.stats().demoted).toBe(1);
    // It is placed only when no request that was not demoted waits.
    const before = core.queueDepth;
    while (placeOne());
    expect(placed.at(-1)).toBe("old.2");
    expect(placed.slice(-before, -1).every((t) => t.startsWith("s"))).toBe(true);
  });

  it("places the demoted request first refused most recently first, whichever was queued first", () => {
    const { core, run, placeOne, placed } = standingQueue(3);
    run(30);
    expect(core.submit("early.0", { fingerprint: "early" }).kind).toBe("rejected");
    run(10);
    expect(core.submit("late.0", { fingerprint: "late" }).kind).toBe("rejected");
    run(10);
    expect(core.submit("early.1", { fingerprint: "early" }).kind).toBe("queued");
    expect(core.submit("late.1", { fingerprint: "late" }).kind).toBe("queued");
    expect(core.stats().demoted).toBe(2);
    while (placeOne());
    expect(placed.slice(-2)).toEqual(["late.1", "early.1"]);
  });

  it("off, the same request is refused like a fresh one", () => {
    const { core, run } = standingQueue(undefined);
    run(30);
    core.submit("old.0", { fingerprint: "old" });
    run(31);
    expect(core.submit("old.1", { fingerprint: "old" }).kind).toBe("rejected");
  });

  it("is 3 s in the configuration's defaults, and null turns it off", () => {
    const config = parseConfig({ deployments: { m: { replicas: ["http://127.0.0.1:1"] } } });
    const deployment = config.deployments.m;
    if (!deployment) throw new Error("no deployment");
    expect(routerOptionsFor(deployment).booking?.demoteAfterS).toBe(3);
    const off = parseConfig({
      deployments: { m: { replicas: ["http://127.0.0.1:1"], booking: { demoteAfterS: null } } },
    });
    expect(off.deployments.m && routerOptionsFor(off.deployments.m).booking?.demoteAfterS).toBeUndefined();
  });
});

describe("booking.demotedHeadroomSlots (trunk reservation for fresh arrivals)", () => {
  /** Two one-slot replicas, a two-deep queue, demotion after 3 s; `reserved` slots kept from demoted requests. */
  function twoSlots(reserved: number | undefined) {
    const { core, round, clock } = demotingRouter(reserved === undefined ? {} : { demotedHeadroomSlots: reserved }, {
      replicas: ["a", "b"],
      maxQueuedRequests: 2,
      queueTimeoutMs: 600_000,
    });
    const placed = (ticket: string) => {
      const outcome = round();
      expect(outcome?.kind === "placed" && outcome.ticket).toBe(ticket);
    };
    // Both slots busy, two requests waiting, and "old" refused at t = 0; 5 s later "old" is back, demoted, behind
    // the one still waiting; that one takes the next slot, and one slot frees again.
    for (const ticket of ["f1", "f2"]) {
      core.submit(ticket, { fingerprint: ticket });
      placed(ticket);
    }
    core.submit("q1", { fingerprint: "q1" });
    core.submit("q2", { fingerprint: "q2" });
    expect(core.submit("old.0", { fingerprint: "old" }).kind).toBe("rejected");
    clock.ms = 5_000;
    core.release("f1");
    placed("q1");
    expect(core.submit("old.1", { fingerprint: "old" })).toEqual({ kind: "queued" });
    expect(core.stats().demoted).toBe(1);
    core.release("f2");
    placed("q2");
    core.release("q1");
    return { core, round, placed };
  }

  it("keeps the last free slot from a demoted request for a fresh arrival, then places it", () => {
    const { core, round, placed } = twoSlots(1);
    // One slot free of two: the demoted request waits; the round is held (not a failed placement).
    expect(round()?.kind).toBe("held");
    expect(core.submit("fresh", { fingerprint: "fresh" })).toEqual({ kind: "queued" });
    placed("fresh");
    // Two slots free: it goes.
    core.release("q2");
    core.release("fresh");
    placed("old.1");
  });

  it("off (the default), the demoted request takes the last free slot", () => {
    const { placed } = twoSlots(undefined);
    placed("old.1");
  });

  it("is 0 (off) in the configuration's defaults, and takes a number of slots", () => {
    expect(configuredAdmission({ demotedHeadroomSlots: 2 })?.demotedHeadroomSlots).toBe(2);
    expect(configuredAdmission({})?.demotedHeadroomSlots).toBeUndefined();
    expect(() => configuredAdmission({ demotedHeadroomSlots: 0.5 })).toThrow();
  });
});

/**
 * One one-slot replica, busy; a 3-deep queue with a 30 s timeout, demotion after 3 s (and `booking`). "old" is refused
 * at 0 s and queued, demoted, at 5 s behind "q2" (queued at 0 s); `shedAt(ms)` moves the clock and expires.
 */
function oneDemotedWaiting(booking: Partial<BookingAdmission>) {
  const { core, round, clock } = demotingRouter(booking, { maxQueuedRequests: 3, queueTimeoutMs: 30_000 });
  core.submit("busy", { fingerprint: "busy" });
  expect(round()?.kind).toBe("placed");
  for (const ticket of ["q1", "q2", "q3"]) core.submit(ticket, { fingerprint: ticket });
  expect(core.submit("old.0", { fingerprint: "old" }).kind).toBe("rejected");
  clock.ms = 5_000;
  core.release("busy");
  expect(round()).toMatchObject({ kind: "placed", ticket: "q1" });
  expect(core.cancel("q3")).toBe("dequeued");
  expect(core.submit("old.1", { fingerprint: "old" })).toEqual({ kind: "queued" });
  expect(core.stats().demoted).toBe(1);
  const shedAt = (ms: number) => {
    clock.ms = ms;
    return core.expire().timedOut.map((t) => t.ticket);
  };
  return { core, clock, shedAt };
}

describe("booking.demotedTimeoutS (how long a demoted request may wait)", () => {
  /** {@link oneDemotedWaiting}, and "late" queued at 6 s behind "q2" and the demoted "old". */
  function waiting(demotedTimeoutS: number | undefined) {
    const { core, clock, shedAt } = oneDemotedWaiting(demotedTimeoutS === undefined ? {} : { demotedTimeoutS });
    clock.ms = 6_000;
    expect(core.submit("late", { fingerprint: "late" })).toEqual({ kind: "queued" });
    return { core, shedAt };
  }

  it("lets a demoted request wait past the queue's timeout, up to its own, while the others are shed at 30 s", () => {
    const { core, shedAt } = waiting(40);
    // The next expiry is the first deadline of all, whichever entry holds it: q2's (0 s + 30 s).
    expect(core.nextExpiryMs()).toBe(30_000);
    expect(shedAt(30_000)).toEqual(["q2"]);
    // Then "late"'s (6 s + 30 s), though the demoted "old" is ahead of it in the queue (its deadline: 5 s + 40 s).
    expect(core.nextExpiryMs()).toBe(36_000);
    expect(shedAt(35_000)).toEqual([]);
    expect(shedAt(36_000)).toEqual(["late"]);
    expect(core.nextExpiryMs()).toBe(45_000);
    expect(shedAt(44_999)).toEqual([]);
    expect(shedAt(45_000)).toEqual(["old.1"]);
    expect(core.queueDepth).toBe(0);
  });

  it("unset, or shorter than the queue's timeout, the demoted request is shed at the queue's timeout", () => {
    for (const demotedTimeoutS of [undefined, 10]) {
      const { core, shedAt } = waiting(demotedTimeoutS);
      expect(shedAt(30_000)).toEqual(["q2"]);
      expect(core.nextExpiryMs()).toBe(35_000);
      expect(shedAt(35_000)).toEqual(["old.1"]);
      expect(shedAt(36_000)).toEqual(["late"]);
    }
  });

  it("is 40 s in the configuration's defaults, where 0 is refused and null is the queue's timeout", () => {
    const at = (booking: Record<string, unknown>) => configuredAdmission(booking)?.demotedTimeoutS;
    expect(at({})).toBe(40);
    expect(at({ demotedTimeoutS: 45 })).toBe(45);
    expect(at({ demotedTimeoutS: null })).toBeUndefined();
    expect(() => at({ demotedTimeoutS: 0 })).toThrow();
  });
});

describe("booking.demotedQuietTimeoutS (a longer wait while no arrival is refused)", () => {
  /**
   * {@link oneDemotedWaiting} with a demoted wait of 40 s, and `demotedQuietTimeoutS` while quiet: the refusal of "old"
   * at 0 s is the last for a full queue until `refuseAt`.
   */
  function waiting(demotedQuietTimeoutS: number | undefined) {
    const { core, clock, shedAt } = oneDemotedWaiting({
      demotedTimeoutS: 40,
      demotedQuietTimeoutS,
      sdkClientsLeaveShare: 0.5,
    });
    /**
     * At `ms`, two fresh arrivals fill the line ahead of "old" (queued) and an SDK client's is refused for a full
     * queue: half the queue's limit is closed to SDK clients (`sdkClientsLeaveShare`), and two wait there already.
     */
    const refuseAt = (ms: number) => {
      clock.ms = ms;
      for (const ticket of ["f1", "f2"])
        expect(core.submit(ticket, { fingerprint: ticket })).toEqual({ kind: "queued" });
      expect(core.submit("sdk", { fingerprint: "sdk", sdkClient: true }).kind).toBe("rejected");
    };
    return { core, shedAt, refuseAt };
  }

  it("while nothing is refused, a demoted request waits up to the quiet timeout, not its own 40 s", () => {
    const { core, shedAt } = waiting(60);
    expect(shedAt(30_000)).toEqual(["q2"]);
    // Quiet since the refusal at 0 s: "old.1", queued at 5 s, may wait until 65 s.
    expect(core.nextExpiryMs()).toBe(65_000);
    expect(shedAt(45_000)).toEqual([]);
    expect(shedAt(64_999)).toEqual([]);
    expect(shedAt(65_000)).toEqual(["old.1"]);
  });

  it("a refusal for a full queue ends the quiet: the demoted request past its 40 s is shed at once", () => {
    const { core, shedAt, refuseAt } = waiting(60);
    expect(shedAt(30_000)).toEqual(["q2"]);
    expect(shedAt(46_000)).toEqual([]);
    refuseAt(50_000);
    // Its deadline is 5 s + 40 s again while arrivals are refused (the last 5 s): already past.
    expect(core.nextExpiryMs()).toBe(45_000);
    expect(shedAt(50_000)).toEqual(["old.1"]);
  });

  it("a refusal before the 40 s leaves the demoted request its 40 s; quiet again 5 s later, its 60 s", () => {
    const { core, shedAt, refuseAt } = waiting(60);
    expect(shedAt(30_000)).toEqual(["q2"]);
    refuseAt(36_000);
    expect(core.nextExpiryMs()).toBe(45_000);
    expect(shedAt(40_999)).toEqual([]);
    // 5 s after the refusal it is quiet again: the deadline moves back to 65 s (f1's and f2's, 66 s, come after).
    expect(shedAt(41_000)).toEqual([]);
    expect(core.nextExpiryMs()).toBe(65_000);
    expect(shedAt(45_000)).toEqual([]);
  });

  it("unset, the demoted request is shed at its 40 s, quiet or not", () => {
    const { core, shedAt } = waiting(undefined);
    expect(shedAt(30_000)).toEqual(["q2"]);
    expect(core.nextExpiryMs()).toBe(45_000);
    expect(shedAt(45_000)).toEqual(["old.1"]);
  });

  it("is 120 s in the configuration's defaults, where 0 is refused and null is off", () => {
    const at = (booking: Record<string, unknown>) => configuredAdmission(booking)?.demotedQuietTimeoutS;
    expect(at({})).toBe(120);
    expect(at({ demotedQuietTimeoutS: 90 })).toBe(90);
    expect(at({ demotedQuietTimeoutS: null })).toBeUndefined();
    expect(() => at({ demotedQuietTimeoutS: 0 })).toThrow();
  });
});
