/**
 * Slack for the refill's float arithmetic, in units: an amount at most this much above the level fits. `take` and
 * `waitMs` use the same slack (not one in milliseconds), so they agree on the instant it fits.
 */
const FIT_TOLERANCE = 1e-6;

/**
 * A token bucket that refills continuously: `limit` units per `periodMs`, holding at most `limit`. This is the
 * quota rule of OpenAI's per-key limits ("replenished continuously"; the `x-ratelimit-reset-*` headers are the
 * time until the bucket is full again), and it is the same schedule as GCRA: a request that does not fit is
 * told exactly when it will, because the refill is a straight line.
 *
 * The level may go below zero: a charge corrected upwards after the fact (a response used more tokens than
 * reserved) is a debt, repaid by the refill before anything else is admitted.
 *
 * Amounts may be fractional, and an amount above `limit` never fits (`waitMs`: `Infinity`; `take`: false).
 *
 * Pure: the clock is a parameter of every call. A clock that goes back refills nothing, and nothing refills until
 * it is past the latest instant the bucket saw again (no stretch of time is refilled twice); a wait is counted from
 * the clock passed, so it includes the time until then.
 *
 * @example
 * ```ts
 * const bucket = new TokenBucket({ limit: 30, periodMs: 60_000 }, 0);
 * bucket.take(30, 0);     // true: a full minute's allowance at once
 * bucket.waitMs(1, 0);    // 2000: one request refills every 60 s / 30
 * bucket.resetMs(0);      // 60_000: until the bucket is full again
 * ```
 */
export class TokenBucket {
  private level: number;
  private atMs: number;

  constructor(
    readonly rate: BucketRate,
    nowMs: number,
  ) {
    this.level = rate.limit;
    this.atMs = nowMs;
  }

  /** Units available now (fractional; negative while a debt is being repaid). */
  available(nowMs: number): number {
    this.refill(nowMs);
    return this.level;
  }

  /** Takes `amount` if that much is available now; false (and nothing taken) otherwise. */
  take(amount: number, nowMs: number): boolean {
    this.refill(nowMs);
    // Tolerance for the refill's float arithmetic: at the instant `waitMs` named, the amount fits. Above the limit
    // it never does (`waitMs` says `Infinity`), however close.
    if (amount > this.rate.limit || this.level + FIT_TOLERANCE < amount) return false;
    this.level -= amount;
    return true;
  }

  /**
   * Milliseconds from `nowMs` until `amount` is available (0: now): `take` takes it then and not a millisecond
   * before, if nothing else happens meanwhile; `Infinity` when `amount` exceeds the limit itself.
   */
  waitMs(amount: number, nowMs: number): number {
    if (amount > this.rate.limit) return Number.POSITIVE_INFINITY;
    this.refill(nowMs);
    const missing = amount - this.level;
    if (missing <= FIT_TOLERANCE) return 0;
    // The slack in units, as `take`'s: at the named instant it fits, a millisecond before it does not. Counted from
    // the caller's clock: one behind the latest instant seen refills nothing until it is past that instant again.
    // At least 1 ms: what does not fit now (`take` refuses it) must not be told it does.
    const refillMs = ((missing - FIT_TOLERANCE) * this.rate.periodMs) / this.rate.limit;
    const behind = this.atMs - nowMs;
    const wholeMs = Math.floor(behind); // added apart: a fraction of a millisecond is not lost to a long time behind
    return Math.max(1, wholeMs + Math.ceil(refillMs + (behind - wholeMs)));
  }

  /** Milliseconds until the bucket is full again (OpenAI's `x-ratelimit-reset-*`). */
  resetMs(nowMs: number): number {
    return this.waitMs(this.rate.limit, nowMs);
  }

  /** Adds `amount` back (a refund, never above the limit) or, when negative, charges it even into debt. */
  adjust(amount: number, nowMs: number): void {
    this.refill(nowMs);
    this.level = Math.min(this.rate.limit, this.level + amount);
  }

  private refill(nowMs: number): void {
    const elapsed = Math.max(0, nowMs - this.atMs);
    this.level = Math.min(this.rate.limit, this.level + (elapsed * this.rate.limit) / this.rate.periodMs);
    this.atMs = Math.max(this.atMs, nowMs);
  }
}

/** A bucket's refill: `limit` units per `periodMs` (and at most `limit` held). */
export interface BucketRate {
  limit: number;
  periodMs: number;
}
