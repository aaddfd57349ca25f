import { describe, expect, it } from "vitest";
import { backoffDelayMs, probeDeadlineMs } from "../../../src/core/backoff";
import { DrainAccuracyTracker } from "../../../src/core/drain-accuracy";
import { chooseTwo, pickShortestAccepting } from "../../../src/core/power-of-two";
import { QueueLengthCache } from "../../../src/core/queue-length-cache";

describe("backoff", () => {
  it("goes 0, 25, 50, 100, 200, 400, 500, 500 ms", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(backoffDelayMs)).toEqual([0, 25, 50, 100, 200, 400, 500, 500]);
  });
  it("probe deadline 0.1 s doubling to 1 s", () => {
    expect([0, 1, 2, 3, 4, 9].map(probeDeadlineMs)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe("power of two choices", () => {
  it("picks two distinct replicas for every random draw", () => {
    const replicas = ["a", "b", "c", "d"];
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        const draws = [i / 4, j / 4];
        const pair = chooseTwo(replicas, () => draws.shift() as number);
        expect(pair).toHaveLength(2);
        expect(new Set(pair).size).toBe(2);
      }
    }
  });
  it("returns every replica when there are at most two", () => {
    expect(chooseTwo(["a"], Math.random)).toEqual(["a"]);
    expect(chooseTwo(["a", "b"], Math.random)).toEqual(["a", "b"]);
  });
  it("takes the accepting candidate with the shorter queue", () => {
    const lengths: Record<string, number> = { a: 3, b: 1 };
    const len = (r: string) => lengths[r] as number;
    expect(pickShortestAccepting(["a", "b"], len, () => true)).toBe("b");
    expect(pickShortestAccepting(["a", "b"], len, (r) => r === "a")).toBe("a");
    expect(pickShortestAccepting(["a", "b"], len, () => false)).toBeUndefined();
  });
});

describe("queue-length cache", () => {
  it("re-probes missing, stale, invalid and at-cap entries", () => {
    const cache = new QueueLengthCache(2);
    expect(cache.needsProbe("a", 0)).toBe(true);
    cache.report("a", 1, 0);
    expect(cache.needsProbe("a", 10_000)).toBe(false);
    expect(cache.needsProbe("a", 10_001)).toBe(true);
    cache.assign("a");
    expect(cache.needsProbe("a", 1)).toBe(true);
    expect(cache.accepts("a")).toBe(false);
    cache.complete("a");
    expect(cache.accepts("a")).toBe(true);
    cache.invalidate("a", 2);
    expect(cache.accepts("a")).toBe(false);
    expect(cache.isDown("a", 2)).toBe(true);
    expect(cache.isDown("a", 2 + 1_000)).toBe(false); // worth a probe again
    expect(cache.needsProbe("a", 3)).toBe(true);
  });
  it("sums valid entries for occupancy and never goes negative", () => {
    const cache = new QueueLengthCache(4);
    cache.report("a", 2, 0);
    cache.report("b", 1, 0);
    cache.complete("b");
    cache.complete("b");
    expect(cache.totalQueueLength()).toBe(2);
  });
});

describe("suggested vs observed drain time", () => {
  it("observes the drain when the counter reaches C0 + D", () => {
    const tracker = new DrainAccuracyTracker();
    tracker.recordRejection(1_000, 3, 10, 2);
    tracker.onDrain(1_500, 11);
    tracker.onDrain(2_000, 12);
    expect(tracker.recent()).toEqual([]);
    tracker.onDrain(3_500, 13);
    expect(tracker.recent()).toEqual([{ atMs: 1_000, queueDepth: 3, suggestedS: 2, observedS: 2.5 }]);
    expect(tracker.pendingCount).toBe(0);
  });
  it("completes records in target order even when recorded out of order", () => {
    const tracker = new DrainAccuracyTracker();
    tracker.recordRejection(0, 5, 0, 1);
    tracker.recordRejection(100, 1, 0, 1);
    tracker.onDrain(1_000, 1);
    expect(tracker.recent().map((r) => r.queueDepth)).toEqual([1]);
    tracker.onDrain(2_000, 5);
    expect(tracker.recent().map((r) => r.observedS)).toEqual([0.9, 2]);
  });
  it("a rejection at an empty queue is observed drained at once (C0 + 0 is reached), not at the next drain", () => {
    const tracker = new DrainAccuracyTracker();
    tracker.recordRejection(1_000, 0, 7, 2);
    expect(tracker.recent()).toEqual([{ atMs: 1_000, queueDepth: 0, suggestedS: 2, observedS: 0 }]);
    expect(tracker.pendingCount).toBe(0);
    expect(tracker.errorHistogram()).toMatchObject({ sum: 2, count: 1 });
  });
  it("bounded: past maxPending the oldest record is dropped, not the one nearest its target", () => {
    const tracker = new DrainAccuracyTracker(2);
    tracker.recordRejection(0, 5, 0, 1); // target 5
    tracker.recordRejection(1_000, 5, 0, 1); // target 5
    tracker.recordRejection(2_000, 1, 0, 1); // target 1: the nearest, and the newest
    tracker.onDrain(3_000, 5);
    expect(tracker.recent().map((r) => r.atMs)).toEqual([2_000, 1_000]);
  });
});
