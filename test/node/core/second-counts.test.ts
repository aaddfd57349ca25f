import { describe, expect, it } from "vitest";
import { SecondCounts } from "../../../src/core/second-counts";

describe("SecondCounts", () => {
  it("counts per absolute second, and clears the seconds that fall behind the kept window", () => {
    const counts = new SecondCounts(8, 1, 10_000); // seconds 9 to 16
    counts.add(9);
    counts.add(12);
    counts.add(12);
    expect([counts.at(9), counts.at(12), counts.at(13)]).toEqual([1, 2, 0]);
    expect(counts.advance(10_900)).toBe(0); // the same second: nothing moves
    expect(counts.advance(11_000)).toBe(1); // second 9 falls out (only 1 s is kept behind 11)
    expect(counts.currentSecond).toBe(11);
    expect([counts.at(9), counts.at(12)]).toEqual([0, 2]);
    expect(counts.advance(13_500)).toBe(2); // seconds 10 and 11 fall out; 12 is kept behind 13
    expect(counts.at(12)).toBe(2);
    expect(counts.advance(14_000)).toBe(1);
    expect(counts.at(12)).toBe(0);
  });

  it("reuses the ring for the seconds ahead: a second cleared behind is a fresh one ahead", () => {
    const counts = new SecondCounts(4, 0, 0); // seconds 0 to 3
    counts.add(3);
    counts.advance(1_000); // second 0 is cleared, and its bucket is second 4's
    expect(counts.at(4)).toBe(0);
    counts.add(4);
    expect([counts.at(3), counts.at(4)]).toEqual([1, 1]);
  });

  it("leaves a second outside the window alone on remove: its bucket counts another second now", () => {
    const counts = new SecondCounts(4, 1, 0); // seconds -1 to 2
    counts.add(2);
    counts.advance(2_000); // seconds 1 to 4: the bucket of -1 and 0 is now 3's and 4's
    counts.add(3);
    counts.remove(-1); // cleared behind: 3 keeps its count
    counts.remove(7); // not yet reached
    expect([counts.at(2), counts.at(3)]).toEqual([1, 1]);
    counts.remove(2);
    expect(counts.at(2)).toBe(0);
  });

  it("clears everything after a jump longer than the ring, and never goes below 0", () => {
    const counts = new SecondCounts(4, 1, 0);
    counts.add(1);
    counts.add(2);
    expect(counts.advance(100_000)).toBe(100);
    for (let s = 99; s <= 102; s++) expect(counts.at(s)).toBe(0);
    counts.remove(100);
    expect(counts.at(100)).toBe(0);
    expect(counts.advance(50_000)).toBe(0); // the clock went back: nothing moves
    expect(counts.currentSecond).toBe(100);
  });
});
