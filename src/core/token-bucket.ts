/** Slack for the refill's float arithmetic (units and ms): a wait of 1700.0000001 ms is 1700 ms. */
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
 * Pure: the clock is a parameter of every call.
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
    // Tolerance for the refill's float arithmetic: at the instant `waitMs` named, the amount fits.
    if (this.level + FIT_TOLERANCE < amount) return false;
    this.level -= amount;
    return true;
  }

  /** Milliseconds until `amount` is available (0: now); `Infinity` when `amount` exceeds the limit itself. */
  waitMs(amount: number, nowMs: number): number {
    if (amount > this.rate.limit) return Number.POSITIVE_INFINITY;
    this.refill(nowMs);
    const missing = amount - this.level;
    if (missing <= FIT_TOLERANCE) return 0;
    // At least 1 ms: what does not fit now (`take` refuses it) must not be told it does.
    return Math.max(1, Math.ceil((missing * this.rate.periodMs) / this.rate.limit - FIT_TOLERANCE));
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
