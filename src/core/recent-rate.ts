import { ringSlot } from "./ring-slot";

/**
 * Events per second over the last few whole seconds, in one-second buckets (memory: one number per second of the
 * window, whatever the rate). The current second is left out until it is over: a partial second would read as a
 * fall in the rate. Pure: the caller passes the clock.
 *
 * @example
 * ```ts
 * const offered = new RecentRate(3);
 * offered.add(1_000); offered.add(1_500); offered.add(2_200);
 * offered.rate(3_500); // 1: three events in seconds 0-2, second 3 not over yet
 * offered.rate(4_100); // 1: the same three in seconds 1-3
 * ```
 */
export class RecentRate {
  private readonly buckets: number[];
  /** The absolute second of the newest bucket. */
  private current = Number.NEGATIVE_INFINITY;

  constructor(private readonly windowS: number) {
    if (!Number.isInteger(windowS) || windowS < 1)
      throw new RangeError(`window must be a whole number of seconds >= 1, got ${windowS}`);
    this.buckets = new Array<number>(windowS + 1).fill(0);
  }

  /** Counts one event at `nowMs`. */
  add(nowMs: number): void {
    this.advance(nowMs);
    const i = this.slot(this.current);
    this.buckets[i] = (this.buckets[i] ?? 0) + 1;
  }

  /** Events per second over the `windowS` whole seconds before the current one. */
  rate(nowMs: number): number {
    this.advance(nowMs);
    let sum = 0;
    for (const n of this.buckets) sum += n;
    return (sum - (this.buckets[this.slot(this.current)] ?? 0)) / this.windowS;
  }

  private advance(nowMs: number): void {
    const second = Math.floor(nowMs / 1000);
    if (second <= this.current) return;
    const n = this.buckets.length;
    const steps = Math.min(n, second - this.current);
    for (let k = 1; k <= steps; k++) this.buckets[this.slot(second - steps + k)] = 0;
    this.current = second;
  }

  private slot(second: number): number {
    return ringSlot(second, this.buckets.length);
  }
}
