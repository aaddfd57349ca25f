import { describe, expect, it } from "vitest";
import { type BookingAdmission, DEFAULT_BOOKING_ADMISSION } from "../../../src/core/router-options";
import { DRAINING_WINDOW_S, StandingQueue } from "../../../src/core/standing-queue";
import { standingQueueRouter } from "../../support/standing-queue";

describe("StandingQueue (the queue-delay target's standing state)", () => {
  it("stands once the queue has stayed above the target for the interval, and not before", () => {
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => 10, 0);
    expect(queue.targetDepth()).toBe(10);
    expect(queue.update(1_000, 50)).toBe(false);
    expect(queue.update(20_000, 10)).toBe(false); // back at the target's depth: the interval starts again
    expect(queue.update(49_000, 50)).toBe(false);
    expect(queue.update(50_000, 50)).toBe(true);
    expect(queue.isStanding).toBe(true);
  });

  it("an interval given in fractions of a second is whole milliseconds, not their float product", () => {
    // 16.1 * 1000 is 16100.000000000002: the spell began (and ended) at the update after the interval, not at it.
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 16.1 }, () => 10, 0);
    expect(queue.update(16_099, 50)).toBe(false);
    expect(queue.update(16_100, 50)).toBe(true);
    expect(queue.update(32_199, 50)).toBe(true);
    expect(queue.update(32_200, 50)).toBe(false);
  });

  it("stays standing, whatever the depth, until nothing has been refused for the interval", () => {
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => 10, 0);
    queue.update(30_000, 50);
    queue.refused(40_000);
    expect(queue.update(69_000, 0)).toBe(true);
    expect(queue.update(70_000, 0)).toBe(false);
  });

  it("a spell that starts with nothing refused lately lasts its quiet time, not until the next update", () => {
    // A placement's update, refusing nothing, can start the spell: the next arrival must not end it at once (with a
    // queue too deep to fill, the target then never applied and the queue grew without bound).
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => 10, 0);
    expect(queue.update(30_000, 50)).toBe(true);
    expect(queue.update(30_001, 50)).toBe(true);
    expect(queue.update(59_999, 50)).toBe(true);
    expect(queue.update(60_000, 50)).toBe(false); // nothing refused for the whole interval since it began
    const atOnce = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 0 }, () => 10, 0);
    expect(atOnce.update(0, 50)).toBe(true);
    expect(atOnce.update(1, 50)).toBe(true);
    expect(atOnce.update(DRAINING_WINDOW_S * 1000, 50)).toBe(false);
  });

  it("leaves after at least DRAINING_WINDOW_S without a refusal even with a shorter interval", () => {
    const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 0 }, () => 10, 0);
    expect(queue.update(0, 50)).toBe(true);
    queue.refused(1_000);
    expect(queue.update(1_000 + DRAINING_WINDOW_S * 1000 - 1, 50)).toBe(true);
    expect(queue.update(1_000 + DRAINING_WINDOW_S * 1000, 50)).toBe(false);
  });

  it("never stands while the attempts offered fall short of drainingOfferedShare of the drain rate", () => {
    const queue = new StandingQueue(
      { queueDelayTargetS: 1, standingIntervalS: 0, drainingOfferedShare: 1 },
      () => 2,
      0,
    );
    // Two attempts a second against a drain rate of 2: not draining, the deep queue stands.
    for (let ms = 0; ms < 7_000; ms += 500) queue.offer(ms);
    expect(queue.update(7_000, 50)).toBe(true);
    // One a second from then on: the queue drains by itself, and the standing state ends at once.
    for (let ms = 7_000; ms < 14_000; ms += 1_000) queue.offer(ms);
    queue.refused(13_500);
    expect(queue.update(14_000, 50)).toBe(false);
  });

  it("has no target depth while the drain rate is cold or the target is off", () => {
    expect(new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => undefined, 0).targetDepth()).toBe(
      Number.POSITIVE_INFINITY,
    );
    const off = new StandingQueue({ standingIntervalS: 0 }, () => 10, 0);
    expect(off.targetDepth()).toBe(Number.POSITIVE_INFINITY);
    expect(off.update(0, 1_000)).toBe(false);
  });

  it("rounds the target up and keeps at least one waiting request", () => {
    expect(new StandingQueue({ queueDelayTargetS: 0.25, standingIntervalS: 30 }, () => 10, 0).targetDepth()).toBe(3);
    expect(new StandingQueue({ queueDelayTargetS: 0.01, standingIntervalS: 30 }, () => 10, 0).targetDepth()).toBe(1);
  });
});

describe("booking.standingTimeoutS (CoDel's short timeout under adaptive LIFO)", () => {
  const booking: BookingAdmission = {
    ...DEFAULT_BOOKING_ADMISSION,
    demoteAfterS: undefined,
    standingIntervalS: 10,
    standingTimeoutS: 5,
  };

  it("sheds, with a hint, requests that waited past it while the queue stands, and none before it stands", () => {
    const withTimeout = standingQueueRouter(booking);
    const without = standingQueueRouter({ ...booking, standingTimeoutS: undefined });
    for (const { core, run } of [withTimeout, without]) {
      run(8); // 8 s: a queue of requests up to 8 s old, not standing yet (the interval is 10 s)
      expect(core.expire().timedOut).toEqual([]);
      run(10); // 18 s: it stands, and newest-first dispatch has left the oldest at the bottom
    }
    // Off (the default), the same queue keeps its requests until the queue's own timeout (600 s here).
    expect(without.core.expire().timedOut).toEqual([]);
    expect(without.core.nextExpiryMs()).toBeGreaterThan(600_000);
    const { timedOut } = withTimeout.core.expire();
    expect(timedOut.length).toBeGreaterThan(10);
    for (const { rejection } of timedOut) {
      expect(rejection.reason).toBe("queue_timeout");
      expect(rejection.decision.retryAfterMs).toBeGreaterThan(0);
    }
    expect(withTimeout.core.queueDepth).toBe(without.core.queueDepth - timedOut.length);
    expect(withTimeout.core.expire().timedOut).toEqual([]); // what is left waited less than 5 s
  });
});
