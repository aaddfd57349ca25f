import { describe, expect, it } from "vitest";
import { binReleases, curveByArrival } from "../../../src/sim/arrival-bins";
import { computeMetrics } from "../../../src/sim/metrics";
import type { RequestTrace } from "../../../src/sim/trace";
import { runTraceOf } from "./run-trace";
import { defaultRunOfSmallBurst } from "./small-scenario";

const request = (id: number, arrivalS: number, tookS: number | undefined): RequestTrace => ({
  id,
  arrivalMs: arrivalS * 1000,
  client: "openai_node",
  roundTripMs: 80,
  attempts: [],
  result: tookS === undefined ? "gave_up" : "served",
  ...(tookS === undefined ? {} : { completedAtMs: (arrivalS + tookS) * 1000 }),
  outputTokens: 1,
});
const trace = (requests: RequestTrace[]) => runTraceOf(requests);

describe("curveByArrival", () => {
  it("bins requests by their first attempt and gives each bin's share served within every horizon", () => {
    const bins = curveByArrival(
      [trace([request(1, 1, 3), request(2, 4, 20), request(3, 12, 70)]), trace([request(4, 13, undefined)])],
      5,
    );
    expect(bins.map((b) => [b.fromS, b.requests])).toEqual([
      [0, 2],
      [10, 2],
    ]);
    expect(bins[0]?.servedWithinS).toEqual({ "5": 0.5, "15": 0.5, "30": 1, "60": 1, "120": 1 });
    // A request that was not served counts in its bin's requests, never as served.
    expect(bins[1]?.servedWithinS).toEqual({ "5": 0, "15": 0, "30": 0, "60": 0, "120": 0.5 });
  });

  it("adds up to the run's completion curve", () => {
    const run = defaultRunOfSmallBurst(20);
    const bins = curveByArrival([run], 3);
    const total = bins.reduce((n, b) => n + b.requests, 0);
    expect(total).toBe(run.requests.length);
    for (const [h, share] of Object.entries(computeMetrics(run).servedWithinS)) {
      const pooled = bins.reduce((n, b) => n + (b.servedWithinS[h] ?? 0) * b.requests, 0) / total;
      expect(pooled).toBeCloseTo(share, 9);
    }
  });

  it("refuses a bin that is not a positive number of seconds", () => {
    expect(() => curveByArrival([], 0)).toThrow(/positive/);
    expect(() => binReleases([], Number.NaN)).toThrow(/positive/);
  });
});

describe("binReleases", () => {
  it("puts a bound's rows (per second of release) in the same bins, with fractional starts", () => {
    const rows = [
      { releaseS: 61, requests: 4, servedWithin: [1, 2, 3, 4, 4] },
      { releaseS: 63, requests: 4, servedWithin: [0, 0.5, 1, 4, 4] },
      { releaseS: 66, requests: 2, servedWithin: [2, 2, 2, 2, 2] },
    ];
    expect(binReleases(rows, 5)).toEqual([
      { fromS: 60, requests: 8, servedWithinS: { "5": 0.125, "15": 0.3125, "30": 0.5, "60": 1, "120": 1 } },
      { fromS: 65, requests: 2, servedWithinS: { "5": 1, "15": 1, "30": 1, "60": 1, "120": 1 } },
    ]);
  });
});
