import { describe, expect, it } from "vitest";
import { RecentRate } from "../../../src/core/recent-rate";

describe("RecentRate", () => {
  it("counts events per second over the whole seconds before the current one", () => {
    const rate = new RecentRate(3);
    for (let t = 0; t < 10_000; t += 100) rate.add(t); // ten a second for 10 s
    expect(rate.rate(9_999)).toBe(10); // seconds 6-8
    expect(rate.rate(10_500)).toBe(10); // seconds 7-9: second 10 is not over
    expect(rate.rate(12_500)).toBeCloseTo(10 / 3); // only second 9 is left in 9-11
    expect(rate.rate(60_000)).toBe(0);
  });

  it("a partial current second does not read as a fall in the rate", () => {
    const rate = new RecentRate(2);
    for (let t = 0; t < 3_000; t += 100) rate.add(t);
    rate.add(3_000);
    expect(rate.rate(3_001)).toBe(10);
  });

  it("refuses a window that is not a whole number of seconds", () => {
    expect(() => new RecentRate(0)).toThrow(RangeError);
    expect(() => new RecentRate(1.5)).toThrow(RangeError);
  });
});
