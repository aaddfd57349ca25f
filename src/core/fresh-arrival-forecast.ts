/** The tunables of the fresh-arrival forecast (a part of `CapacityBookingOptions`: see there for each one). */
export interface FreshArrivalForecastOptions {
  freshAlpha: number;
  baselineWindowS: number;
  burstAlpha: number;
  overloadFloorS: number;
  overloadFloorQuantile: number;
  overloadFloorSkipsRise: number;
  overloadFloorMovingS: number;
}

/** The overload floor looks back at most this many seconds past a queue's fill time (see `overloadFloor`). */
const MAX_QUEUE_FILL_S = 30;

/**
 * What the `booked_capacity` ledger knows of fresh arrivals (attempts that claim no booking): their count per
 * second, smoothed two ways - slowly (`freshAlpha`) for the baseline, the lowest smoothed rate of the last
 * `baselineWindowS` seconds, which a burst does not raise, and quickly (`burstAlpha`) for the rate a burst has
 * now - and the floor that an overload's first refusal sets under the baseline from the seconds before it.
 *
 * Why apart from the ledger: the ledger books future capacity; this says how much of it fresh arrivals will take.
 * Pure: the ledger closes each elapsed second (`closeSeconds`) as its clock moves.
 *
 * @example
 * ```ts
 * const forecast = new FreshArrivalForecast(DEFAULT_CAPACITY_BOOKING_OPTIONS);
 * forecast.count(); forecast.count();
 * forecast.closeSeconds(1); // a second with 2 fresh arrivals
 * forecast.baseline;        // 2
 * ```
 */
export class FreshArrivalForecast {
  private inInterval = 0;
  private smoothed: number | undefined;
  private fast: number | undefined;
  /** The smoothed fresh rate of each of the last `baselineWindowS` seconds (a ring). */
  private readonly slowRates: Float64Array;
  private slowCount = 0;
  /** The fast-smoothed fresh rate of each of the last `overloadFloorS` seconds (and more: see `overloadFloor`). */
  private readonly fastRates: Float64Array;
  private fastCount = 0;
  /** The mean count of the last `overloadFloorMovingS` seconds, as of each second of the same span (a ring). */
  private readonly movingRates: Float64Array;
  /** The counts of the last `overloadFloorMovingS` seconds (a ring), for the moving mean. */
  private readonly lastCounts: Float64Array;
  private lastCountsSum = 0;
  private floorRate = 0;

  constructor(private readonly options: FreshArrivalForecastOptions) {
    this.slowRates = new Float64Array(Math.max(1, options.baselineWindowS));
    const floorS = Math.max(0, Math.floor(options.overloadFloorS));
    this.fastRates = new Float64Array(floorS > 0 ? floorS + MAX_QUEUE_FILL_S : 0);
    const movingS = floorS > 0 ? Math.max(0, Math.floor(options.overloadFloorMovingS)) : 0;
    this.movingRates = new Float64Array(movingS > 0 ? this.fastRates.length : 0);
    this.lastCounts = new Float64Array(movingS);
  }

  /** One fresh arrival in the current second. */
  count(): void {
    this.inInterval += 1;
  }

  /** `elapsed` seconds have ended: the first with the arrivals counted, the others empty. */
  closeSeconds(elapsed: number): void {
    // Empty seconds that no ring keeps (the seconds closed after them fill every ring) only decay the smoothed
    // rates: folded in at once, so that a long quiet spell costs no more than a ring's length of work.
    const ringS = Math.max(this.slowRates.length, this.fastRates.length, this.lastCounts.length);
    const folded = Math.max(0, elapsed - 1 - ringS);
    for (let k = 0; k < elapsed - folded; k++) {
      if (k === 1 && folded > 0) this.foldEmpty(folded);
      const sample = k === 0 ? this.inInterval : 0;
      const { freshAlpha, burstAlpha } = this.options;
      this.smoothed = this.smoothed === undefined ? sample : freshAlpha * sample + (1 - freshAlpha) * this.smoothed;
      this.fast = this.fast === undefined ? sample : burstAlpha * sample + (1 - burstAlpha) * this.fast;
      this.slowRates[this.slowCount % this.slowRates.length] = this.smoothed;
      if (this.fastRates.length > 0) this.fastRates[this.fastCount % this.fastRates.length] = this.fast;
      if (this.movingRates.length > 0) {
        const n = this.lastCounts.length;
        const slot = this.fastCount % n;
        this.lastCountsSum += sample - (this.lastCounts[slot] as number);
        this.lastCounts[slot] = sample;
        this.movingRates[this.fastCount % this.movingRates.length] =
          this.lastCountsSum / Math.min(n, this.fastCount + 1);
      }
      this.fastCount += 1;
      this.slowCount += 1;
    }
    this.inInterval = 0;
  }

  /** `seconds` empty seconds no ring will keep: the smoothed rates decay, and the rings' clocks move past them. */
  private foldEmpty(seconds: number): void {
    const { freshAlpha, burstAlpha } = this.options;
    if (this.smoothed !== undefined) this.smoothed *= (1 - freshAlpha) ** seconds;
    if (this.fast !== undefined) this.fast *= (1 - burstAlpha) ** seconds;
    // The moving mean's counts of those seconds are 0: the ones they replace leave its sum now.
    const n = this.lastCounts.length;
    for (let k = 0; k < Math.min(seconds, n); k++) {
      const slot = (this.fastCount + k) % n;
      this.lastCountsSum -= this.lastCounts[slot] as number;
      this.lastCounts[slot] = 0;
    }
    this.fastCount += seconds;
    this.slowCount += seconds;
  }

  /** The baseline (requests per second): the lowest smoothed rate of the window; `undefined` before a full second. */
  get baseline(): number | undefined {
    if (this.slowCount === 0) return undefined;
    return lowestOfRing(this.slowRates, this.slowCount, 0, this.slowRates.length);
  }

  /** The fast-smoothed rate (`burstAlpha`) as of the last closed second: a burst's current rate; 0 before one. */
  get recent(): number {
    return this.fast ?? 0;
  }

  /**
   * The floor `overloadFloorS` sets under the baseline for the overload under way (0 when off): a new overload's
   * floor is the `overloadFloorQuantile` of the fast-smoothed rates of the `overloadFloorS` seconds before it, or the
   * same quantile of the `overloadFloorMovingS`-second moving means of those seconds when that is higher and still
   * below the drain rate; later refusals lower it to the current rate when that is lower.
   *
   * Why the moving means: a floor that reads low overbooks the seconds after the overload (each broken promise is
   * one more attempt), one that reads high only books less. The fast-smoothed rates lag a rise from a quiet spell
   * (at `burstAlpha` 0.3, 5 s after traffic resumed they read 83% of it): the end-to-end run's 10 s of ordinary
   * traffic after a minute of quiet read low, and the promises made on it broke (in the run's twin, `npm run
   * eval:e2e-twin`, one more attempt each). A 3 s moving mean has caught up 3 s after the rise (a test in
   * test/node/core/fresh-arrival-forecast.test.ts).
   *
   * A floor at or above the drain rate says those seconds were already inside the overload: a deep queue fills
   * for seconds before its first refusal (`waves`' 100-deep queue for 12 s, at 2x). It would leave no spare
   * capacity to promise, and every hint of the overload would be a best effort (measured: `waves`' first wave sent
   * its openai-node clients 60 to 120 s away). The floor is then read over the same span just before the queue
   * began to fill (its depth over the drain rate ago, at most `MAX_QUEUE_FILL_S`).
   */
  overloadFloor(overloadStarts: boolean, queueDepth: number, drainRate: number): number {
    const windowS = Math.floor(this.options.overloadFloorS);
    if (!(windowS > 0)) return 0;
    const current = this.recent;
    if (!overloadStarts) {
      this.floorRate = Math.min(this.floorRate, current);
      return this.floorRate;
    }
    const q = this.options.overloadFloorQuantile;
    const ratio = this.options.overloadFloorSkipsRise;
    const rise = ratio > 1 ? riseLength(this.fastRates, this.fastCount, windowS, ratio) : 0;
    // Skipping the rise, the window is read that many seconds earlier. The current rate is the window's newest second
    // already (the ring's last write): passed again, the quantile would count that second twice.
    this.floorRate = quantileOfRing(this.fastRates, this.fastCount, rise, windowS, q);
    if (!Number.isFinite(this.floorRate)) this.floorRate = 0;
    if (this.movingRates.length > 0 && this.floorRate < drainRate) {
      const moving = quantileOfRing(this.movingRates, this.fastCount, rise, windowS, q);
      // At or above the drain rate, the moving means read the overload itself (a deep queue filling): left out.
      if (moving < drainRate) this.floorRate = Math.max(this.floorRate, moving);
    }
    if (this.floorRate >= drainRate) {
      const fillS = Math.ceil(Math.min(MAX_QUEUE_FILL_S, queueDepth / drainRate));
      const before = quantileOfRing(this.fastRates, this.fastCount, fillS, windowS, q);
      // A router younger than the queue's fill time has no such seconds: no floor.
      this.floorRate = Number.isFinite(before) ? before : 0;
    }
    return this.floorRate;
  }
}

/**
 * The lowest of the `n` values written to a ring before its last `skip` writes (`count` writes so far; `Infinity`
 * when there are none): `skip` 0 reads the latest `n` seconds.
 */
function lowestOfRing(ring: Float64Array, count: number, skip: number, n: number): number {
  let low = Number.POSITIVE_INFINITY;
  for (let k = skip + 1; k <= Math.min(skip + n, count, ring.length); k++)
    low = Math.min(low, ring[(count - k) % ring.length] as number);
  return low;
}

/**
 * How many of a ring's newest `n` values belong to a step up: the split of those values into two runs, newer and
 * older, that best fits each run by its mean (least squares: the classic one-change-point fit), when the newer run
 * averages at least `ratio` times the older; 0 when it does not.
 *
 * @example
 * ```ts
 * // Written oldest first: 2/s for 6 s, then a burst's first 4 s (smoothed, so it ramps).
 * riseLength(Float64Array.of(2, 2, 2, 2, 2, 2, 5, 7, 9, 10), 10, 10, 2); // 3: 7, 9 and 10 (5 is nearer the 2s)
 * ```
 */
export function riseLength(ring: Float64Array, count: number, n: number, ratio: number): number {
  const newestFirst: number[] = [];
  for (let k = 1; k <= Math.min(n, count, ring.length); k++)
    newestFirst.push(ring[(count - k) % ring.length] as number);
  const m = newestFirst.length;
  let sum = 0;
  let squares = 0;
  for (const v of newestFirst) {
    sum += v;
    squares += v * v;
  }
  // Squared error of a run about its mean, from its sum and sum of squares.
  const error = (total: number, totalSquares: number, size: number) => totalSquares - (total * total) / size;
  let best = 0;
  let bestNewerSum = 0;
  let bestError = Number.POSITIVE_INFINITY;
  let newerSum = 0;
  let newerSquares = 0;
  for (let k = 1; k < m; k++) {
    const v = newestFirst[k - 1] as number;
    newerSum += v;
    newerSquares += v * v;
    const fit = error(newerSum, newerSquares, k) + error(sum - newerSum, squares - newerSquares, m - k);
    if (fit < bestError) {
      bestError = fit;
      best = k;
      bestNewerSum = newerSum;
    }
  }
  if (best === 0) return 0;
  const [newer, older] = [bestNewerSum / best, (sum - bestNewerSum) / (m - best)];
  return newer >= ratio * older ? best : 0;
}

/**
 * The `q`-quantile (0: the lowest) of the `n` values written to a ring before its last `skip` writes; `Infinity`
 * when there are none.
 *
 * @example
 * ```ts
 * quantileOfRing(Float64Array.of(4, 2, 9), 3, 0, 3, 0.5); // 4
 * ```
 */
function quantileOfRing(ring: Float64Array, count: number, skip: number, n: number, q: number): number {
  if (q <= 0) return lowestOfRing(ring, count, skip, n);
  const values: number[] = [];
  for (let k = skip + 1; k <= Math.min(skip + n, count, ring.length); k++)
    values.push(ring[(count - k) % ring.length] as number);
  if (values.length === 0) return Number.POSITIVE_INFINITY;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor(q * values.length))] as number;
}
