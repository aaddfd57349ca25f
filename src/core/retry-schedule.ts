import { MinHeap } from "./min-heap";
import { SecondCounts } from "./second-counts";

/** Tunables of the `retry_schedule` policy. */
export interface RetryScheduleOptions {
  /** Seconds of future the schedule covers (hints never exceed 60 s, so 60 plus slack). */
  horizonS: number;
  /** EWMA weights of the fresh-arrival rate: a fast one (the current load) and a slow one (the baseline). */
  fastAlpha: number;
  slowAlpha: number;
  /** Retries per second are never planned below this share of the drain rate (sustained overload). */
  minRetryShare: number;
  /** A booking for second s holds queue room from `s - leadS` (so the queue can drain room for it)... */
  leadS: number;
  /** ...until `s + graceS` (late clients, clock skew); after that it lapses: a client that never returns frees it. */
  graceS: number;
  /** A booked slot's hint lies in [start + margin, end - margin] of the slot (jitter that stays inside it). */
  slotMarginS: number;
}

/** Measured in the simulator (docs/retry-policy.md, "Tuning"); minRetryShare trades X against time to success. */
export const DEFAULT_RETRY_SCHEDULE_OPTIONS: RetryScheduleOptions = {
  horizonS: 64,
  fastAlpha: 0.3,
  slowAlpha: 0.05,
  minRetryShare: 0.25,
  leadS: 2,
  graceS: 2,
  slotMarginS: 0.05,
};

/**
 * The state of the `retry_schedule` policy: the retries this router has told to come back, counted per
 * second of the future (a ring of one-second buckets), and the rate of fresh (non-retry) arrivals.
 *
 * A promise is a reservation: while a booked second is near (`leadS` before it to `graceS` after it), its
 * outstanding bookings hold queue room that fresh arrivals may not take ({@link reservedRoom}); a returning
 * retry takes one booking ({@link claim}) and may use that room. Bookings lapse `graceS` after their second.
 *
 * Every operation costs O(horizonS + graceS) at most - a constant, whatever the number of outstanding promises -
 * and touches memory only. Nothing is persisted: a restarted router starts with an empty schedule.
 *
 * @example
 * ```ts
 * const schedule = new RetrySchedule(DEFAULT_RETRY_SCHEDULE_OPTIONS, 0);
 * schedule.onArrival(0, false);                                          // a fresh submit
 * const s = schedule.estimate(0, { queueDepth: 100, drainRate: 10 }, () => 0.5); // 10.5: after the queue's 10 s
 * schedule.book(0, s as number);                                         // the hint actually sent
 * schedule.reservedRoom(10_000);                                         // 1: room held for it around second 10
 * schedule.claim(10_500);                                                // true: the retry takes its booking
 * ```
 */
export class RetrySchedule {
  /** Bookings per second: `graceS` behind the current second (still claimable), `horizonS` ahead. */
  private readonly booked: SecondCounts;
  /** The due instant (ms) of every outstanding booking, earliest first: a retry may take one only once it is due. */
  private readonly due = new MinHeap<number>((dueMs) => dueMs);
  /** The last second in which {@link estimate} found no room within the horizon (`undefined`: never). */
  private fullAt: number | undefined;
  private freshInInterval = 0;
  private fast: number | undefined;
  private slow: number | undefined;

  constructor(
    private readonly options: RetryScheduleOptions,
    nowMs: number,
  ) {
    this.booked = new SecondCounts(options.horizonS + options.graceS + 1, options.graceS, nowMs);
  }

  /** Absolute second (floor(ms / 1000)) of the current time, as of the last advance. */
  private get current(): number {
    return this.booked.currentSecond;
  }

  /** The fresh-arrival forecast (requests per second): the lower of the fast and slow EWMAs, `undefined` before the first second. */
  get freshRate(): number | undefined {
    if (this.fast === undefined || this.slow === undefined) return undefined;
    return Math.min(this.fast, this.slow);
  }

  /** Outstanding bookings for the second starting `offsetS` seconds from now (for tests and stats). */
  promisedAt(nowMs: number, offsetS: number): number {
    this.advance(nowMs);
    return this.booked.at(this.current + offsetS);
  }

  /** Counts one submit; only fresh ones (not retries) feed the fresh-arrival rate. */
  onArrival(nowMs: number, retry: boolean): void {
    this.advance(nowMs);
    if (!retry) this.freshInInterval += 1;
  }

  /** Queue room held now for booked retries: outstanding bookings from `graceS` ago to `leadS` ahead. */
  reservedRoom(nowMs: number): number {
    this.advance(nowMs);
    let room = 0;
    for (let s = this.current - this.options.graceS; s <= this.current + this.options.leadS; s++)
      room += this.booked.at(s);
    return room;
  }

  /**
   * A retry arrived: it takes one outstanding booking that is due - told to come back at or before now - and
   * not lapsed (its second ended at most `graceS` ago), the earliest first (it lapses first). Not one due later,
   * even in the same second: a booked client returns at the very instant it was told (plus its round trip), so
   * a retry arriving before that instant is someone else's (an SDK backoff retry, another shard's client), and
   * letting it take the booking leaves the booked client, a moment later, with no room. False when none is due.
   * O(log n) in the outstanding bookings.
   */
  claim(nowMs: number): boolean {
    this.advance(nowMs);
    const head = this.due.peek();
    if (head === undefined || head > nowMs) return false;
    this.due.pop();
    this.booked.remove(Math.floor(head / 1000));
    return true;
  }

  /**
   * The delay (seconds) to suggest: a point inside the earliest one-second slot at or after the queue's drain
   * (`queueDepth / drainRate`, at least 1 s away) whose bookings are below the retry capacity
   * `drainRate - freshRate` (at least `minRetryShare * drainRate`), and that ends within 60 s. `random` places
   * the hint inside the slot (the jitter stays in the booked second). `undefined` when the drain rate is
   * unusable or no slot within 60 s has room: no honest time exists, and the ladder falls back.
   */
  estimate(
    nowMs: number,
    signals: { queueDepth: number; drainRate: number | undefined },
    random: () => number,
  ): number | undefined {
    const rate = signals.drainRate;
    if (rate === undefined || !Number.isFinite(rate) || rate <= 0) return undefined;
    this.advance(nowMs);
    const fresh = this.freshRate ?? 0;
    const capacity = Math.max(rate - fresh, rate * this.options.minRetryShare);
    const nowS = nowMs / 1000;
    const margin = this.options.slotMarginS;
    // The slot's hint must be in [1, 60] s: the last slot ends by now + 60, the first starts 1 s - margin away.
    const last = Math.min(this.current + this.options.horizonS - 1, Math.floor(nowS + 60 - (1 - margin)));
    const first = Math.ceil(nowS + Math.max(1 - margin, signals.queueDepth / rate));
    for (let s = first; s <= last; s++) {
      // (The epsilon keeps float noise in the rate estimates from adding a retry to a full slot.)
      if (this.booked.at(s) < capacity - 1e-9) {
        const start = Math.max(s + margin, nowS + 1);
        const end = Math.min(s + 1 - margin, nowS + 60);
        return start - nowS + random() * Math.max(0, end - start);
      }
    }
    // Every second up to 60 s is booked full: any time would be a guess that brings the client back into a
    // full queue, so there is no computed hint (the ladder gives the static value, or no header).
    this.fullAt = this.current;
    return undefined;
  }

  /**
   * Whether the schedule found no room within the horizon this second or the one before: the router is then
   * telling refused clients that no retry capacity is left for them within 60 s.
   */
  isFull(nowMs: number): boolean {
    this.advance(nowMs);
    return this.fullAt !== undefined && this.current - this.fullAt <= 1;
  }

  /** Records the promise actually sent: a client told to come back after `delayS` seconds. */
  book(nowMs: number, delayS: number): void {
    this.advance(nowMs);
    const second = Math.floor(nowMs / 1000 + delayS);
    if (!(delayS >= 0) || second - this.current >= this.options.horizonS) return;
    this.booked.add(second);
    this.due.push(nowMs + delayS * 1000);
  }

  /** Moves to `nowMs`: bookings older than the grace lapse; each elapsed second closes a fresh-rate interval. */
  private advance(nowMs: number): void {
    // The seconds that fall out of the grace window (current - grace .. now - grace - 1) are cleared.
    const elapsed = this.booked.advance(nowMs);
    if (elapsed === 0) return;
    // One sample per elapsed second: the first holds the interval's count, the rest (idle seconds) are zeros.
    for (let k = 0; k < Math.min(elapsed, 32); k++) this.fold(k === 0 ? this.freshInInterval : 0);
    this.freshInInterval = 0;
    // Lapsed bookings leave the heap here, not only when a retry claims: clients that never come back must not
    // make it grow.
    const lapsedBeforeMs = (this.current - this.options.graceS) * 1000;
    for (let head = this.due.peek(); head !== undefined && head < lapsedBeforeMs; head = this.due.peek())
      this.due.pop();
  }

  /** Bookings not yet claimed or lapsed (for tests and stats). */
  get outstanding(): number {
    return this.due.size;
  }

  private fold(sample: number): void {
    const { fastAlpha, slowAlpha } = this.options;
    this.fast = this.fast === undefined ? sample : fastAlpha * sample + (1 - fastAlpha) * this.fast;
    this.slow = this.slow === undefined ? sample : slowAlpha * sample + (1 - slowAlpha) * this.slow;
  }
}
