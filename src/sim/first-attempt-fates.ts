import { COMPLETION_HORIZONS_S } from "./metrics";
import type { RunTrace } from "./trace";

/** How the first attempts of the requests that first arrived in one bin of time went. */
export interface FirstAttemptBin {
  /** The bin's start, seconds into the run. */
  fromS: number;
  requests: number;
  /** First attempts refused (at once or shed from the queue later). */
  refused: number;
  /** The mean hint those refusals carried, seconds; `undefined` when none carried one. */
  meanHintS: number | undefined;
  /** First attempts admitted only after waiting longer than `slowS` for a slot. */
  waitedLong: number;
  /** Requests served within 5 s of their first attempt (the completion curve's shortest horizon). */
  servedWithin5s: number;
  /** Requests never served (out of retries, or still waiting when the run ended). */
  lost: number;
  /** Attempts per request, the first included. */
  attemptsPerRequest: number;
}

/**
 * The requests of one run binned by when they first arrived, and what became of each bin's first attempts: refused
 * (and how far their hints sent them), admitted after a long wait for a slot, or neither. The completion curve by
 * arrival (`curveByArrival`, src/sim/arrival-bins.ts) says which requests a policy serves late; this says why:
 * in `burst-10x` the default serves the requests arriving after the burst within 15 s but not all within 5 s,
 * and none of them is refused: they wait for a slot, and decode in full batches, in a fleet the promised retries
 * keep busy (`npm run eval:timeline -- burst-10x`).
 *
 * @example
 * ```ts
 * const bins = firstAttemptsByArrival(runSimulation(scenario, policy, workload), 10);
 * bins.find((b) => b.fromS === 100)?.waitedLong; // first attempts of 100-110 s that waited over 1 s for a slot
 * ```
 */
export function firstAttemptsByArrival(run: Pick<RunTrace, "requests">, binS: number, slowS = 1): FirstAttemptBin[] {
  if (!(binS > 0)) throw new Error(`the bin must be positive seconds, got ${binS}`);
  // Per bin, sums: the mean hint and the attempts per request are derived from them at the end.
  type Tally = Omit<FirstAttemptBin, "meanHintS" | "attemptsPerRequest"> & {
    hintSumS: number;
    hinted: number;
    attempts: number;
  };
  const shortestMs = (COMPLETION_HORIZONS_S[0] as number) * 1000;
  const bins = new Map<number, Tally>();
  for (const r of run.requests) {
    const fromS = Math.floor(r.arrivalMs / 1000 / binS) * binS;
    const bin = bins.get(fromS) ?? {
      fromS,
      requests: 0,
      refused: 0,
      waitedLong: 0,
      servedWithin5s: 0,
      lost: 0,
      hintSumS: 0,
      hinted: 0,
      attempts: 0,
    };
    bin.requests += 1;
    bin.attempts += r.attempts.length;
    const first = r.attempts[0];
    if (first?.outcome === "rejected") {
      bin.refused += 1;
      if (first.hintMs !== undefined) {
        bin.hintSumS += first.hintMs / 1000;
        bin.hinted += 1;
      }
    } else if (first && first.answeredAtMs - first.atMs > slowS * 1000) bin.waitedLong += 1;
    if (r.result !== "served") bin.lost += 1;
    else if (r.completedAtMs !== undefined && r.completedAtMs - r.arrivalMs <= shortestMs) bin.servedWithin5s += 1;
    bins.set(fromS, bin);
  }
  return [...bins.values()]
    .sort((a, b) => a.fromS - b.fromS)
    .map(({ hintSumS, hinted, attempts, ...bin }) => ({
      ...bin,
      meanHintS: hinted > 0 ? hintSumS / hinted : undefined,
      attemptsPerRequest: attempts / bin.requests,
    }));
}
