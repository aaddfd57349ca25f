import { describe, expect, it } from "vitest";
import { headerlessBehindPts, headerlessMet, headerlessWithin } from "../../../src/sim/header-clients";
import { headerClientsLine } from "../../../src/sim/report-markdown";

describe("header-less clients against SDK clients (issue 15: within 5 points)", () => {
  it("meets the target at 5 points behind or less, misses it beyond, and has no verdict without header-less clients", () => {
    expect(headerlessMet({ name: "a", sdk: 0.902, headerless: 0.848, python: 0.875 })).toBe(false);
    expect(headerlessMet({ name: "b", sdk: 0.9, headerless: 0.85, python: undefined })).toBe(true);
    expect(headerlessMet({ name: "c", sdk: 0.9, headerless: 0.95, python: undefined })).toBe(true);
    expect(headerlessMet({ name: "d", sdk: 0.9, headerless: undefined, python: undefined })).toBeUndefined();
  });

  it("lists the scenarios with header-less clients and counts those that meet it", () => {
    const line = headerClientsLine([
      { name: "a", sdk: 0.902, headerless: 0.848, python: 0.875 },
      { name: "b", sdk: 0.9, headerless: 0.88, python: undefined },
      { name: "legacy", sdk: 0.95, headerless: undefined, python: undefined },
    ]);
    expect(line).toBe("a 84.8% vs 90.2% (87.5%); b 88.0% vs 90.0%; within 5 points in 1 of 2 scenarios");
  });

  it("counts the scenarios within 5 points among those where header-less clients ran", () => {
    const shares = [
      { name: "a", sdk: 0.902, headerless: 0.848, python: 0.875 },
      { name: "b", sdk: 0.9, headerless: 0.85, python: undefined },
      { name: "legacy", sdk: 1, headerless: undefined, python: undefined },
    ];
    expect(headerlessWithin(shares)).toEqual({ met: 1, of: 2 });
    expect(headerlessWithin([])).toEqual({ met: 0, of: 0 });
  });

  it("measures how far header-less clients are behind, in points, and nothing where none ran", () => {
    expect(headerlessBehindPts({ sdk: 0.902, headerless: 0.848 })).toBeCloseTo(5.4, 9);
    expect(headerlessBehindPts({ sdk: 0.9, headerless: 0.95 })).toBeCloseTo(-5, 9);
    expect(headerlessBehindPts({ sdk: 0.9, headerless: undefined })).toBeUndefined();
    expect(headerlessBehindPts({ sdk: 0.9, headerless: null })).toBeUndefined();
  });
});
