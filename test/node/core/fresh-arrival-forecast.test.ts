import { describe, expect, it } from "vitest";
import { DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../../../src/core/capacity-booking";
import { FreshArrivalForecast, riseLength } from "../../../src/core/fresh-arrival-forecast";

const opts = DEFAULT_CAPACITY_BOOKING_OPTIONS;

/** A forecast that has seen each of `perSecond` fresh arrivals in successive seconds. */
function seen(perSecond: readonly number[], options = opts): FreshArrivalForecast {
  const forecast = new FreshArrivalForecast(options);
  for (const n of perSecond) {
    for (let i = 0; i < n; i++) forecast.count();
    forecast.closeSeconds(1);
  }
  return forecast;
}

describe("FreshArrivalForecast", () => {
  it("has no baseline before its first second, then the lowest slowly smoothed rate: a burst does not raise it", () => {
    expect(new FreshArrivalForecast(opts).baseline).toBeUndefined();
    const steady = seen(Array(30).fill(4));
    expect(steady.baseline).toBeCloseTo(4, 9);
    const burst = seen([...Array(30).fill(4), ...Array(10).fill(40)]);
    expect(burst.baseline).toBeCloseTo(4, 9);
    // The fast rate (alpha 0.3) is near the burst's after 10 s: 40 - 36 * 0.7^10.
    expect(burst.recent).toBeCloseTo(40 - 36 * 0.7 ** 10, 9);
  });

  it("counts the seconds that passed with nothing as empty ones", () => {
    const forecast = seen([10]);
    forecast.closeSeconds(3); // this second's (none) and two more
    expect(forecast.recent).toBeCloseTo(10 * 0.7 ** 3, 9);
    expect(forecast.baseline).toBeCloseTo(10 * 0.9 ** 3, 9);
  });

  it("a quiet spell longer than its window, closed at once, is every one of its seconds closed in turn", () => {
    // It stopped after the baseline's window: the smoothed rates kept (1 - alpha)^window of the traffic before.
    const shortWindow = { ...opts, baselineWindowS: 5 };
    for (const options of [opts, shortWindow])
      for (const quietS of [61, 100, 4000]) {
        const [atOnce, inTurn] = [seen([20, 20, 20], options), seen([20, 20, 20], options)];
        atOnce.closeSeconds(quietS);
        for (let s = 0; s < quietS; s++) inTurn.closeSeconds(1);
        expect(atOnce.baseline ?? Number.NaN).toBeCloseTo(inTurn.baseline ?? Number.NaN, 12);
        expect(atOnce.recent).toBeCloseTo(inTurn.recent, 12);
        // A new overload's floor, read from the rings those seconds left.
        expect(atOnce.overloadFloor(true, 0, 50)).toBeCloseTo(inTurn.overloadFloor(true, 0, 50), 12);
      }
  });

  it("sets an overload's floor at the median fast rate of the 10 s before it, and lowers it on later refusals only", () => {
    const forecast = seen(Array(40).fill(6));
    expect(forecast.overloadFloor(true, 10, 10)).toBeCloseTo(6, 9);
    // A later refusal of the same overload with the current rate lower: the floor follows it down, never up.
    for (let s = 0; s < 5; s++) forecast.closeSeconds(1);
    const lower = forecast.recent;
    expect(forecast.overloadFloor(false, 10, 10)).toBeCloseTo(lower, 9);
    for (let i = 0; i < 50; i++) forecast.count();
    forecast.closeSeconds(1);
    expect(forecast.overloadFloor(false, 10, 10)).toBeCloseTo(lower, 9);
  });

  it("reads the floor before the queue began to fill when the window was already inside the overload", () => {
    // 20 s at 3/s, then 20 s at 20/s (a 100-deep queue filling at 10/s over a drain of 10/s) before the first refusal.
    const forecast = seen([...Array(20).fill(3), ...Array(20).fill(20)]);
    // The last 10 s (all at 20/s, above the drain) say nothing of the traffic after the burst: the 10 s before the
    // queue's fill time (100 / 10 = 10 s ago) are read instead, still mostly the burst's here...
    const floor = forecast.overloadFloor(true, 100, 10);
    expect(floor).toBeGreaterThan(10);
    // ...while a 30 s deep queue's fill time (capped at 30 s) reaches back to the 3/s before the burst.
    const deep = seen([...Array(20).fill(3), ...Array(20).fill(20)]);
    expect(deep.overloadFloor(true, 300, 10)).toBeLessThan(10);
  });

  it("sets no floor when overloadFloorS is 0", () => {
    expect(seen(Array(20).fill(6), { ...opts, overloadFloorS: 0 }).overloadFloor(true, 10, 10)).toBe(0);
  });

  it("overloadFloorMovingS: after a quiet spell the floor reads the traffic that resumed, not the climbing fast rate", () => {
    // The end-to-end run's shape: a quiet minute, then 10 s of ordinary traffic at 8/s before the first refusal.
    const perSecond = [...Array(50).fill(0), ...Array(10).fill(8)];
    // The fast-smoothed rate (alpha 0.3) climbs through those 10 s: 2.4, 4.1, 5.3, ... 7.8; their median (with
    // the current rate beside them) is 7.1/s, an eighth too low.
    const fastOnly = seen(perSecond, { ...opts, overloadFloorMovingS: 0 }).overloadFloor(true, 16, 17);
    expect(fastOnly).toBeCloseTo(8 * (1 - 0.7 ** 6), 9);
    // The 3 s moving means have caught up after 3 s: 2.7, 5.3, then 8 for the rest; the floor is their median.
    expect(seen(perSecond).overloadFloor(true, 16, 17)).toBe(8);
    // Steady traffic: both read it.
    expect(seen(Array(60).fill(8)).overloadFloor(true, 16, 17)).toBeCloseTo(8, 9);
  });

  it("overloadFloorMovingS: moving means at or above the drain rate (the overload itself) do not raise the floor", () => {
    // A deep queue fills at 20/s for the 10 s before the first refusal, over a 10/s drain: the moving means read
    // 20/s, the overload itself; the floor is read before the queue began to fill, as without them.
    const perSecond = [...Array(20).fill(3), ...Array(20).fill(20)];
    const withMoving = seen(perSecond).overloadFloor(true, 300, 10);
    expect(withMoving).toBeLessThan(10);
    expect(withMoving).toBe(seen(perSecond, { ...opts, overloadFloorMovingS: 0 }).overloadFloor(true, 300, 10));
  });

  it("riseLength: the newest values that stepped up, none without a step", () => {
    // The ramp of a smoothed step: 5 fits the values before it better than those after.
    expect(riseLength(Float64Array.of(2, 2, 2, 2, 2, 2, 5, 7, 9, 10), 10, 10, 2)).toBe(3);
    expect(riseLength(Float64Array.of(2, 2, 2, 2, 2, 2, 2, 2, 2, 2), 10, 10, 2)).toBe(0);
    // A rise of less than the ratio is no step.
    expect(riseLength(Float64Array.of(2, 2, 2, 2, 2, 3, 3, 3, 3, 3), 10, 10, 2)).toBe(0);
    // A ring that wrapped: its last writes are the newest.
    expect(riseLength(Float64Array.of(9, 10, 2, 2, 2, 2), 8, 6, 2)).toBe(2);
  });
});
