import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import type { RunTrace } from "./trace";

/** The requests whose first attempt fell in one bin of time, and the share of them served within each horizon. */
export interface ArrivalBin {
  /** The bin's start, seconds into the run. */
  fromS: number;
  requests: number;
  servedWithinS: CompletionCurve;
}

/**
 * The completion curve by when requests first arrived: which requests a policy serves late, not only how many.
 * A policy can match another's overall curve while serving a burst's requests a minute later and the requests
 * after it sooner; this shows that trade. Pooled over the traces (seeds of one scenario: the same bins of time).
 * Bins without requests are left out.
 *
 * @example
 * ```ts
 * const bins = curveByArrival([runSimulation(scenario, policy, workload)], 5);
 * bins.find((b) => b.fromS === 65)?.servedWithinS["60"]; // the share of 65-70 s's requests served within 60 s
 * ```
 */
export function curveByArrival(traces: readonly RunTrace[], binS: number): ArrivalBin[] {
  if (!(binS > 0)) throw new Error(`curveByArrival: the bin must be positive seconds, got ${binS}`);
  const bins = new Map<number, { requests: number; within: number[] }>();
  for (const trace of traces)
    for (const r of trace.requests) {
      const fromS = Math.floor(r.arrivalMs / 1000 / binS) * binS;
      const bin = bins.get(fromS) ?? { requests: 0, within: COMPLETION_HORIZONS_S.map(() => 0) };
      bin.requests += 1;
      if (r.result === "served" && r.completedAtMs !== undefined) {
        const tookS = (r.completedAtMs - r.arrivalMs) / 1000;
        COMPLETION_HORIZONS_S.forEach((h, i) => {
          if (tookS <= h) bin.within[i] = (bin.within[i] ?? 0) + 1;
        });
      }
      bins.set(fromS, bin);
    }
  return [...bins]
    .sort(([a], [b]) => a - b)
    .map(([fromS, bin]) => ({
      fromS,
      requests: bin.requests,
      servedWithinS: Object.fromEntries(
        COMPLETION_HORIZONS_S.map((h, i) => [String(h), (bin.within[i] ?? 0) / bin.requests]),
      ),
    }));
}
