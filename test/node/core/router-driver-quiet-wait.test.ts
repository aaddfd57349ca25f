import { describe, expect, it } from "vitest";
import { type AcquireResult, RouterDriver } from "../../../src/core/router-driver";
import { EventLoop } from "../../../src/sim/event-loop";
import { simRouterIO } from "../../../src/sim/sim-router";
import { routerOptions } from "../../support/router-options";

/**
 * A driver over the event loop: one one-slot replica, a 2-deep queue with a 30 s timeout, demotion after 3 s, a
 * demoted wait of 40 s, or `quietS` while no arrival is refused for a full queue; half the queue closed to SDK
 * clients (so that an SDK client can be refused while a demoted request waits, without pushing it out).
 */
function setup(quietS: number | undefined) {
  const loop = new EventLoop();
  const options = routerOptions(
    {
      replicas: ["r1"],
      unprobedReplicas: ["r1"],
      maxOngoingRequests: 1,
      maxQueuedRequests: 2,
      queueTimeoutMs: 30_000,
      booking: {
        queueDelayTargetS: undefined,
        standingIntervalS: 600,
        maxHeldRoomShare: 0,
        demoteAfterS: 3,
        demotedTimeoutS: 40,
        demotedQuietTimeoutS: quietS,
        sdkClientsLeaveShare: 0.5,
      },
    },
    { retryAfterPolicy: "booked_capacity", retryAfterS: undefined },
  );
  const driver = new RouterDriver(
    { options, random: () => 0.5 },
    simRouterIO(loop, { queueLength: () => undefined }, { probeMs: 2 }),
  );
  const answers = new Map<string, { atMs: number; result: AcquireResult }>();
  const acquire = (ticket: string, fingerprint: string, sdkClient = false) =>
    driver.acquire(ticket, { fingerprint, sdkClient }, (result) => answers.set(ticket, { atMs: loop.now(), result }));
  return { loop, driver, acquire, answers };
}

describe("RouterDriver with booking.demotedQuietTimeoutS", () => {
  // The expiry timer is armed for the earliest deadline when a request is queued or the timer fires; a refusal
  // queues nothing, yet it ends the quiet and brings a demoted request's deadline forward (65 s to 45 s here).
  it("a refusal for a full queue re-arms the expiry timer: the demoted request past its 40 s is shed then", () => {
    for (const quietS of [60, undefined]) {
      const { loop, driver, acquire, answers } = setup(quietS);
      acquire("busy", "busy");
      loop.run(10);
      expect(answers.get("busy")?.result.kind).toBe("admitted");
      acquire("q1", "q1");
      acquire("q2", "q2");
      acquire("old.0", "old");
      expect(answers.get("old.0")?.result).toMatchObject({ kind: "rejected", reason: "queue_full" });
      loop.run(5_000);
      driver.release("busy");
      loop.run(5_010);
      expect(answers.get("q1")?.result.kind).toBe("admitted");
      acquire("old.1", "old"); // demoted: first refused 5 s ago
      expect(answers.has("old.1")).toBe(false);
      loop.run(49_000);
      expect(answers.get("q2")?.result).toMatchObject({ kind: "rejected", reason: "queue_timeout" });
      if (quietS === undefined) {
        expect(answers.get("old.1")?.atMs).toBe(45_015); // queued at 5.01 s, 40 s and the timer's 5 ms
        continue;
      }
      expect(answers.has("old.1")).toBe(false); // quiet since 0 s: it may wait until 65 s
      loop.run(50_000);
      acquire("f1", "f1");
      acquire("sdk", "sdk", true);
      expect(answers.get("sdk")?.result).toMatchObject({ kind: "rejected", reason: "queue_full" });
      loop.run(51_000);
      expect(answers.get("old.1")).toMatchObject({
        atMs: 50_005,
        result: { kind: "rejected", reason: "queue_timeout" },
      });
    }
  });
});
