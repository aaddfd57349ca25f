import { type FreshArrivalForecastOptions, riseLength } from "../../src/core/fresh-arrival-forecast";

/**
 * The forecast property tests' model of `FreshArrivalForecast` (test/node/core/load-estimators.property.test.ts,
 * test/node/core/fresh-arrival-forecast.property.test.ts): what the forecast is by its JSDoc, recomputed from every
 * closed second's count of fresh arrivals - the slow and fast smoothed rates, the baseline, the moving means and
 * the overload floor (its quantile over the window's seconds, each once; the rise skipped; read before the queue's
 * fill time when at or above the drain rate). One model for both, so a change of the contract is made once.
 *
 * @example
 * ```ts
 * const model = new ForecastModel(DEFAULT_CAPACITY_BOOKING_OPTIONS);
 * model.count(5);
 * model.closeSeconds(1);
 * model.recent; // 5 (the first second sets the smoothed rates)
 * ```
 */
export class ForecastModel {
  private pending = 0;
  /** Per closed second: the count, the slow and fast EWMAs, the moving mean of the counts. */
  readonly counts: number[] = [];
  readonly slow: number[] = [];
  readonly fast: number[] = [];
  readonly moving: number[] = [];
  floor = 0;

  constructor(private readonly o: FreshArrivalForecastOptions) {}

  count(n: number): void {
    this.pending += n;
  }

  /** `elapsed` seconds ended: the first with the arrivals counted, the others empty (the JSDoc's definition). */
  closeSeconds(elapsed: number): void {
    for (let k = 0; k < elapsed; k++) this.closeOne(k === 0 ? this.pending : 0);
    this.pending = 0;
  }

  private closeOne(count: number): void {
    const prevSlow = this.slow.at(-1);
    const prevFast = this.fast.at(-1);
    this.counts.push(count);
    this.slow.push(prevSlow === undefined ? count : this.o.freshAlpha * count + (1 - this.o.freshAlpha) * prevSlow);
    this.fast.push(prevFast === undefined ? count : this.o.burstAlpha * count + (1 - this.o.burstAlpha) * prevFast);
    const n = Math.max(1, Math.floor(this.o.overloadFloorMovingS));
    const last = this.counts.slice(-n);
    this.moving.push(last.reduce((a, b) => a + b, 0) / last.length);
  }

  /** The lowest slowly smoothed rate of the last `baselineWindowS` seconds (at least one). */
  get baseline(): number | undefined {
    if (this.slow.length === 0) return undefined;
    return Math.min(...this.slow.slice(-Math.max(1, this.o.baselineWindowS)));
  }

  get recent(): number {
    return this.fast.at(-1) ?? 0;
  }

  /** The `q`-quantile (index floor(q * n) of the sorted values) of `values` and `extra`; Infinity when empty. */
  private static quantile(values: number[], q: number, extra?: number): number {
    const all = extra === undefined ? [...values] : [extra, ...values];
    if (all.length === 0) return Number.POSITIVE_INFINITY;
    all.sort((a, b) => a - b);
    return all[Math.min(all.length - 1, Math.max(0, Math.floor(q * all.length)))] as number;
  }

  /** The `n` values of `series` before its last `skip` (fewer when the history is shorter). */
  private static window(series: number[], skip: number, n: number): number[] {
    return series.slice(Math.max(0, series.length - skip - n), Math.max(0, series.length - skip));
  }

  overloadFloor(starts: boolean, queueDepth: number, drainRate: number): number {
    const w = Math.floor(this.o.overloadFloorS);
    if (!(w > 0)) return 0;
    const current = this.recent;
    if (!starts) {
      this.floor = Math.min(this.floor, current);
      return this.floor;
    }
    const q = this.o.overloadFloorQuantile;
    const fastRing = Float64Array.from(this.fast);
    const rise =
      this.o.overloadFloorSkipsRise > 1 ? riseLength(fastRing, fastRing.length, w, this.o.overloadFloorSkipsRise) : 0;
    // The window's seconds, each once: the current rate is its newest second already (9a73774 stopped counting it twice).
    let floor = ForecastModel.quantile(ForecastModel.window(this.fast, rise, w), q);
    if (!Number.isFinite(floor)) floor = 0;
    if (Math.floor(this.o.overloadFloorMovingS) > 0 && floor < drainRate) {
      const moving = ForecastModel.quantile(ForecastModel.window(this.moving, rise, w), q);
      if (moving < drainRate) floor = Math.max(floor, moving);
    }
    if (floor >= drainRate) {
      const fillS = Math.ceil(Math.min(30, queueDepth / drainRate));
      const before = ForecastModel.quantile(ForecastModel.window(this.fast, fillS, w), q);
      floor = Number.isFinite(before) ? before : 0;
    }
    this.floor = floor;
    return floor;
  }
}
