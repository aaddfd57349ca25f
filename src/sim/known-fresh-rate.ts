import type { WorkloadRequest } from "./workload";

/**
 * A run's first attempts per second at one router shard, as a function of time: what the `booked_capacity` ledger
 * forecasts (its fresh arrivals), known in advance. The mean over the `windowS` seconds centred on t smooths the
 * arrivals' own noise, as any forecast of a rate must; shards see an equal share (the fingerprint spreads requests
 * evenly). Retries made without a booking count as fresh to the ledger too: this knows the arrivals, not them.
 *
 * @example
 * ```ts
 * const rate = knownFreshRate(workload, scenario.router.shards);
 * rate(75); // e.g. 25.4: the burst's first attempts per second around t = 75 s
 * ```
 */
export function knownFreshRate(
  workload: readonly WorkloadRequest[],
  shards: number,
  windowS = 5,
): (tS: number) => number {
  const perSecond: number[] = [];
  for (const request of workload) {
    const second = Math.floor(request.arrivalMs / 1000);
    perSecond[second] = (perSecond[second] ?? 0) + 1;
  }
  const half = Math.floor(windowS / 2);
  return (tS) => {
    const second = Math.floor(tS);
    let arrivals = 0;
    for (let s = second - half; s <= second + half; s++) arrivals += perSecond[s] ?? 0;
    return arrivals / (2 * half + 1) / shards;
  };
}
