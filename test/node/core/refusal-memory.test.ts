import { describe, expect, it } from "vitest";
import type { BookingAdmission } from "../../../src/core/router-options";
import { parseConfig, routerOptionsFor } from "../../../src/edge/config";
import { standingQueueRouter } from "../../support/standing-queue";

/**
 * `booked_capacity` over a queue that stands (two drains a second, five new requests a second, a 1 s delay target)
 * with a 20 s queue timeout: a demoted request waits behind the fresh ones and is shed when its wait runs out.
 */
function standingQueue(forgetRefusalsWhenQueued?: boolean) {
  const booking: BookingAdmission = {
    queueDelayTargetS: 1,
    standingIntervalS: 10,
    maxHeldRoomShare: 0,
    demoteAfterS: 3,
    ...(forgetRefusalsWhenQueued !== undefined ? { forgetRefusalsWhenQueued } : {}),
  };
  const router = standingQueueRouter(booking, { queueTimeoutMs: 20_000 });
  router.run(30);
  return router;
}

/**
 * One request's three attempts: refused; back 5 s later, demoted and queued, then shed at the queue timeout (with
 * what had filled the queue before it stood); back a second later, while new arrivals fill the queue to the delay
 * target again. What its third attempt gets, and whether it was demoted.
 */
function thirdAttempt(forgetRefusalsWhenQueued?: boolean) {
  const { core, run } = standingQueue(forgetRefusalsWhenQueued);
  expect(core.submit("r.0", { fingerprint: "r" }).kind).toBe("rejected");
  run(5);
  const demotedBefore = core.stats().demoted;
  expect(core.submit("r.1", { fingerprint: "r" }).kind).toBe("queued");
  expect(core.stats().demoted).toBe(demotedBefore + 1);
  run(21);
  expect(core.expire().timedOut.map((t) => t.ticket)).toContain("r.1");
  run(1);
  const demoted = core.stats().demoted;
  const kind = core.submit("r.2", { fingerprint: "r" }).kind;
  return { kind, demoted: core.stats().demoted - demoted };
}

describe("booking.forgetRefusalsWhenQueued", () => {
  it("off (the default), a request shed from the queue keeps its refusals: back at once, it is still demoted", () => {
    // First refused 27 s before its third attempt: it gives way, as any retry made at a hint does.
    expect(thirdAttempt()).toEqual({ kind: "queued", demoted: 1 });
  });

  it("on (as until 2026-12-05), the queued request was forgotten: back at once, it counts as first refused at the timeout", () => {
    // Refused less than `demoteAfterS` ago as far as the router remembers: not demoted, and the delay target refuses it.
    expect(thirdAttempt(true)).toEqual({ kind: "rejected", demoted: 0 });
  });

  it("forgets a request once it is placed: the same request sent again later starts afresh", () => {
    const { core, run, placeOne } = standingQueue();
    expect(core.submit("r.0", { fingerprint: "r" }).kind).toBe("rejected");
    run(5);
    const demoted = core.stats().demoted;
    expect(core.submit("r.1", { fingerprint: "r" }).kind).toBe("queued");
    expect(core.stats().demoted).toBe(demoted + 1);
    // The fleet drains the whole queue, the demoted request with it; one new arrival waits.
    while (placeOne());
    expect(core.submit("other", { fingerprint: "other" }).kind).toBe("queued");
    // The same body again (a new request by its fingerprint) is a fresh arrival; still remembered, it would have been
    // demoted (first refused 5 s before).
    expect(core.submit("r.2", { fingerprint: "r" }).kind).toBe("queued");
    expect(core.stats().demoted).toBe(demoted + 1);
  });

  it("is off in the configuration's defaults, and can be turned on", () => {
    const config = parseConfig({ deployments: { m: { replicas: ["http://127.0.0.1:1"] } } });
    const deployment = config.deployments.m;
    if (!deployment) throw new Error("no deployment");
    expect(deployment.booking.forgetRefusalsWhenQueued).toBe(false);
    expect(routerOptionsFor(deployment).booking?.forgetRefusalsWhenQueued).toBeUndefined();
    const on = parseConfig({
      deployments: { m: { replicas: ["http://127.0.0.1:1"], booking: { forgetRefusalsWhenQueued: true } } },
    });
    expect(on.deployments.m && routerOptionsFor(on.deployments.m).booking?.forgetRefusalsWhenQueued).toBe(true);
  });
});
