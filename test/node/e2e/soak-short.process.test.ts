import { describe, expect, it } from "vitest";
import { runSoak } from "../../../src/bench/soak/run-soak";

/** The soak's short form (the full one is `npm run soak`): overload, idle, then nothing lost or leaked. */
describe("soak, short form", () => {
  it("answers every request (served, or refused with a valid Retry-After) and leaks nothing", async () => {
    const report = await runSoak({
      replicas: 2,
      maxOngoingRequests: 2,
      maxQueuedRequests: 8,
      maxTokens: 16,
      engineSpeed: 2,
      overload: 8,
      durationS: 4,
      idleS: 2,
      maxRequests: 3_000,
      // A request hung past this fails the test with its reason (lostExample) before the test's own timeout.
      requestTimeoutS: 45,
    });
    expect(report.sent).toBeGreaterThan(0);
    expect(report.served).toBeGreaterThan(0);
    expect(report.refused).toBeGreaterThan(0);
    expect(report.lost, report.lostExample).toBe(0);
    expect(report.refusedWithoutValidHint, report.invalidHintExample).toBe(0);
    expect(report.otherStatus).toEqual({});
    // wrangler dev's proxy may answer a POST itself when a reused connection fails (not spillway's answer).
    expect(report.served + report.refused + report.devProxyRestarts).toBe(report.sent);
    expect(report.after).toEqual({
      queueDepth: 0,
      activeLeases: 0,
      routerWaiters: 0,
      engineRunning: 0,
      engineWaiting: 0,
    });
  }, 120_000);
});
