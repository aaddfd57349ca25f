import { describe, expect, it } from "vitest";
import { type AcquireResult, RouterDriver, type RouterDriverIO } from "../../../src/core/router-driver";
import { DEFAULT_BOOKING_ADMISSION } from "../../../src/core/router-options";
import { routerOptions } from "../../support/router-options";
import { standingQueueRouter } from "../../support/standing-queue";

// The edge asks the router again with the same ticket when its first call failed on the way back (`acquireSlot`):
// the router may still hold that ticket in its queue, or may have dequeued it for a cancel that came in between.
// Found by helper-75's review of the router's interleavings; both were left at stop 72.
describe("an acquire asked again with the same ticket", () => {
  it("while its ticket still waits counts no second arrival (the ledger's fresh arrivals, the next hints)", () => {
    const once = standingQueueRouter(DEFAULT_BOOKING_ADMISSION);
    const twice = standingQueueRouter(DEFAULT_BOOKING_ADMISSION);
    let reasked = 0;
    for (let step = 0; step < 60; step++) {
      once.run(0.5);
      twice.run(0.5);
      // The twin hears the newest waiting ticket's acquire five times more, every half second.
      const ticket = `s${twice.kinds.lastIndexOf("queued")}`;
      if (!twice.core.isQueued(ticket)) continue;
      for (let i = 0; i < 5; i++) expect(twice.core.submit(ticket, { fingerprint: ticket }).kind).toBe("queued");
      reasked += 1;
    }
    expect(reasked).toBeGreaterThan(30);
    expect(twice.core.ledgerView()).toEqual(once.core.ledgerView());
    expect(twice.kinds).toEqual(once.kinds);
    expect(twice.placed).toEqual(once.placed);
  });

  it("after a cancel dequeued its ticket is answered cancelled, not queued again", () => {
    let now = 0;
    const io: RouterDriverIO = {
      now: () => now,
      setTimer: () => () => {},
      defer: (run) => run(),
      // Both replicas report full: a queued request stays queued.
      probe: (_replica, _deadlineMs, answer) => answer(1),
    };
    const driver = new RouterDriver(
      {
        options: routerOptions(
          { replicas: ["a", "b"], maxQueuedRequests: 5, queueTimeoutMs: 10_000 },
          { retryAfterPolicy: "static", retryAfterS: 5, jitter: 0 },
        ),
        random: () => 0,
      },
      io,
    );
    const answers: AcquireResult[] = [];
    driver.acquire("t1", {}, (result) => answers.push(result));
    expect(driver.core.isQueued("t1")).toBe(true);
    driver.cancel("t1");
    expect(answers).toEqual([expect.objectContaining({ kind: "rejected", reason: "cancelled" })]);
    now += 10;
    // The re-ask of the failed first call arrives after the cancel: its client has gone.
    driver.acquire("t1", {}, (result) => answers.push(result));
    expect(answers).toHaveLength(2);
    expect(answers[1]).toMatchObject({ kind: "rejected", reason: "cancelled" });
    expect(driver.core.queueDepth).toBe(0);
  });
});
