import { describe, expect, it } from "vitest";
import { announcesSdk } from "../../../src/core/client-horizon";
import { RouterCore } from "../../../src/core/router-core";
import type { BookingAdmission } from "../../../src/core/router-options";
import { routerOptionsFromSettings, routerSettingsSchema } from "../../../src/core/router-schema";
import { routerOptions } from "../../support/router-options";

/** `booked_capacity` on a 20-deep queue that nothing drains (no round is run), no delay target. */
function fullQueueRouter(sdkClientsLeaveShare: number | undefined) {
  const booking: BookingAdmission = { queueDelayTargetS: undefined, standingIntervalS: 30, maxHeldRoomShare: 0 };
  if (sdkClientsLeaveShare !== undefined) booking.sdkClientsLeaveShare = sdkClientsLeaveShare;
  return new RouterCore(
    routerOptions({ maxQueuedRequests: 20, booking }, { retryAfterPolicy: "booked_capacity", retryAfterS: undefined }),
    { now: () => 1_000 },
    () => 0.5,
  );
}

/** Submits `n` new requests of one kind of client and counts those queued. */
function submitMany(core: RouterCore, prefix: string, n: number, sdkClient: boolean): number {
  let queued = 0;
  for (let i = 0; i < n; i++)
    if (core.submit(`${prefix}${i}`, { fingerprint: `${prefix}${i}`, sdkClient }).kind === "queued") queued += 1;
  return queued;
}

describe("booking.sdkClientsLeaveShare", () => {
  it("keeps that share of the queue from SDK clients for clients without SDK headers", () => {
    const core = fullQueueRouter(0.1);
    // The first is placed at once (work-conserving); the queue then takes SDK clients up to 90% of its 20 places.
    expect(submitMany(core, "sdk", 30, true)).toBe(18);
    expect(core.queueDepth).toBe(18);
    // The last two places are left to clients without SDK headers, and then the bound refuses them too.
    expect(submitMany(core, "plain", 5, false)).toBe(2);
    expect(core.queueDepth).toBe(20);
  });

  it("keeps 5% by default: a deployment's 20-deep queue takes 19 SDK clients and leaves one place", () => {
    const settings = routerSettingsSchema.parse({
      maxOngoingRequests: 1,
      maxQueuedRequests: 20,
      backpressure: { retryAfterPolicy: "booked_capacity" },
    });
    const core = new RouterCore(routerOptionsFromSettings(["a"], settings), { now: () => 1_000 }, () => 0.5);
    // One placed at once (not counted), then 19 queued: 20 x 0.95 = 19 places are open to SDK clients.
    expect(submitMany(core, "sdk", 30, true)).toBe(19);
    expect(core.queueDepth).toBe(19);
    expect(submitMany(core, "plain", 5, false)).toBe(1);
  });

  it("changes nothing when off: SDK clients take every place", () => {
    for (const share of [undefined, 0]) {
      const core = fullQueueRouter(share);
      expect(submitMany(core, "sdk", 30, true)).toBe(20);
      expect(submitMany(core, "plain", 5, false)).toBe(0);
    }
  });

  it("refuses an SDK client it holds back as a full queue would: 429, queue_full", () => {
    const core = fullQueueRouter(0.5);
    submitMany(core, "sdk", 10, true);
    const refused = core.submit("late", { fingerprint: "late", sdkClient: true });
    expect(refused.kind).toBe("rejected");
    if (refused.kind === "rejected") {
      expect(refused.rejection.record.reason).toBe("queue_full");
      expect(refused.rejection.statusCode).toBe(429);
    }
  });
});

describe("announcesSdk", () => {
  it("is true for any x-stainless-lang, false without one", () => {
    expect(announcesSdk({ lang: "js" })).toBe(true);
    expect(announcesSdk({ lang: "python", packageVersion: "1.99.0" })).toBe(true);
    expect(announcesSdk({ lang: " " })).toBe(false);
    expect(announcesSdk({})).toBe(false);
  });
});
