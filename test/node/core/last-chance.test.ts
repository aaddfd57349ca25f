import { describe, expect, it } from "vitest";
import { RefusalCounts } from "../../../src/core/refusal-counts";
import type { BookingAdmission } from "../../../src/core/router-options";
import { parseConfig, routerOptionsFor } from "../../../src/edge/config";
import { standingQueueRouter } from "../../support/standing-queue";

/**
 * `booked_capacity` with a 1 s queue-delay target over a queue that stands: two drains a second, five arrivals a
 * second for 30 s (each a new request), so the target cuts the queue far below its 100-deep bound.
 */
function standingQueue(lastChanceAfterRefusals?: number, maxQueuedRequests = 100, demoteAfterS?: number) {
  const booking: BookingAdmission = { queueDelayTargetS: 1, standingIntervalS: 10, maxHeldRoomShare: 0 };
  if (lastChanceAfterRefusals !== undefined) booking.lastChanceAfterRefusals = lastChanceAfterRefusals;
  if (demoteAfterS !== undefined) booking.demoteAfterS = demoteAfterS;
  const router = standingQueueRouter(booking, { maxQueuedRequests });
  router.run(30);
  return router;
}

describe("booking.lastChanceAfterRefusals", () => {
  it("queues a request refused twice past the delay target, while a fresh one is refused", () => {
    const { core } = standingQueue(2);
    expect(core.queueDepth).toBeLessThan(100); // the target, not the bound, is what refuses
    expect(core.submit("lc.0", { fingerprint: "lc" }).kind).toBe("rejected");
    expect(core.submit("lc.1", { fingerprint: "lc" }).kind).toBe("rejected");
    expect(core.submit("fresh", { fingerprint: "fresh" }).kind).toBe("rejected");
    expect(core.submit("lc.2", { fingerprint: "lc" }).kind).toBe("queued");
    // Queued, not yet served, it is still remembered (the queue may shed it): sent again, still on its last chance.
    // Forgotten once placed: test/node/core/refusal-memory.test.ts.
    expect(core.submit("lc.3", { fingerprint: "lc" }).kind).toBe("queued");
  });

  it("with demotion on (the default), waits in line with first attempts rather than behind them", () => {
    // Returning more than `demoteAfterS` after its first refusal, a last attempt would otherwise be demoted: past
    // the target too, but behind every first attempt, the first pushed out at the bound and left to time out.
    const lastAttempt = (lastChance: number | undefined) => {
      const { core, run, placeOne, placed } = standingQueue(lastChance, 100, 3);
      expect(core.submit("lc.0", { fingerprint: "lc" }).kind).toBe("rejected");
      run(1);
      expect(core.submit("lc.1", { fingerprint: "lc" }).kind).toBe("rejected");
      run(5);
      expect(core.submit("lc.2", { fingerprint: "lc" }).kind).toBe("queued");
      const demoted = core.stats().demoted;
      run(30); // first attempts queued after it
      while (placeOne());
      const after = placed.slice(placed.indexOf("lc.2") + 1);
      return { demoted, firstAttemptsPlacedAfter: after.filter((t) => t.startsWith("s")).length };
    };
    const on = lastAttempt(2);
    expect(on.demoted).toBe(0);
    expect(on.firstAttemptsPlacedAfter).toBeGreaterThan(0);
    const off = lastAttempt(undefined);
    expect(off.demoted).toBe(1);
    expect(off.firstAttemptsPlacedAfter).toBe(0);
  });

  it("counts clients without the retry header the same way: only the fingerprint matters", () => {
    const { core } = standingQueue(2);
    core.submit("sdk.0", { fingerprint: "sdk" });
    core.submit("sdk.1", { fingerprint: "sdk", retry: true });
    core.submit("curl.0", { fingerprint: "curl" });
    core.submit("curl.1", { fingerprint: "curl" });
    expect(core.submit("sdk.2", { fingerprint: "sdk", retry: true }).kind).toBe("queued");
    expect(core.submit("curl.2", { fingerprint: "curl" }).kind).toBe("queued");
    // A claimed retry count does not make a first attempt a last one.
    expect(core.submit("forged.0", { fingerprint: "forged", retry: true }).kind).toBe("rejected");
  });

  it("still refuses a last attempt at the queue's hard bound", () => {
    const { core } = standingQueue(2, 3);
    expect(core.queueDepth).toBe(3);
    for (let i = 0; i < 3; i++) expect(core.submit(`lc.${i}`, { fingerprint: "lc" }).kind).toBe("rejected");
  });

  it("off (the default), a request refused twice is refused again; on, requests never refused fare alike", () => {
    const off = standingQueue();
    off.core.submit("lc.0", { fingerprint: "lc" });
    off.core.submit("lc.1", { fingerprint: "lc" });
    expect(off.core.submit("lc.2", { fingerprint: "lc" }).kind).toBe("rejected");
    expect(standingQueue(2).kinds).toEqual(off.kinds);
    expect(off.kinds).toContain("rejected");
  });

  it("is off in the configuration's defaults", () => {
    const config = parseConfig({ deployments: { m: { replicas: ["http://127.0.0.1:1"] } } });
    const deployment = config.deployments.m;
    if (!deployment) throw new Error("no deployment");
    expect(deployment.booking.lastChanceAfterRefusals).toBeNull();
    expect(routerOptionsFor(deployment).booking?.lastChanceAfterRefusals).toBeUndefined();
    const on = parseConfig({
      deployments: { m: { replicas: ["http://127.0.0.1:1"], booking: { lastChanceAfterRefusals: 2 } } },
    });
    expect(on.deployments.m && routerOptionsFor(on.deployments.m).booking?.lastChanceAfterRefusals).toBe(2);
  });
});

describe("RefusalCounts", () => {
  it("remembers at most its capacity, the least recently refused forgotten first", () => {
    const counts = new RefusalCounts(3);
    counts.refused("a");
    counts.refused("a");
    counts.refused("b");
    counts.refused("c");
    counts.refused("a"); // refused again: now the most recent
    counts.refused("d"); // "b" is forgotten
    expect(counts.tracked).toBe(3);
    expect([counts.of("a"), counts.of("b"), counts.of("c"), counts.of("d")]).toEqual([3, 0, 1, 1]);
    for (let i = 0; i < 10_000; i++) counts.refused(`x${i}`);
    expect(counts.tracked).toBe(3);
  });

  it("forgets an admitted request and ignores requests without a fingerprint", () => {
    const counts = new RefusalCounts();
    counts.refused("a");
    counts.forget("a");
    counts.refused(undefined);
    expect(counts.of("a")).toBe(0);
    expect(counts.of(undefined)).toBe(0);
    expect(counts.tracked).toBe(0);
  });
});
