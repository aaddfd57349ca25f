import { describe, expect, it } from "vitest";
import { formatResult, summarize } from "../../../src/bench/bench-result";

// bench_serving prints `"{:<40} {:<10}".format("Traffic request rate:", request_rate)` where request_rate is
// argparse's float: Python writes 4.0 as "4.0" (and float("inf") as "inf").
const rateLine = (requestRate: number) =>
  formatResult(summarize([], { backend: "sglang-oai", requestRate, maxConcurrency: null, duration: 1 }))
    .split("\n")
    .find((line) => line.startsWith("Traffic request rate:"));

describe("formatResult's request rate, as Python prints a float", () => {
  it("writes a whole rate with its .0, a fractional one as is, and inf", () => {
    expect(rateLine(4)).toBe(`${"Traffic request rate:".padEnd(40)} 4.0       `);
    expect(rateLine(16)).toBe(`${"Traffic request rate:".padEnd(40)} 16.0      `);
    expect(rateLine(0.5)).toBe(`${"Traffic request rate:".padEnd(40)} 0.5       `);
    expect(rateLine(Number.POSITIVE_INFINITY)).toBe(`${"Traffic request rate:".padEnd(40)} inf       `);
  });
});
