import { describe, expect, it } from "vitest";
import type { BookingAdmission } from "../../../src/core/router-options";
import { routerSettingsSchema } from "../../../src/core/router-schema";
import { standingQueueRouter } from "../../support/standing-queue";

/**
 * `booked_capacity` with a 1 s delay target (standing after 10 s) on a 40-deep queue, two drains a second: ten
 * arrivals a second for 16 s make the queue stand; then two of the burst's refused requests come back each second
 * beside one new arrival every other second. Returns the outcomes of the new arrivals in each phase.
 */
function burstThenTrough(freshPastTargetShare: number | undefined) {
  const booking: BookingAdmission = {
    queueDelayTargetS: 1,
    standingIntervalS: 10,
    maxHeldRoomShare: 0,
    drainingOfferedShare: 1,
    demoteAfterS: 3,
    freshNewestShare: 1,
    freshNewestWhen: "standing",
  };
  if (freshPastTargetShare !== undefined) booking.freshPastTargetShare = freshPastTargetShare;
  const { core, run, advance, placeOne, placed, kinds } = standingQueueRouter(booking, { maxQueuedRequests: 40 });
  run(16);
  const lateInBurst = kinds.slice(-20); // the last two seconds' arrivals
  const refused = kinds.flatMap((kind, n) => (kind === "rejected" ? [`s${n}`] : []));
  const trough: string[] = [];
  let placedNextAfterQueued = 0;
  for (let i = 0; i < 20; i++) {
    advance(500);
    placeOne();
    const back = refused.shift() as string;
    core.submit(`${back}.1`, { fingerprint: back, retry: true });
    if (i % 2 === 1) {
      const kind = core.submit(`f${i}`, { fingerprint: `f${i}` }).kind;
      trough.push(kind);
      if (kind === "queued" && placeOne() && placed.at(-1) === `f${i}`) placedNextAfterQueued += 1;
    }
  }
  return { lateInBurst, trough, placedNextAfterQueued };
}

describe("booking.freshPastTargetShare (an option)", () => {
  it("off: as the overload gives way, new arrivals are refused for the standing queue's depth", () => {
    expect(burstThenTrough(undefined).trough.slice(-6)).toContain("rejected");
  });

  it("on: a request never refused joins past the delay target while such requests fall short of the drain rate", () => {
    const on = burstThenTrough(1);
    // Once the burst's arrivals have left the 5 s window the rate is read over, every one joins...
    expect(on.trough.slice(-6)).toEqual(Array(6).fill("queued"));
    // ...and, adaptive LIFO while the queue stands, goes first, ahead of the queue it joined past.
    expect(on.placedNextAfterQueued).toBe(on.trough.filter((k) => k === "queued").length);
  });

  it("on: while new arrivals exceed the drain rate (the overload itself), the delay target still cuts them", () => {
    expect(burstThenTrough(1).lateInBurst).toContain("rejected");
    expect(burstThenTrough(1).lateInBurst).toEqual(burstThenTrough(undefined).lateInBurst);
  });

  it("is off in a deployment's settings unless set, and refuses a share out of range", () => {
    const parsed = routerSettingsSchema.parse({ backpressure: { retryAfterPolicy: "booked_capacity" } });
    expect(parsed.booking.freshPastTargetShare).toBeNull();
    expect(() => routerSettingsSchema.parse({ booking: { freshPastTargetShare: 0 } })).toThrow();
  });
});
