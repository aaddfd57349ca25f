import { ringSlot } from "./ring-slot";

/**
 * Counts per absolute second (floor(ms / 1000)) in a moving window: the seconds from `keepS` before the current one
 * to the end of the ring (`size` seconds in all). A ring of one-second buckets: moving the clock forward clears the
 * seconds that fall out of the window behind, so the ring is reused for the seconds ahead. Both ledgers of booked
 * retries (`CapacityBooking`, the legacy `RetrySchedule`) count their bookings per second in one.
 *
 * Pure: the caller passes the time.
 *
 * @example
 * ```ts
 * const counts = new SecondCounts(8, 1, 10_000); // seconds 9 to 16 (second 10 is the current one)
 * counts.add(12);
 * counts.at(12);          // 1
 * counts.advance(14_500); // 4: four seconds elapsed; seconds 9 to 12 cleared
 * counts.at(12);          // 0
 * ```
 */
export class SecondCounts {
  private readonly buckets: Float64Array;
  private current: number;

  /**
   * @param size Seconds in the ring: `keepS` behind the current one, the current one, and the rest ahead.
   * @param keepS Seconds behind the current one that are kept (still counted) before they are cleared.
   * @param nowMs The clock's time now.
   */
  constructor(
    private readonly size: number,
    private readonly keepS: number,
    nowMs: number,
  ) {
    this.buckets = new Float64Array(size);
    this.current = Math.floor(nowMs / 1000);
  }

  /** The current second, as of the last `advance`. */
  get currentSecond(): number {
    return this.current;
  }

  /**
   * Moves to `nowMs`: the seconds that fall out of the window behind (from `keepS` before the old current second to
   * `keepS` before the new one) are cleared. Returns how many whole seconds elapsed (0 when none did, or the clock
   * went back).
   */
  advance(nowMs: number): number {
    const now = Math.floor(nowMs / 1000);
    if (now <= this.current) return 0;
    const elapsed = now - this.current;
    for (let k = 0; k < Math.min(elapsed, this.size); k++) this.buckets[this.slot(this.current - this.keepS + k)] = 0;
    this.current = now;
    return elapsed;
  }

  /** The count of `second` (absolute); a second outside the window reads whatever shares its bucket. */
  at(second: number): number {
    return this.buckets[this.slot(second)] ?? 0;
  }

  /** One more in `second`. */
  add(second: number): void {
    const slot = this.slot(second);
    this.buckets[slot] = (this.buckets[slot] ?? 0) + 1;
  }

  /**
   * One less in `second`, never below 0. A second outside the window (already cleared behind, or not yet reached)
   * is left alone: its bucket now counts another second.
   */
  remove(second: number): void {
    const first = this.current - this.keepS;
    if (second < first || second >= first + this.size) return;
    const slot = this.slot(second);
    this.buckets[slot] = Math.max(0, (this.buckets[slot] ?? 0) - 1);
  }

  private slot(second: number): number {
    return ringSlot(second, this.size);
  }
}
