import { RecentRate } from "./recent-rate";

/** Seconds of offered attempts that tell a draining queue from a standing one (see `drainingOfferedShare`). */
export const DRAINING_WINDOW_S = 5;

/** The queue-delay target's settings (`booking.*` in the router's config; see `BookingAdmission`). */
export interface StandingQueueOptions {
  /** The queue's delay target, seconds of drain at the current rate (`undefined`: no target). */
  queueDelayTargetS?: number | undefined;
  /** How long the queue must stay above the target before it counts as standing, and how long without a refusal ends it. */
  standingIntervalS: number;
  /** Never standing while the attempts offered over `DRAINING_WINDOW_S` fall short of this share of the drain rate. */
  drainingOfferedShare?: number | undefined;
}

/**
 * Whether the router's queue stands above its delay target: CoDel's idea (a burst's transient queue is kept, a
 * standing one is not) with the router's signals. The queue stands once it has not been at or below the target's
 * depth for `standingIntervalS`; it stays standing until nothing has been refused for that long (at least
 * `DRAINING_WINDOW_S`). CoDel leaves its dropping state when the delay falls; here the target itself holds the delay
 * down, so the overload's end is what is watched, and a moment without a refusal is not its end. A queue that drains
 * by itself (the attempts offered lately below `drainingOfferedShare` of the drain rate) never stands. Pure: the
 * caller passes the clock and the drain rate (`undefined` while the estimate is cold). A clock that goes back moves
 * none of its instants back (the last short queue, the last refusal): a spell neither begins nor ends early for it.
 *
 * @example
 * ```ts
 * const queue = new StandingQueue({ queueDelayTargetS: 1, standingIntervalS: 30 }, () => 10, 0);
 * queue.targetDepth(); // 10: one second of drain at 10 req/s
 * queue.update(1_000, 50); // false: above the target for 1 s only
 * queue.update(31_000, 50); // true: above it for 30 s
 * queue.refused(31_000);
 * queue.update(61_000, 50); // false: nothing refused for 30 s
 * ```
 */
export class StandingQueue {
  private standing = false;
  /** The last moment the queue was at or below the target's depth (or the standing state ended). */
  private shortQueueAtMs: number;
  private refusedAtMs = Number.NEGATIVE_INFINITY;
  /** Attempts offered (absent while `drainingOfferedShare` is off). */
  private readonly offered: RecentRate | undefined;

  constructor(
    private readonly options: StandingQueueOptions,
    private readonly drainRate: () => number | undefined,
    nowMs: number,
  ) {
    this.shortQueueAtMs = nowMs;
    if (options.drainingOfferedShare !== undefined) this.offered = new RecentRate(DRAINING_WINDOW_S);
  }

  /** Whether the queue stood above the target at the last `update`. */
  get isStanding(): boolean {
    return this.standing;
  }

  /** Counts an attempt offered to the queue (for `drainingOfferedShare`). */
  offer(nowMs: number): void {
    this.offered?.add(nowMs);
  }

  /** Notes a refusal: the standing state ends only after `standingIntervalS` without one. */
  refused(nowMs: number): void {
    this.refusedAtMs = Math.max(this.refusedAtMs, nowMs);
  }

  /** Moves the state to `nowMs` with the queue `queueDepth` deep; returns whether it stands. */
  update(nowMs: number, queueDepth: number): boolean {
    // Whole milliseconds: 16.1 s is 16100.000000000002 ms in floats, which a clock in ms reaches one update late.
    const intervalMs = Math.round(this.options.standingIntervalS * 1000);
    const draining = this.isDraining(nowMs);
    if (this.standing) {
      // Leave once the overload has passed: nothing refused for a whole interval, or the queue draining.
      if (draining || nowMs - this.refusedAtMs >= Math.max(intervalMs, DRAINING_WINDOW_S * 1000)) {
        this.standing = false;
        this.shortQueueAtMs = Math.max(this.shortQueueAtMs, nowMs);
      }
    } else if (draining || queueDepth <= this.targetDepth()) {
      this.shortQueueAtMs = Math.max(this.shortQueueAtMs, nowMs);
    } else if (nowMs - this.shortQueueAtMs >= intervalMs) {
      this.standing = true;
      // The spell's quiet time starts with it: a refusal long before (or none yet, while the queue was kept) is not
      // "nothing refused for an interval", or the next arrival would end a spell that refused nothing yet.
      this.refusedAtMs = Math.max(this.refusedAtMs, nowMs);
    }
    return this.standing;
  }

  /** The queue depth the delay target allows: its seconds of drain at the current rate (no bound while cold). */
  targetDepth(): number {
    const target = this.options.queueDelayTargetS;
    const rate = this.drainRate();
    if (target === undefined || rate === undefined || !(rate > 0)) return Number.POSITIVE_INFINITY;
    return Math.max(1, Math.ceil(target * rate));
  }

  /** Whether the attempts offered lately fall short of `drainingOfferedShare` of the drain rate. */
  private isDraining(nowMs: number): boolean {
    const share = this.options.drainingOfferedShare;
    const rate = this.drainRate();
    if (share === undefined || rate === undefined || !(rate > 0)) return false;
    return this.offered !== undefined && this.offered.rate(nowMs) < share * rate;
  }
}
