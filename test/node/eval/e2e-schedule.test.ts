import { describe, expect, it } from "vitest";
import { arrivalSchedule, dealArrivals } from "../../../eval/e2e-schedule";

const input = {
  seed: 2026,
  phases: [
    { durationS: 10, load: 0.5 },
    { durationS: 10, load: 3 },
    { durationS: 20, load: 0.5 },
  ],
  capacityRps: 17,
  headerlessShare: 0.3,
};

describe("arrivalSchedule (eval:e2e's arrivals, computed once and replayed for every policy)", () => {
  it("is the same for the same seed and differs for another seed", () => {
    expect(arrivalSchedule(input)).toEqual(arrivalSchedule(input));
    expect(arrivalSchedule({ ...input, seed: 2027 })).not.toEqual(arrivalSchedule(input));
  });

  it("keeps seed 2026's arrivals of the runs made before the clients had their own processes (796 requests)", () => {
    // docs/evaluation-e2e-openai.json of those runs records 796 requests per policy at 17 req/s capacity.
    expect(arrivalSchedule(input)).toHaveLength(796);
  });

  it("numbers the arrivals in ascending time, each inside its phase, at roughly each phase's rate", () => {
    const arrivals = arrivalSchedule(input);
    arrivals.forEach((a, i) => {
      expect(a.index).toBe(i);
      if (i > 0) expect(a.atS).toBeGreaterThan(arrivals[i - 1]?.atS ?? 0);
    });
    const count = (from: number, to: number) => arrivals.filter((a) => a.atS >= from && a.atS < to).length;
    expect(arrivals.every((a) => a.atS >= 0 && a.atS < 40)).toBe(true);
    // Expected 85, 510 and 170 arrivals; Poisson counts stay well within these bounds.
    expect(count(0, 10)).toBeGreaterThan(50);
    expect(count(0, 10)).toBeLessThan(120);
    expect(count(10, 20)).toBeGreaterThan(420);
    expect(count(10, 20)).toBeLessThan(600);
    expect(count(20, 40)).toBeGreaterThan(120);
    expect(count(20, 40)).toBeLessThan(220);
  });

  it("marks about headerlessShare of the requests header-less, none at 0 and all at 1", () => {
    const arrivals = arrivalSchedule(input);
    const share = arrivals.filter((a) => a.headerless).length / arrivals.length;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.35);
    // The gaps come from the same generator, so these schedules differ in timing, not only in the flag.
    expect(arrivalSchedule({ ...input, headerlessShare: 0 }).some((a) => a.headerless)).toBe(false);
    expect(arrivalSchedule({ ...input, headerlessShare: 1 }).every((a) => a.headerless)).toBe(true);
  });
});

describe("dealArrivals (the schedule split among client processes)", () => {
  it("deals round-robin, so every process gets every phase and nothing is lost or repeated", () => {
    const arrivals = arrivalSchedule(input);
    const hands = dealArrivals(arrivals, 4);
    expect(hands).toHaveLength(4);
    expect(
      hands
        .flat()
        .map((a) => a.index)
        .sort((x, y) => x - y),
    ).toEqual(arrivals.map((a) => a.index));
    for (const hand of hands) {
      expect(Math.abs(hand.length - arrivals.length / 4)).toBeLessThanOrEqual(1);
      expect(hand.some((a) => a.atS >= 10 && a.atS < 20)).toBe(true);
      hand.forEach((a, i) => {
        if (i > 0) expect(a.atS).toBeGreaterThan(hand[i - 1]?.atS ?? 0);
      });
    }
    expect(dealArrivals(["a", "b", "c", "d", "e"], 2)).toEqual([
      ["a", "c", "e"],
      ["b", "d"],
    ]);
  });

  it("gives empty hands to processes beyond the arrivals, and refuses a count below 1", () => {
    expect(dealArrivals(["a"], 3)).toEqual([["a"], [], []]);
    expect(() => dealArrivals(["a"], 0)).toThrow(/positive integer/);
  });
});
