import { describe, expect, it } from "vitest";
import {
  CapacityBooking,
  DEFAULT_CAPACITY_BOOKING_OPTIONS,
  refilledDrainS,
  STALE_DUE_ENTRIES,
} from "../../../src/core/capacity-booking";
import { clientHorizonS } from "../../../src/core/client-horizon";
import { RETRY_AFTER_POLICIES } from "../../../src/core/retry-after";
import { RouterCore } from "../../../src/core/router-core";
import type { BookingAdmission, RouterOptions } from "../../../src/core/router-options";
import { parseConfig } from "../../../src/edge/config";
import { routerOptions } from "../../support/router-options";

const opts = DEFAULT_CAPACITY_BOOKING_OPTIONS;

/** A ledger that has seen `freshPerS` fresh arrivals a second for `seconds` seconds. */
function ledgerWithBaseline(freshPerS: number, seconds: number, options: typeof opts = opts): CapacityBooking {
  const ledger = new CapacityBooking(options, 0);
  for (let s = 0; s < seconds; s++) for (let k = 0; k < freshPerS; k++) ledger.onFresh(s * 1000 + 1);
  return ledger;
}

/**
 * Overloads on a ledger that has seen 10 fresh arrivals a second for 30 s, at a drain rate of 10/s: fresh arrivals at
 * the drain rate every second, so no second has room. Refusals each second from `fromS` to `toS` make one overload;
 * a spell of more than burstQuietS (5 s) without one ends it. Seconds go forward only, from 30.
 */
function overloadsOn(options: typeof opts = opts) {
  const ledger = ledgerWithBaseline(10, 30, options);
  const signals = { queueDepth: 0, drainRate: 10 };
  let second = 30;
  const overload = (fromS: number, toS: number) => {
    for (; second <= toS; second++) {
      for (let k = 0; k < 10; k++) ledger.onFresh(second * 1000 + 1);
      if (second >= fromS && second < toS) ledger.hint(second * 1000, signals, 60, () => 0.5, { first: false });
    }
  };
  return { ledger, signals, overload };
}

describe("CapacityBooking (the booked_capacity ledger)", () => {
  it("holds a bounded number of due entries under a flood of refusals: one request refused again and again, and more requests than maxBookings", () => {
    const ledger = new CapacityBooking(opts, 0);
    const hint = { delayS: 30, promised: false };
    // Before: each booking left its heap entry until its due instant lapsed (about 2 minutes here), 200 000 entries
    // for one booking.
    for (let i = 0; i < 200_000; i++) ledger.book("again", 500, hint);
    expect(ledger.outstanding).toBe(1);
    expect(ledger.dueEntries).toBeLessThanOrEqual(2 * ledger.outstanding + STALE_DUE_ENTRIES);
    for (let i = 0; i < 200_000; i++) ledger.book(`r${i}`, 600, hint);
    expect(ledger.outstanding).toBe(opts.maxBookings);
    expect(ledger.dueEntries).toBeLessThanOrEqual(2 * opts.maxBookings + STALE_DUE_ENTRIES);
    // The bookings kept are the latest, and each is still claimable: nothing live was dropped with the stale.
    expect(ledger.claim(`r${199_999}`, 30_600)).toBeDefined();
    expect(ledger.claim(`r${200_000 - opts.maxBookings}`, 30_600)).toBeDefined();
  });

  it("spreads a burst of refusals over future seconds, the spare capacity of each (drain minus baseline)", () => {
    const ledger = ledgerWithBaseline(4, 30); // baseline 4/s
    const nowMs = 30_000;
    const hints = Array.from({ length: 24 }, (_, i) => {
      const hint = ledger.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
      if (!hint) throw new Error("no hint");
      ledger.book(`r${i}`, nowMs, hint);
      return hint;
    });
    expect(hints.every((h) => h.promised)).toBe(true);
    const perSecond = new Map<number, number>();
    for (const h of hints) perSecond.set(Math.floor(h.delayS), (perSecond.get(Math.floor(h.delayS)) ?? 0) + 1);
    // Spare = 10 - 4 = 6 promises a second: 24 refusals take four seconds, starting 1 s away.
    expect([...perSecond.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
    for (const n of perSecond.values()) expect(n).toBeLessThanOrEqual(Math.ceil(6 / 0.5));
    expect(Math.min(...hints.map((h) => h.delayS))).toBeGreaterThanOrEqual(1);
  });

  it("with fresh arrivals known in advance, promises go to the seconds they leave free, not the forecast's", () => {
    // Known: the drain rate's worth of fresh arrivals until t = 40 s, none after. The forecast alone (baseline 4/s)
    // would promise from 31 s on.
    const ledger = new CapacityBooking(opts, 0, (tS) => (tS < 40 ? 10 : 0));
    for (let s = 0; s < 30; s++) for (let k = 0; k < 4; k++) ledger.onFresh(s * 1000 + 1);
    const hint = ledger.hint(30_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
    expect(hint?.promised).toBe(true);
    expect(hint?.delayS).toBeGreaterThanOrEqual(10);
    expect(hint?.delayS).toBeLessThan(11);
    const forecast = ledgerWithBaseline(4, 30).hint(30_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
    expect(forecast?.delayS).toBeLessThan(2);
  });

  it("a burst under way fades out of the forecast (burstFadeS): its first seconds get fewer promises", () => {
    const delaysWith = (burstFadeS: number, burstPerS: number) => {
      // The fade alone: no overload floor, which would lift the baseline to the burst's own rate here.
      const ledger = new CapacityBooking({ ...opts, burstFadeS, overloadFloorS: 0 }, 0);
      for (let s = 0; s < 70; s++) for (let k = 0; k < (s >= 60 ? burstPerS : 2); k++) ledger.onFresh(s * 1000 + 1); // 2/s, then a burst
      return Array.from({ length: 20 }, (_, i) => {
        const hint = ledger.hint(70_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 70_000, hint);
        return Math.floor(hint.delayS);
      });
    };
    const inFirstSecond = (delays: number[]) => delays.filter((d) => d === 1).length;
    // Without the fade the forecast is the baseline (2/s): 8 promises a second from the first.
    expect(inFirstSecond(delaysWith(0, 12))).toBe(8);
    // With it, the burst's excess (its smoothed rate above 2/s) is still forecast a second ahead: fewer.
    expect(inFirstSecond(delaysWith(5, 12))).toBeLessThan(8);
    expect(Math.max(...delaysWith(5, 12))).toBeGreaterThan(Math.max(...delaysWith(0, 12)));
    // No burst, no difference.
    expect(delaysWith(5, 2)).toEqual(delaysWith(0, 2));
  });

  it("a burst's first second already counts (burstAlpha): fewer promises land in the seconds just after it", () => {
    const earliest = (burstAlpha: number) => {
      const ledger = new CapacityBooking({ ...opts, burstAlpha }, 0);
      // 2/s for a minute, then one second of a 12/s burst; refusals at its end.
      for (let s = 0; s < 61; s++) for (let k = 0; k < (s === 60 ? 12 : 2); k++) ledger.onFresh(s * 1000 + 1);
      return Array.from({ length: 12 }, (_, i) => {
        const hint = ledger.hint(61_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 61_000, hint);
        return Math.floor(hint.delayS);
      });
    };
    const within = (delays: number[], s: number) => delays.filter((d) => d <= s).length;
    // Smoothed at 0.1 the burst has raised the rate by 1/s: the whole spare 8/s is promised in the next second.
    expect(within(earliest(0.1), 1)).toBe(8);
    expect(within(earliest(0.3), 1)).toBeLessThan(8);
  });

  it("a burst that has lasted longer is forecast to last longer (burstPersistence): its promises land later", () => {
    // 2/s for a minute, then 12/s with a refusal every second from the burst's start (the router refuses only in
    // overload: the refusals date the burst); then 20 refusals at once, `burstS` seconds into it.
    const delaysAfter = (burstPersistence: number, burstS: number, quietS = 0) => {
      const ledger = new CapacityBooking({ ...opts, burstPersistence }, 0);
      const endS = 60 + burstS;
      for (let s = 0; s < endS; s++) {
        for (let k = 0; k < (s >= 60 ? 12 : 2); k++) ledger.onFresh(s * 1000 + 1);
        if (s >= 60 && s < endS - quietS) ledger.hint(s * 1000 + 2, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
      }
      return Array.from({ length: 20 }, (_, i) => {
        const hint = ledger.hint(endS * 1000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, endS * 1000, hint);
        return hint.delayS;
      });
    };
    const latest = (delays: number[]) => Math.max(...delays);
    // Twenty seconds into a burst the fade's time constant is 20 s, not 5 s: the same refusals are told later.
    expect(latest(delaysAfter(1, 20))).toBeGreaterThan(latest(delaysAfter(0, 20)) + 5);
    // Two seconds into it the age is below burstFadeS: the same promises as without.
    expect(delaysAfter(1, 2)).toEqual(delaysAfter(0, 2));
    // The same burst without a refusal for longer than burstQuietS before these: a new overload, age 0.
    expect(delaysAfter(1, 20, opts.burstQuietS + 2)).toEqual(delaysAfter(0, 20, opts.burstQuietS + 2));
  });

  it("ordinary traffic after a quiet spell is no burst for burstPersistence: the age is dated by refusals", () => {
    // A quiet minute (the baseline falls to nothing), then 8/s for 10 s without a refusal, then refusals.
    const delays = (burstPersistence: number) => {
      const ledger = new CapacityBooking({ ...opts, burstPersistence }, 0);
      ledger.onFresh(1);
      for (let s = 60; s < 70; s++) for (let k = 0; k < 8; k++) ledger.onFresh(s * 1000 + 1);
      return Array.from({ length: 20 }, (_, i) => {
        const hint = ledger.hint(70_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 70_000, hint);
        return hint.delayS;
      });
    };
    // Dated by the fresh rate's rise over the (quiet) baseline, these 10 s would count as a burst's age.
    expect(delays(1)).toEqual(delays(0));
  });

  it("queueRefill (an option): a burst under way refills the queue ahead, so its first promise comes later", () => {
    // 2/s for a minute, then 30/s for 3 s; a refusal finds 20 waiting, the queue draining at 10/s.
    const firstDelay = (queueRefill: boolean, burstPerS: number, queueDepth = 20) => {
      const ledger = new CapacityBooking({ ...opts, queueRefill }, 0);
      for (let s = 0; s < 63; s++) for (let k = 0; k < (s >= 60 ? burstPerS : 2); k++) ledger.onFresh(s * 1000 + 1);
      return ledger.hint(63_000, { queueDepth, drainRate: 10 }, 60, () => 0)?.delayS ?? Number.NaN;
    };
    // Off, the queue is taken to drain at once through what the baseline leaves (20 / (10 - 2) = 2.5 s) while the
    // burst's forecast arrivals still fill those seconds; on, it stays full until they fall below the drain rate.
    expect(firstDelay(true, 30)).toBeGreaterThan(firstDelay(false, 30) + 3);
    // No queue to refill, or no burst to refill it: the same promise.
    expect(firstDelay(true, 30, 0)).toBe(firstDelay(false, 30, 0));
    expect(firstDelay(true, 2)).toBe(firstDelay(false, 2));
  });

  it("overloadFloorS (an option): after a quiet spell, the traffic seen just before a burst floors the baseline", () => {
    // 50 s quiet, then 5/s for 20 s and a burst of 30/s for 2 s; 30 refusals at once, the queue draining 10/s.
    const latestDelay = (overloadFloorS: number, leadPerS: number) => {
      const ledger = new CapacityBooking({ ...opts, overloadFloorS }, 0);
      for (let s = 0; s < 72; s++) {
        const perS = s < 50 ? leadPerS : s < 70 ? 5 : 30;
        for (let k = 0; k < perS; k++) ledger.onFresh(s * 1000 + 1);
      }
      const delays = Array.from({ length: 30 }, (_, i) => {
        const hint = ledger.hint(72_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 72_000, hint);
        return hint.delayS;
      });
      return Math.max(...delays);
    };
    // Quiet lead-in: the baseline (the lowest rate of the last minute) is zero and promises plan on the whole
    // 10/s; the floor keeps the 5/s seen before the burst, so the same 30 are spread over more seconds.
    expect(latestDelay(10, 0)).toBeGreaterThan(latestDelay(0, 0) + 2);
    expect(latestDelay(10, 0)).toBe(latestDelay(0, 5));
    // 5/s all along: the baseline is already 5/s, the floor changes nothing.
    expect(latestDelay(10, 5)).toBe(latestDelay(0, 5));
  });

  it("overloadFloorQuantile: the median of the seconds before a burst reads the traffic a climbing rate hides", () => {
    // 50 s quiet, then 8/s for only 10 s, and the burst's first refusal half a second into it: the fast-smoothed
    // rate climbs through those 10 s (2.4/s after the first, 7.8/s after the last), so their lowest is far below
    // 8/s and their median near it.
    const latestDelay = (overloadFloorQuantile: number) => {
      // No burst fade: the forecast is the floor alone, whatever `burstFadeS` the defaults have; the fast-smoothed
      // rates alone (`overloadFloorMovingS` 0: test/node/core/fresh-arrival-forecast.test.ts has the moving means).
      const ledger = new CapacityBooking({ ...opts, overloadFloorQuantile, burstFadeS: 0, overloadFloorMovingS: 0 }, 0);
      for (let s = 50; s < 60; s++) for (let k = 0; k < 8; k++) ledger.onFresh(s * 1000 + 1);
      const delays = Array.from({ length: 30 }, (_, i) => {
        const hint = ledger.hint(60_500, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 60_500, hint);
        return hint.delayS;
      });
      return Math.max(...delays);
    };
    // The lowest (2.4/s) leaves 7.6 of the 10/s to promise, the median (7.1/s) 2.9: the same 30 refusals reach
    // 11 s away instead of 5.
    expect(latestDelay(0)).toBe(5);
    expect(latestDelay(0.5)).toBe(11);
  });

  it("by default a burst after a quiet spell books the seconds after it up to what ordinary traffic leaves", () => {
    // The end-to-end run's shape: quiet, 10 s of ordinary traffic at 8/s, then a 10 s burst at 50/s on a 16-deep
    // queue draining 17/s, two of every three arrivals refused and booked. What the traffic leaves after the burst
    // is 17 - 8 = 9 a second. With the lowest floor (2.4/s) those seconds were promised up to 14 (broken promises,
    // one more attempt each); with the median floor and a 5 s fade the first ones got 7 or 8 (idle capacity).
    const ledger = new CapacityBooking(opts, 0);
    for (let s = 50; s < 60; s++) for (let k = 0; k < 8; k++) ledger.onFresh(s * 1000 + k * 125);
    let refused = 0;
    for (let s = 60; s < 70; s++)
      for (let k = 0; k < 50; k++) {
        const t = s * 1000 + k * 20;
        ledger.onFresh(t);
        if (k % 3 === 0) continue;
        const hint = ledger.hint(t, { queueDepth: 16, drainRate: 17 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${refused++}`, t, hint);
      }
    const promised = Array.from({ length: 20 }, (_, i) => ledger.promisedAt(70_000, i));
    for (const n of promised) expect(n).toBeLessThanOrEqual(9 + 1);
    expect(promised.slice(0, 5).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5 * 9);
  });

  it("overloadFloorS: a deep queue's fill time is skipped, so the floor is the traffic before the overload", () => {
    // 50 s quiet, 4/s for 20 s, then 20/s for 12 s while a 100-deep queue fills (drain 10/s): the first refusal
    // comes 12 s into the overload, and the 10 s before it were all at 20/s.
    const ledger = new CapacityBooking(opts, 0);
    for (let s = 0; s < 82; s++) {
      const perS = s < 50 ? 0 : s < 70 ? 4 : 20;
      for (let k = 0; k < perS; k++) ledger.onFresh(s * 1000 + 1);
    }
    const hints = Array.from({ length: 10 }, (_, i) => {
      const hint = ledger.hint(82_000, { queueDepth: 100, drainRate: 10 }, 60, () => 0.5);
      if (!hint) throw new Error("no hint");
      ledger.book(`r${i}`, 82_000, hint);
      return hint;
    });
    // Read over those 10 s the floor (~20/s) would be above the drain: nothing to promise, every hint a best
    // effort. Read before the queue filled it is ~4/s: 6 promises a second once the queue has drained.
    expect(hints.every((h) => h.promised)).toBe(true);
    expect(Math.max(...hints.map((h) => h.delayS))).toBeLessThan(60);
  });
  it("overloadFloorSkipsRise (an option): a burst's first seconds before its first refusal are not the floor", () => {
    // 2/s for a minute, then 12/s: the fleet absorbs the burst's first 7 s, so the first refusal comes at 67 s, and
    // 7 of the 10 s before it are inside the burst. The drain rate is back at this router's share, 4.25/s.
    const refusals = (skipsRise: number) => {
      const ledger = new CapacityBooking({ ...opts, overloadFloorSkipsRise: skipsRise }, 0);
      for (let s = 0; s < 67; s++) {
        const perS = s < 60 ? 2 : 12;
        for (let k = 0; k < perS; k++) ledger.onFresh(s * 1000 + 1);
      }
      return Array.from({ length: 5 }, (_, i) => {
        const hint = ledger.hint(67_000, { queueDepth: 8, drainRate: 4.25 }, 60, () => 0.5);
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 67_000, hint);
        return hint;
      });
    };
    // Read over the window that ends at the refusal, the median is a burst rate above the drain: nothing to
    // promise, every hint a best effort (30 to 60 s for this young overload and 60 s horizon).
    expect(refusals(0).every((h) => !h.promised && h.delayS >= 30)).toBe(true);
    // Skipping the rise, the floor is the 2/s before it: promises within the horizon.
    const skipped = refusals(2);
    expect(skipped.every((h) => h.promised)).toBe(true);
    expect(Math.max(...skipped.map((h) => h.delayS))).toBeLessThan(30);
  });

  it("refilledDrainS: the queue stays full while arrivals exceed the drain, then drains through what they leave", () => {
    expect(refilledDrainS(20, 10, () => 2, 0.5, 125)).toBeCloseTo(2.5, 9);
    // Arrivals above the drain rate for good: it never drains within the ledger.
    expect(refilledDrainS(20, 10, () => 12, 0.5, 125)).toBe(125);
    // A burst fading from 20/s (2 + 18, time constant 5 s) falls below 10/s after 5 ln(18 / 8) = 4.05 s; the
    // drain that follows is slower than 8/s while the burst's tail lasts.
    const fading = refilledDrainS(20, 10, (t) => 2 + 18 * Math.exp(-t / 5), 0.5, 125);
    expect(fading).toBeGreaterThan(5 * Math.log(18 / 8) + 2.5);
    expect(fading).toBeLessThan(5 * Math.log(18 / 8) + 20 / 0.5);
    // Arrivals at the drain rate drain nothing but the floor.
    expect(refilledDrainS(20, 10, () => 9.75, 0.5, 125)).toBeCloseTo(20 / 0.5, 9);
  });

  it("horizonPackS (an option): a promise goes to the latest second with room that makes the same horizon", () => {
    /** A ledger with a 4/s baseline (6/s of a 10/s drain left for promises) and its hints at 30 s. */
    const hintsAt30 = (options: typeof opts, count: number, firstRefusedAtMs?: number) => {
      const ledger = new CapacityBooking(options, 0);
      for (let s = 0; s < 30; s++) for (let k = 0; k < 4; k++) ledger.onFresh(s * 1000 + 1);
      return Array.from({ length: count }, (_, i) => {
        const hint = ledger.hint(30_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5, { firstRefusedAtMs });
        if (!hint) throw new Error("no hint");
        ledger.book(`r${i}`, 30_000, hint);
        return Math.floor(hint.delayS);
      });
    };
    const packed = { ...opts, horizonPackS: 120 };
    // The earliest second with room (31 s) finishes within 15 s of the first refusal (30 s), and so does 39 s: the
    // last start that leaves packServiceS (5 s) before 45 s. Six promises fill 39 s; the seventh takes 38 s.
    expect(hintsAt30(opts, 7)).toEqual([1, 1, 1, 1, 1, 1, 2]);
    expect(hintsAt30(packed, 7)).toEqual([9, 9, 9, 9, 9, 9, 8]);
    // The horizon counts from the request's first refusal: refused first at 10 s, 31 s makes 30 s (40 s), so does 34 s.
    expect(hintsAt30(packed, 1, 10_000)).toEqual([4]);
    // Past every horizon (first refused 130 s ago) nothing is gained by waiting: the earliest second.
    expect(hintsAt30(packed, 1, -100_000)).toEqual([1]);
    // horizonPackS bounds the move.
    expect(hintsAt30({ ...packed, horizonPackS: 3 }, 1)).toEqual([4]);
  });

  it("starts after the current queue's drain", () => {
    const ledger = ledgerWithBaseline(0, 5);
    const hint = ledger.hint(5_000, { queueDepth: 50, drainRate: 10 }, 60, () => 0);
    expect(hint?.delayS).toBeGreaterThanOrEqual(5);
    expect(hint?.delayS).toBeLessThan(6.01);
  });

  it("the queue ahead drains only through what fresh arrivals leave: no promise lands while it still stands", () => {
    // Baseline 5/s of a 10/s drain: a 50-deep queue takes 10 s to drain, not 5 s (fresh arrivals keep coming).
    // Bookings at depth / drainRate refilled the queue as it drained, and fresh arrivals after a burst were refused.
    const ledger = ledgerWithBaseline(5, 30);
    const hint = ledger.hint(30_000, { queueDepth: 50, drainRate: 10 }, 60, () => 0);
    expect(hint?.promised).toBe(true);
    expect(hint?.delayS).toBeGreaterThanOrEqual(10);
    expect(hint?.delayS).toBeLessThan(11.01);
  });

  it("a promise is claimed only by its own fingerprint, within [due - 1 s, due + 3 s]", () => {
    const ledger = ledgerWithBaseline(0, 5);
    ledger.book("mine", 5_000, { delayS: 10, promised: true });
    expect(ledger.claim("someone-else", 15_000)).toBeUndefined();
    expect(ledger.claim(undefined, 15_000)).toBeUndefined();
    expect(ledger.claim("mine", 13_000)).toBeUndefined(); // 2 s early: not yet
    expect(ledger.holds("mine")).toBe(true);
    expect(ledger.claim("mine", 15_400)).toMatchObject({ promised: true });
    expect(ledger.holds("mine")).toBe(false);
    expect(ledger.claim("mine", 15_500)).toBeUndefined(); // taken once

    ledger.book("late", 20_000, { delayS: 5, promised: true });
    expect(ledger.claim("late", 28_500)).toBeUndefined(); // 3.5 s late: lapsed

    ledger.book("effort", 30_000, { delayS: 20, promised: false });
    expect(ledger.claim("effort", 50_000)).toMatchObject({ promised: false }); // a best effort: claimed, nothing promised
  });

  it("at maxBookings, a lapsed booking not yet swept goes before the oldest live one", () => {
    // Found by the ledger's property test: the cap evicted the oldest booking made, a live promise, while a lapsed
    // one (swept only when the ledger next moves to a new second) still counted towards the cap.
    const ledger = new CapacityBooking({ ...DEFAULT_CAPACITY_BOOKING_OPTIONS, maxBookings: 2 }, 0);
    ledger.book("far", 0, { delayS: 60, promised: true });
    ledger.book("near", 0, { delayS: 1.2, promised: true });
    ledger.onFresh(4_000); // the ledger moves to second 4: "near" (due 1.2 s, 3 s late at 4.2 s) has not lapsed yet
    ledger.book("new", 4_500, { delayS: 10, promised: true }); // now it has
    expect(ledger.holds("far")).toBe(true);
    expect(ledger.holds("near")).toBe(false);
    expect(ledger.holds("new")).toBe(true);
    expect(ledger.promiseOutcomes.noShow).toBe(1);
  });

  it("holds room for promises due now (scaled by the show rate), none for best-effort hints", () => {
    const ledger = ledgerWithBaseline(0, 5);
    for (let i = 0; i < 4; i++) ledger.book(`p${i}`, 5_000, { delayS: 10.5, promised: true });
    ledger.book("effort", 5_000, { delayS: 10.5, promised: false });
    expect(ledger.heldRoom(5_000)).toBe(0);
    const held = ledger.heldRoom(15_200);
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(Math.ceil(4 * ledger.showRate));
  });

  it("when no second within the horizon has room: a best effort spread over [end / 2, end], nothing booked", () => {
    const ledger = ledgerWithBaseline(9, 30); // baseline 9/s of a 10/s drain: 1/s left for retries
    const nowMs = 30_000;
    let effort = 0;
    const delays: number[] = [];
    for (let i = 0; i < 400; i++) {
      const hint = ledger.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => (i % 10) / 10);
      if (!hint) throw new Error("no hint");
      ledger.book(`r${i}`, nowMs, hint);
      if (!hint.promised) {
        effort += 1;
        delays.push(hint.delayS);
      }
    }
    expect(effort).toBeGreaterThan(200);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(30);
    expect(Math.max(...delays)).toBeLessThanOrEqual(60);
    expect(new Set(delays.map(Math.floor)).size).toBeGreaterThanOrEqual(5); // spread, not stacked on the cap
  });

  it("a best effort ends at the overload's age: within a minute for a young one, up to the horizon for a standing one", () => {
    // Fresh arrivals at the drain rate: no second has room, every hint is a best effort. One refusal a second
    // (never a quiet spell of burstQuietS) keeps the same overload going; its age is the time since the first. An
    // overload that recurs has a least end of its own (bestEffortRecurMinEndS, its test below): here it is the
    // lone overload's, so that the last overload shows its age starting again.
    const ledger = ledgerWithBaseline(10, 30, { ...opts, bestEffortRecurMinEndS: opts.bestEffortMinEndS });
    const bestEfforts = (atS: number, horizonS: number) =>
      [0, 0.5, 0.999].map((u) => {
        const hint = ledger.hint(atS * 1000, { queueDepth: 0, drainRate: 10 }, horizonS, () => u);
        if (!hint || hint.promised) throw new Error("expected a best effort");
        return hint.delayS;
      });
    const overloadFrom = (fromS: number, toS: number) => {
      for (let s = fromS; s <= toS; s++) {
        for (let k = 0; k < 10; k++) ledger.onFresh(s * 1000 + 1);
        ledger.hint(s * 1000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
      }
    };
    overloadFrom(30, 40); // 10 s old: an openai-node client (120 s) is sent 30 to 60 s away, not 60 to 120 s
    const young = bestEfforts(40, 120);
    expect(Math.min(...young)).toBeGreaterThanOrEqual(30);
    expect(Math.max(...young)).toBeLessThanOrEqual(60);
    expect(bestEfforts(40, 60)).toEqual(young); // the same for a 60 s horizon
    overloadFrom(41, 120); // 90 s old: [45, 90] s
    const older = bestEfforts(120, 120);
    expect(Math.min(...older)).toBeCloseTo(45, 6);
    expect(Math.max(...older)).toBeGreaterThan(89);
    expect(Math.max(...bestEfforts(120, 60))).toBeLessThanOrEqual(60); // never past the client's horizon
    overloadFrom(121, 300); // standing for 270 s: the horizon's second half, as before
    const standing = bestEfforts(300, 120);
    expect(Math.min(...standing)).toBeCloseTo(60, 6);
    expect(Math.max(...standing)).toBeLessThanOrEqual(120);
    // After a quiet spell the next refusal starts a new overload: back within a minute.
    for (let s = 301; s <= 310; s++) for (let k = 0; k < 10; k++) ledger.onFresh(s * 1000 + 1);
    expect(Math.max(...bestEfforts(310, 120))).toBeLessThanOrEqual(60);
  });

  it("a first refusal in a young overload that follows another closely is a probe of [probeS / 2, probeS], not a best effort", () => {
    const { ledger, signals, overload } = overloadsOn();
    const delays = (atS: number, first: boolean, horizonS = 60) =>
      [0, 0.5, 0.999].map((u) => {
        const hint = ledger.hint(atS * 1000, signals, horizonS, () => u, { first });
        if (!hint || hint.promised) throw new Error("expected no promise");
        return hint.delayS;
      });
    overload(30, 40); // the first overload: a first refusal still gets the best effort (nothing came before it)
    expect(Math.min(...delays(40, true))).toBeGreaterThanOrEqual(30);
    overload(60, 65); // began 20 s after the first ended, 5 s old
    const probe = delays(65, true);
    expect(opts.probeS).toBe(25);
    expect(probe[0]).toBeCloseTo(12.5, 6);
    expect(probe[1]).toBeCloseTo(18.75, 6);
    expect(probe[2]).toBeLessThanOrEqual(25);
    expect(delays(65, true, 120)).toEqual(probe); // whatever the client's horizon
    expect(Math.min(...delays(65, false))).toBeGreaterThanOrEqual(30); // a second refusal: the best effort
    overload(66, 95); // 35 s old: no longer young
    expect(Math.min(...delays(95, true))).toBeGreaterThanOrEqual(30);
    overload(300, 305); // began more than 120 s after the last one ended: a lone overload again
    expect(Math.min(...delays(305, true))).toBeGreaterThanOrEqual(30);
  });

  it("the probe replaces best efforts only: a first refusal with room in its horizon is promised as before", () => {
    const ledger = ledgerWithBaseline(4, 30); // baseline 4/s of a 10/s drain: room
    const signals = { queueDepth: 0, drainRate: 10 };
    ledger.hint(30_000, signals, 60, () => 0.5); // an overload...
    ledger.hint(50_000, signals, 60, () => 0.5); // ...and another 20 s later
    const hint = ledger.hint(51_000, signals, 60, () => 0.5, { first: true });
    expect(hint?.promised).toBe(true);
    expect(hint?.delayS).toBeLessThan(5);
  });

  it("probeS 0: no probe; probeRecurS Infinity: the first overload's first refusals probe too", () => {
    const refuse = (options: Partial<typeof opts>) => {
      const ledger = new CapacityBooking({ ...opts, ...options }, 0);
      for (let s = 0; s < 30; s++) for (let k = 0; k < 10; k++) ledger.onFresh(s * 1000 + 1);
      return ledger.hint(30_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5, { first: true })?.delayS;
    };
    expect(refuse({})).toBeGreaterThanOrEqual(30); // a first overload
    expect(refuse({ probeRecurS: Number.POSITIVE_INFINITY })).toBeCloseTo(0.75 * opts.probeS, 6);
    expect(refuse({ probeS: 0, probeRecurS: Number.POSITIVE_INFINITY })).toBeGreaterThanOrEqual(30);
  });

  it("probeBeyondS: a first refusal whose earliest room would answer it too late gets a probe, a later one the booking", () => {
    const ledgerWith = (options: Partial<typeof opts>) => {
      const ledger = new CapacityBooking({ ...opts, ...options }, 0);
      for (let s = 0; s < 30; s++) for (let k = 0; k < 4; k++) ledger.onFresh(s * 1000 + 1);
      return ledger;
    };
    // 4/s of a 10/s drain: the 240 queued ahead drain through the 6/s left, so the earliest room is ~40 s away.
    const deep = { queueDepth: 240, drainRate: 10 };
    const far = ledgerWith({}).hint(30_000, deep, 120, () => 0.5, { first: true });
    expect(far?.promised).toBe(true);
    expect(far?.delayS).toBeGreaterThan(30);
    const probing = ledgerWith({ probeBeyondS: 30 });
    const probe = probing.hint(30_000, deep, 120, () => 0.5, { first: true });
    expect(probe).toEqual({ delayS: 0.75 * opts.probeS, promised: false }); // uniform in [probeS / 2, probeS]
    // Refused again, it is booked; and a booking that answers within the bound is made as before.
    expect(probing.hint(45_000, deep, 120, () => 0.5, { first: false })?.promised).toBe(true);
    const near = probing.hint(46_000, { queueDepth: 12, drainRate: 10 }, 120, () => 0.5, { first: true });
    expect(near?.promised).toBe(true);
    expect(near?.delayS).toBeLessThan(30);
  });

  it("bestEffortRecurMinEndS: a best effort of at least that in an overload that recurs, the rest as before", () => {
    const { ledger, signals, overload } = overloadsOn({ ...opts, bestEffortRecurMinEndS: 120 });
    const delays = (atS: number, first: boolean, horizonS = 120) =>
      [0, 0.999].map((u) => ledger.hint(atS * 1000, signals, horizonS, () => u, { first })?.delayS as number);
    overload(30, 40); // a first overload, 10 s old: the best effort's end is bestEffortMinEndS (60 s)
    expect(delays(40, false)[0]).toBeCloseTo(30, 6);
    expect(delays(40, false)[1]).toBeLessThanOrEqual(60);
    overload(60, 65); // began 20 s after the first ended: it recurs, and its end is 120 s, 5 s old as it is
    expect(delays(65, false)[0]).toBeCloseTo(60, 6);
    expect(delays(65, false)[1]).toBeGreaterThan(119);
    expect(Math.max(...delays(65, false, 60))).toBeLessThanOrEqual(60); // never past the client's horizon
    expect(delays(65, true)[0]).toBeCloseTo(opts.probeS / 2, 6); // a first refusal in it still probes
    overload(300, 305); // began more than probeRecurS (120 s) after the last one ended: a lone overload again
    expect(delays(305, false)[1]).toBeLessThanOrEqual(60);
  });

  it("bestEffortMinEndS at or above the horizon: the horizon's second half whatever the age (the earlier rule)", () => {
    const ledger = new CapacityBooking({ ...opts, bestEffortMinEndS: 120 }, 0);
    for (let s = 0; s < 30; s++) for (let k = 0; k < 10; k++) ledger.onFresh(s * 1000 + 1);
    const delays = [0, 0.999].map((u) => ledger.hint(30_000, { queueDepth: 0, drainRate: 10 }, 120, () => u)?.delayS);
    expect(delays[0]).toBeCloseTo(60, 6);
    expect(delays[1]).toBeGreaterThan(119);
  });

  it("a client with a longer horizon is promised a second beyond 60 s rather than a best effort", () => {
    const ledger = ledgerWithBaseline(9, 30);
    const nowMs = 30_000;
    for (let i = 0; i < 400; i++) {
      const hint = ledger.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
      if (hint) ledger.book(`r${i}`, nowMs, hint);
    }
    const node = ledger.hint(
      nowMs,
      { queueDepth: 0, drainRate: 10 },
      clientHorizonS({ lang: "js", packageVersion: "6.49.0" }),
      () => 0.5,
    );
    expect(node?.promised).toBe(true);
    expect(node?.delayS).toBeGreaterThan(59);
    expect(node?.delayS).toBeLessThanOrEqual(120);
  });

  it("two-step (an option): beyond the horizon, a second up to two horizons away; the step is within the horizon", () => {
    const ledger = new CapacityBooking({ ...opts, twoStepHorizons: 2 }, 0);
    for (let s = 0; s < 30; s++) for (let k = 0; k < 9; k++) ledger.onFresh(s * 1000 + 1); // 1/s left
    const nowMs = 30_000;
    for (let i = 0; i < 59; i++) {
      const hint = ledger.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
      if (hint) ledger.book(`r${i}`, nowMs, hint);
    }
    const hint = ledger.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
    if (!hint?.dueS) throw new Error("expected a two-step promise");
    expect(hint.promised).toBe(true);
    expect(hint.dueS).toBeGreaterThan(60);
    expect(hint.dueS).toBeLessThanOrEqual(115);
    expect(hint.delayS).toBeLessThanOrEqual(60);
    expect(hint.dueS - hint.delayS).toBeLessThanOrEqual(60); // the second hint fits the horizon too
    ledger.book("two", nowMs, hint);
    // Back at the first step: not yet due, so it is told the rest (nothing re-booked), within its horizon.
    const stepMs = nowMs + hint.delayS * 1000;
    expect(ledger.claim("two", stepMs)).toBeUndefined();
    const rest = ledger.heldHint("two", stepMs, 60);
    expect(rest?.held).toBe(true);
    expect(rest?.delayS).toBeCloseTo(hint.dueS - hint.delayS, 6);
    expect(ledger.holds("two")).toBe(true);
    // The default makes no second step: a best effort instead.
    const plain = ledgerWithBaseline(9, 30);
    for (let i = 0; i < 60; i++) {
      const h = plain.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
      if (h) plain.book(`r${i}`, nowMs, h);
    }
    const effort = plain.hint(nowMs, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
    expect(effort?.promised).toBe(false);
    expect(effort?.dueS).toBeUndefined();
  });

  it("a request admitted before its booked instant gives its booked second back", () => {
    const ledger = ledgerWithBaseline(0, 5);
    ledger.book("early", 5_000, { delayS: 10, promised: true });
    expect(ledger.promisedAt(5_000, 10)).toBe(1);
    expect(ledger.heldHint("early", 7_000, 60)?.delayS).toBeCloseTo(8, 6);
    ledger.admittedEarly("early", 7_000);
    expect(ledger.holds("early")).toBe(false);
    expect(ledger.promisedAt(7_000, 8)).toBe(0);
    expect(ledger.heldHint("early", 7_500, 60)).toBeUndefined();
  });

  it("the baseline is the lowest smoothed fresh rate of the last minute: a burst does not raise it", () => {
    const ledger = ledgerWithBaseline(4, 60);
    for (let s = 60; s < 70; s++) for (let k = 0; k < 30; k++) ledger.onFresh(s * 1000 + 1);
    ledger.onFresh(70_001);
    expect(ledger.baseline).toBeGreaterThan(3);
    expect(ledger.baseline).toBeLessThan(4.5);
  });

  it("broken promises lower the trust (fewer promises a second); kept ones restore it", () => {
    const ledger = ledgerWithBaseline(0, 5);
    for (let i = 0; i < 10; i++) ledger.kept(false, 3);
    expect(ledger.trust).toBeCloseTo(Math.max(opts.minTrust, opts.trustLoss ** 10));
    for (let i = 0; i < 200; i++) ledger.kept(true, 3);
    expect(ledger.trust).toBe(1);
  });

  it("with trustBucketS, a broken promise lowers the trust only of promises made about as far ahead as it was", () => {
    /** The delay of the last of `n` promises made at once at a drain rate of 10/s, nothing queued. */
    const lastOf = (ledger: CapacityBooking, n: number): number => {
      let delayS = 0;
      for (let i = 0; i < n; i++) {
        const hint = ledger.hint(5_000, { queueDepth: 0, drainRate: 10 }, 60, () => 0.5);
        if (!hint?.promised) throw new Error(`hint ${i} was not a promise`);
        ledger.book(`r${i}`, 5_000, hint);
        delayS = hint.delayS;
      }
      return delayS;
    };
    const byLead = (b: number) => new CapacityBooking({ ...opts, trustBucketS: b }, 0);
    // Ten promises made 2 s ahead were broken: one trust (the default) falls to minTrust for every lead, 2 a second.
    const single = byLead(0);
    for (let i = 0; i < 10; i++) single.kept(false, 2);
    expect(lastOf(single, 40)).toBeGreaterThan(19);
    // By lead (4 s buckets), only the seconds less than 4 s ahead are at 2 a second; from 4 s on, 10 a second.
    const bucketed = byLead(4);
    for (let i = 0; i < 10; i++) bucketed.kept(false, 2);
    expect(bucketed.trust).toBeCloseTo(Math.max(opts.minTrust, opts.trustLoss ** 10));
    expect(lastOf(bucketed, 40)).toBeLessThan(8);
    // Broken 20 s ahead, the near seconds keep their full capacity: 40 promises within 5 s.
    const far = byLead(4);
    for (let i = 0; i < 10; i++) far.kept(false, 20);
    expect(lastOf(far, 40)).toBeLessThan(6);
    // Kept promises restore the bucket they were made in.
    for (let i = 0; i < 200; i++) far.kept(true, 20);
    expect(far.trust).toBe(1);
  });

  it("a claimed promise carries its lead: seconds from the hint to its booked instant", () => {
    const ledger = new CapacityBooking(opts, 0);
    ledger.book("a", 2_000, { delayS: 7.5, promised: true });
    ledger.book("b", 2_000, { delayS: 3, dueS: 40, promised: true });
    expect(ledger.claim("a", 9_600)).toEqual({ promised: true, leadS: 7.5 });
    expect(ledger.claim("b", 42_000)).toEqual({ promised: true, leadS: 40 });
  });

  it("promises that lapse unclaimed lower the show rate; memory stays bounded", () => {
    const small = new CapacityBooking({ ...opts, maxBookings: 50 }, 0);
    for (let i = 0; i < 200; i++) small.book(`r${i}`, 0, { delayS: 2 + (i % 5), promised: true });
    expect(small.outstanding).toBe(50);
    small.onFresh(30_000); // time passes: every promise lapses
    expect(small.outstanding).toBe(0);
    expect(small.showRate).toBeLessThan(0.2); // from the prior 0.9
  });

  it("no usable drain rate: no hint (the ladder falls back)", () => {
    const ledger = new CapacityBooking(opts, 0);
    expect(ledger.hint(0, { queueDepth: 3, drainRate: undefined }, 60, () => 0.5)).toBeUndefined();
    expect(ledger.hint(0, { queueDepth: 3, drainRate: 0 }, 60, () => 0.5)).toBeUndefined();
  });
});

describe("RouterCore with booked_capacity", () => {
  function setup(overrides: Partial<RouterOptions> = {}) {
    let now = 0;
    const options = routerOptions(
      {
        maxQueuedRequests: 5,
        queueTimeoutMs: 600_000,
        booking: { queueDelayTargetS: undefined, standingIntervalS: 10, maxHeldRoomShare: 1 },
        ...overrides,
      },
      { retryAfterPolicy: "booked_capacity", retryAfterS: undefined },
    );
    const core = new RouterCore(options, { now: () => now }, () => 0.5);
    const placeOne = () => {
      const plan = core.beginRound();
      if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
      const outcome = plan ? core.finishRound(plan) : undefined;
      if (outcome?.kind === "placed") core.release(outcome.ticket);
    };
    let n = 0;
    /** Two drains a second for 4 s, a fresh submit after each: a warm estimator, a full queue, a low baseline. */
    const warm = () => {
      for (let i = 0; i < 8; i++) {
        now += 500;
        placeOne();
        core.submit(`w${n++}`, { fingerprint: `w${n}` });
      }
      while (core.queueDepth < 5) core.submit(`w${n++}`, { fingerprint: `w${n}` });
    };
    return { core, tick: (ms: number) => (now += ms), placeOne, warm };
  }

  /**
   * Two drains a second and ten arrivals a second for 30 s, on a 100-deep queue with this admission: a queue that
   * stands. `onSubmit` sees each arrival's outcome and the step (half a second each) it came in.
   */
  function standingOverload(
    booking: BookingAdmission,
    onSubmit: (core: RouterCore, step: number, kind: string) => void,
  ) {
    const { core, tick, placeOne } = setup({ maxQueuedRequests: 100, booking });
    let n = 0;
    for (let step = 0; step < 60; step++) {
      tick(500);
      placeOne();
      for (let k = 0; k < 5; k++) onSubmit(core, step, core.submit(`s${n}`, { fingerprint: `s${n++}` }).kind);
    }
  }

  it("is the default policy", () => {
    expect(RETRY_AFTER_POLICIES).toContain("booked_capacity");
    const config = parseConfig({ deployments: { m: { replicas: ["http://127.0.0.1:1"] } } });
    expect(config.deployments.m?.backpressure.retryAfterPolicy).toBe("booked_capacity");
  });

  it("a forged x-stainless-retry-count on a first attempt claims no booking; the booked request gets its room", () => {
    const { core, warm, tick, placeOne } = setup();
    warm();
    const refused = core.submit("victim.0", { fingerprint: "victim" });
    if (refused.kind !== "rejected") throw new Error("expected a refusal");
    const hintMs = refused.rejection.decision.retryAfterMs as number;
    tick(hintMs);
    while (core.queueDepth > 4) placeOne();
    // One place is left, and it is held for the victim's promise: a first attempt claiming to be a retry is refused.
    const forged = core.submit("attacker.0", { fingerprint: "attacker", retry: true });
    expect(forged.kind).toBe("rejected");
    expect(core.submit("victim.1", { fingerprint: "victim" }).kind).toBe("queued");
  });

  it("a client without SDK headers claims its promise the same way (by fingerprint)", () => {
    const { core, warm, tick, placeOne } = setup();
    warm();
    const refused = core.submit("curl.0", { fingerprint: "curl" });
    if (refused.kind !== "rejected") throw new Error("expected a refusal");
    tick(Math.ceil((refused.rejection.decision.retryAfterMs as number) / 1000) * 1000); // whole-second Retry-After
    while (core.queueDepth > 4) placeOne();
    expect(core.submit("fresh", { fingerprint: "fresh" }).kind).toBe("rejected");
    expect(core.submit("curl.1", { fingerprint: "curl" }).kind).toBe("queued");
  });

  it("is work-conserving: nothing waiting and a free replica slot, a request is admitted whatever room is held", () => {
    const { core, warm, tick, placeOne } = setup();
    warm();
    for (let i = 0; i < 5; i++) core.submit(`b${i}`, { fingerprint: `b${i}` }); // promises held soon
    tick(1_500);
    while (core.queueDepth > 0) placeOne(); // drained; the replica's slot was released
    expect(core.submit("now", { fingerprint: "now" }).kind).toBe("queued");
  });

  it("counts hinted requests that come back, by outcome and timing (X in production)", () => {
    const { core, warm, tick, placeOne } = setup();
    warm();
    const refused = core.submit("x.0", { fingerprint: "x" });
    if (refused.kind !== "rejected") throw new Error("expected a refusal");
    tick(refused.rejection.decision.retryAfterMs as number);
    while (core.queueDepth > 4) placeOne();
    core.submit("x.1", { fingerprint: "x" });
    const early = core.submit("y.0", { fingerprint: "y" });
    expect(early.kind).toBe("rejected");
    core.submit("y.1", { fingerprint: "y" }); // at once: early
    const counts = core.stats().hintedRetries;
    expect(counts.admitted.on_time).toBe(1);
    expect(counts.refused.early + counts.admitted.early).toBe(1);
  });

  it("a known openai-node client may be told more than 60 s; others never", () => {
    const { core, warm } = setup({ maxQueuedRequests: 5 });
    warm();
    let max = 0;
    let maxNode = 0;
    for (let i = 0; i < 300; i++) {
      const r = core.submit(`p${i}`, { fingerprint: `p${i}` });
      if (r.kind === "rejected") max = Math.max(max, r.rejection.decision.retryAfterMs ?? 0);
      const js = core.submit(`j${i}`, { fingerprint: `j${i}`, clientHorizonS: 120 });
      if (js.kind === "rejected") maxNode = Math.max(maxNode, js.rejection.decision.retryAfterMs ?? 0);
    }
    expect(max).toBeLessThanOrEqual(60_000);
    expect(maxNode).toBeGreaterThan(60_000);
    expect(maxNode).toBeLessThanOrEqual(120_000);
  });

  it("horizonPackS: a retry's promise is packed within the horizon counted from its first refusal, not from now", () => {
    const { core, warm, tick, placeOne } = setup({ bookingLedger: { horizonPackS: 120 } });
    warm();
    const hintS = (ticket: string, fingerprint: string) => {
      const r = core.submit(ticket, { fingerprint });
      if (r.kind !== "rejected") throw new Error(`expected ${ticket} refused`);
      return (r.rejection.decision.retryAfterMs as number) / 1000;
    };
    const firstS = 4; // warm() ends at 4 s
    expect(hintS("a.0", "a")).toBeLessThan(27); // due before 31 s: it lapses by 34 s
    // 30 s at the same two drains a second (a queue that held requests for 30 s with none drained would read as a
    // stuck fleet: each busy second a sample of 0), the queue full again at the end.
    for (let i = 0; i < 60; i++) {
      tick(500);
      placeOne();
    }
    for (let i = 0; core.queueDepth < 5; i++) core.submit(`late${i}`, { fingerprint: `late${i}` });
    // a comes back at 34 s, its promise lapsed, and is refused again
    const retryS = 34 + hintS("a.1", "a");
    const freshS = 34 + hintS("b.0", "b"); // a first refusal at the same instant
    // a can no longer finish within 30 s of its first attempt, only within 60 s: its promise goes towards 64 - 5 s,
    // and leaves the seconds before it to b, which can still finish within 15 s (by 49 s).
    expect(retryS).toBeLessThan(firstS + 60 - DEFAULT_CAPACITY_BOOKING_OPTIONS.packServiceS);
    expect(freshS).toBeLessThan(34 + 15 - DEFAULT_CAPACITY_BOOKING_OPTIONS.packServiceS);
    expect(retryS).toBeGreaterThan(freshS);
  });

  it("booking.freshOrder next_horizon: a new arrival is placed before one queued past its 5 s horizon", () => {
    const placedFirst = (freshOrder: "arrival" | "next_horizon") => {
      const booking = { queueDelayTargetS: undefined, standingIntervalS: 10, maxHeldRoomShare: 1, freshOrder };
      const { core, tick } = setup({ booking });
      core.submit("old", { fingerprint: "old" });
      tick(3_000); // old can no longer start within 1 s of its arrival (5 s less 4 s from start to answer)
      core.submit("new", { fingerprint: "new" });
      const plan = core.beginRound();
      if (!plan) throw new Error("nothing queued");
      for (const r of plan.probe) core.reportProbe(r, 0);
      const outcome = core.finishRound(plan);
      return outcome.kind === "placed" ? outcome.ticket : outcome.kind;
    };
    expect(placedFirst("arrival")).toBe("old");
    expect(placedFirst("next_horizon")).toBe("new");
  });

  it("a request's first refusal in an overload that follows another is a probe; its second, the best effort", () => {
    // No retry capacity at all (maxRetryShare 0): every hint that is not a probe is a best effort.
    const { core, warm, tick } = setup({ bookingLedger: { maxRetryShare: 0 } });
    warm();
    const hintS = (ticket: string, fingerprint: string) => {
      const r = core.submit(ticket, { fingerprint });
      if (r.kind !== "rejected") throw new Error("expected a refusal");
      return (r.rejection.decision.retryAfterMs as number) / 1000;
    };
    expect(hintS("a.0", "a")).toBeGreaterThanOrEqual(30); // the first overload: a best effort
    tick(20_000); // nothing refused for 20 s: the next refusal begins another overload
    const probeMidS = 0.75 * DEFAULT_CAPACITY_BOOKING_OPTIONS.probeS; // the harness draws 0.5: a probe's middle
    expect(hintS("b.0", "b")).toBeCloseTo(probeMidS, 0); // its first refusal: a probe
    tick(probeMidS * 1000); // back when told (earlier, it would be told to wait out the rest of its probe)
    expect(hintS("b.1", "b")).toBeGreaterThanOrEqual(30); // back and refused again: the best effort
    expect(hintS("c.0", "c")).toBeCloseTo(probeMidS, 0); // another request's first refusal, the overload still young
  });

  it("a refused retry lowers the ledger's trust only when it was promised room; a best effort's refusal does not", () => {
    // The harness's fresh arrivals come as fast as it drains (2/s): only a floor read from the fast-smoothed rates,
    // still climbing since the router started, leaves room to promise (the moving means read the 2/s).
    const { core, warm, tick } = setup({ bookingLedger: { overloadFloorMovingS: 0 } });
    warm();
    /** Refuses `ticket` (the queue is full) and returns its hint (ms) and the trust its refusal reports. */
    const refuse = (ticket: string, fingerprint: string, horizonS?: number) => {
      const r = core.submit(ticket, { fingerprint, ...(horizonS === undefined ? {} : { clientHorizonS: horizonS }) });
      if (r.kind !== "rejected") throw new Error(`expected ${ticket} refused`);
      const booking = r.rejection.record.booking as { promised: boolean; trust: number };
      return { hintMs: r.rejection.decision.retryAfterMs as number, promised: booking.promised, trust: booking.trust };
    };
    // A 1 s horizon has no second with room: a best effort. Back on time and refused again (nothing was placed).
    const effort = refuse("e.0", "e", 1);
    expect(effort.promised).toBe(false);
    tick(effort.hintMs);
    expect(refuse("e.1", "e", 1).trust).toBe(1);
    // A promise, claimed on time and refused: the trust falls.
    const promise = refuse("p.0", "p");
    expect(promise.promised).toBe(true);
    tick(promise.hintMs);
    refuse("p.1", "p");
    expect(refuse("q.0", "q").trust).toBeLessThan(1);
  });

  it("a promised retry queued and then shed at the queue timeout lowers the trust; one placed keeps it", () => {
    /** A promise claimed on time and queued; `placed` decides whether it is placed or left to time out. */
    const claimAndQueue = (keptWhenQueued: boolean, placed: boolean, shedBreaksPromise = true) => {
      const { core, warm, tick, placeOne } = setup({
        queueTimeoutMs: 20_000,
        bookingLedger: { keptWhenQueued, shedBreaksPromise },
      });
      warm();
      const refused = core.submit("p.0", { fingerprint: "p" });
      if (refused.kind !== "rejected") throw new Error("expected a refusal");
      expect(refused.rejection.record.booking?.promised).toBe(true);
      tick(refused.rejection.decision.retryAfterMs as number);
      while (core.queueDepth > 4) placeOne();
      expect(core.submit("p.1", { fingerprint: "p" }).kind).toBe("queued");
      if (placed) while (core.isQueued("p.1")) placeOne();
      tick(20_000);
      const shed = core.expire().timedOut;
      // The trust the router reports with its next refusal (each shed request's rejection records it).
      core.submit("later", { fingerprint: "later" });
      while (core.queueDepth < 5) core.submit(`f${core.queueDepth}`, { fingerprint: `f${core.queueDepth}` });
      const next = core.submit("q.0", { fingerprint: "q" });
      if (next.kind !== "rejected") throw new Error("expected a refusal");
      return { shed: shed.map((s) => s.ticket), trust: next.rejection.record.booking?.trust };
    };
    const timedOut = claimAndQueue(false, false);
    expect(timedOut.shed).toContain("p.1");
    expect(timedOut.trust).toBeLessThan(1);
    expect(claimAndQueue(false, true).trust).toBe(1);
    // Counted kept when queued (the behaviour until 2026-12-03), the promise shed unserved left the trust at 1.
    expect(claimAndQueue(true, false).trust).toBe(1);
    // A shed promise that settles nothing (shedBreaksPromise off) leaves it at 1 too.
    expect(claimAndQueue(false, false, false).trust).toBe(1);
  });

  it("drainingOfferedShare (an option): a burst's queue that drains by itself after the burst is not cut", () => {
    // Two drains a second; ten arrivals a second for 8 s (the 40-deep queue fills, the rest is refused), then one
    // a second: the queue drains by itself. It stands above the target for the 10 s interval from about 13 s on.
    const afterBurst = (drainingOfferedShare: number | undefined) => {
      const { core, tick, placeOne } = setup({
        maxQueuedRequests: 40,
        booking: { queueDelayTargetS: 1, standingIntervalS: 10, maxHeldRoomShare: 0, drainingOfferedShare },
      });
      let n = 0;
      for (let i = 0; i < 16; i++) {
        tick(500);
        placeOne();
        for (let k = 0; k < 5; k++) core.submit(`b${n}`, { fingerprint: `b${n++}` });
      }
      const kinds: string[] = [];
      for (let i = 0; i < 20; i++) {
        tick(500);
        placeOne();
        if (i % 2 === 1) kinds.push(core.submit(`f${i}`, { fingerprint: `f${i}` }).kind);
      }
      return { kinds, depth: core.queueDepth };
    };
    const cut = afterBurst(undefined);
    expect(cut.kinds).toContain("rejected"); // the fresh arrivals after the burst are refused
    const kept = afterBurst(1);
    expect(kept.kinds.every((k) => k === "queued")).toBe(true);
    expect(kept.depth).toBeGreaterThan(cut.depth);
  });

  it("drainingIgnoresDemoted (an option): after a burst, its refused requests coming back do not keep the target on", () => {
    // As above, but two of the burst's refused requests come back each second after it (first refused more than
    // 3 s before: demoted) beside one fresh arrival: three attempts a second against two drains.
    const afterBurst = (drainingIgnoresDemoted: boolean | undefined) => {
      const { core, tick, placeOne } = setup({
        maxQueuedRequests: 40,
        booking: {
          queueDelayTargetS: 1,
          standingIntervalS: 10,
          maxHeldRoomShare: 0,
          drainingOfferedShare: 1,
          demoteAfterS: 3,
          drainingIgnoresDemoted,
        },
      });
      const refused: string[] = [];
      let n = 0;
      for (let i = 0; i < 16; i++) {
        tick(500);
        placeOne();
        for (let k = 0; k < 5; k++) {
          const id = `b${n++}`;
          if (core.submit(id, { fingerprint: id }).kind === "rejected") refused.push(id);
        }
      }
      const fresh: string[] = [];
      for (let i = 0; i < 20; i++) {
        tick(500);
        placeOne();
        const back = refused.shift() as string;
        core.submit(`${back}.1`, { fingerprint: back, retry: true });
        if (i % 2 === 1) fresh.push(core.submit(`f${i}`, { fingerprint: `f${i}` }).kind);
      }
      return fresh;
    };
    expect(afterBurst(undefined)).toContain("rejected"); // the returning retries count: not draining
    expect(afterBurst(true).every((k) => k === "queued")).toBe(true);
  });

  it("standingIntervalS 0: the queue-delay target binds as soon as the queue stands, and stays while refusals go on", () => {
    // Two drains a second and ten arrivals a second for 30 s. Regression: the standing state was left as soon as
    // nothing had been refused for 0 s - at the next arrival - so the target bound every other arrival at most and
    // the queue grew to its bound as if there were no target.
    let deepest = 0;
    standingOverload({ queueDelayTargetS: 1, standingIntervalS: 0, maxHeldRoomShare: 0 }, (core, step) => {
      if (step >= 30) deepest = Math.max(deepest, core.queueDepth);
    });
    // From 15 s on (the queue built while the drain-rate estimate warmed up has drained by then), the queue holds a
    // second of drain: two requests.
    expect(deepest).toBeLessThanOrEqual(2);
  });

  it("with a queue-delay target, a standing queue is cut to the target's depth", () => {
    let refusedWithRoom = 0;
    let depth = 0;
    standingOverload({ queueDelayTargetS: 1, standingIntervalS: 10, maxHeldRoomShare: 0.5 }, (core, _step, kind) => {
      if (kind === "rejected" && core.queueDepth < 100) refusedWithRoom += 1;
      depth = core.queueDepth;
    });
    expect(refusedWithRoom).toBeGreaterThan(0);
    expect(depth).toBeLessThan(100);
  });
});
