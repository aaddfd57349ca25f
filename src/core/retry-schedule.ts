/** Tunables of the `retry_schedule` policy. */
export interface RetryScheduleOptions {
  /** Seconds of future the schedule covers (hints never exceed 60 s, so 60 plus slack for jitter). */
  horizonS: number;
  /** EWMA weights of the fresh-arrival rate: a fast one (the current load) and a slow one (the baseline). */
  fastAlpha: number;
  slowAlpha: number;
  /** Retries per second are never planned below this share of the drain rate (sustained overload). */
  minRetryShare: number;
}

export const DEFAULT_RETRY_SCHEDULE_OPTIONS: RetryScheduleOptions = {
  horizonS: 64,
  fastAlpha: 0.3,
  slowAlpha: 0.05,
  minRetryShare: 0.1,
};

/**
 * The state of the `retry_schedule` policy: the retries this router has already told to come back, counted per
 * second of the future (a ring of `horizonS` one-second buckets), and the rate of fresh arrivals (every submit
 * minus the promised retries that fell due), so a new refusal is given the earliest second whose planned
 * retries still fit in the capacity that fresh arrivals leave free, after the current queue has drained.
 *
 * Every operation costs O(horizonS) at most - a constant, whatever the number of outstanding promises - and
 * touches memory only. Nothing is persisted: a restarted router starts with an empty schedule.
 *
 * @example
 * ```ts
 * const schedule = new RetrySchedule(DEFAULT_RETRY_SCHEDULE_OPTIONS, 0);
 * schedule.onArrival(0);                                           // every submit
 * const s = schedule.estimate(0, { queueDepth: 100, drainRate: 10 }); // 10.5: after the queue's 10 s
 * schedule.book(0, s as number);                                   // the jittered hint actually sent
 * ```
 */
export class RetrySchedule {
  private readonly buckets: Float64Array;
  /** Absolute index (floor(ms / 1000)) of the oldest bucket the ring holds. */
  private base: number;
  private arrivalsInInterval = 0;
  private dueInInterval = 0;
  private fast: number | undefined;
  private slow: number | undefined;

  constructor(
    private readonly options: RetryScheduleOptions,
    nowMs: number,
  ) {
    this.buckets = new Float64Array(options.horizonS);
    this.base = Math.floor(nowMs / 1000);
  }

  /** The fresh-arrival forecast (requests per second): the lower of the fast and slow EWMAs, `undefined` before the first second. */
  get freshRate(): number | undefined {
    if (this.fast === undefined || this.slow === undefined) return undefined;
    return Math.min(this.fast, this.slow);
  }

  /** Retries promised for the second starting `offsetS` seconds from now (for tests and stats). */
  promisedAt(nowMs: number, offsetS: number): number {
    this.advance(nowMs);
    return this.buckets[this.slot(this.base + offsetS)] ?? 0;
  }

  /** Counts one submit (fresh or retry: the router cannot tell them apart). */
  onArrival(nowMs: number): void {
    this.advance(nowMs);
    this.arrivalsInInterval += 1;
  }

  /**
   * The delay (seconds) to suggest: the start of the earliest one-second slot at or after the queue's drain
   * (`queueDepth / drainRate`) whose promised retries are below the retry capacity `drainRate - freshRate`
   * (at least `minRetryShare * drainRate`), plus half a slot; if every slot up to 60 s is full, the least
   * loaded one (so an overload spreads its retries evenly instead of stacking them at the 60 s clamp).
   * `undefined` when the drain rate is unusable (the ladder falls back).
   */
  estimate(nowMs: number, signals: { queueDepth: number; drainRate: number | undefined }): number | undefined {
    const rate = signals.drainRate;
    if (rate === undefined || !Number.isFinite(rate) || rate <= 0) return undefined;
    this.advance(nowMs);
    const fresh = this.freshRate ?? 0;
    const capacity = Math.max(rate - fresh, rate * this.options.minRetryShare);
    const nowOffsetS = nowMs / 1000 - this.base;
    const last = Math.min(this.options.horizonS - 1, Math.floor(nowOffsetS + 60) - 1);
    const first = Math.min(
      last,
      Math.max(Math.ceil(nowOffsetS + signals.queueDepth / rate), Math.ceil(nowOffsetS + 1)),
    );
    let best = first;
    for (let i = first; i <= last; i++) {
      const load = this.buckets[this.slot(this.base + i)] ?? 0;
      // (The epsilon keeps float noise in the rate estimates from adding a retry to a full slot.)
      if (load < capacity - 1e-9) return i + 0.5 - nowOffsetS;
      if (load < (this.buckets[this.slot(this.base + best)] ?? 0)) best = i;
    }
    return best + 0.5 - nowOffsetS;
  }

  /** Records the promise actually sent: a client told to come back after `delayS` seconds. */
  book(nowMs: number, delayS: number): void {
    this.advance(nowMs);
    const index = Math.floor(nowMs / 1000 + delayS);
    if (!(delayS >= 0) || index - this.base >= this.options.horizonS) return;
    const slot = this.slot(index);
    this.buckets[slot] = (this.buckets[slot] ?? 0) + 1;
  }

  private slot(index: number): number {
    return ((index % this.options.horizonS) + this.options.horizonS) % this.options.horizonS;
  }

  /** Moves the ring to `nowMs`: seconds that have passed close an interval of the fresh-rate EWMAs. */
  private advance(nowMs: number): void {
    const current = Math.floor(nowMs / 1000);
    if (current <= this.base) return;
    const steps = Math.min(current - this.base, this.options.horizonS);
    for (let k = 0; k < steps; k++) {
      const slot = this.slot(this.base + k);
      this.dueInInterval += this.buckets[slot] ?? 0;
      this.buckets[slot] = 0;
    }
    // One sample per elapsed second: the first holds the interval's counts, the rest (idle seconds) are zeros.
    const elapsed = current - this.base;
    const sample = Math.max(0, this.arrivalsInInterval - this.dueInInterval);
    for (let k = 0; k < Math.min(elapsed, 32); k++) this.fold(k === 0 ? sample : 0);
    this.arrivalsInInterval = 0;
    this.dueInInterval = 0;
    this.base = current;
  }

  private fold(sample: number): void {
    const { fastAlpha, slowAlpha } = this.options;
    this.fast = this.fast === undefined ? sample : fastAlpha * sample + (1 - fastAlpha) * this.fast;
    this.slow = this.slow === undefined ? sample : slowAlpha * sample + (1 - slowAlpha) * this.slow;
  }
}
