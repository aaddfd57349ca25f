/** Tunables of the drain-rate estimator (spec: alpha 0.3, interval 1 s, warm after 3 samples). */
export interface DrainRateOptions {
  /** EWMA weight of the newest sample, in (0, 1]. */
  alpha: number;
  /** Length of one sampling interval, in seconds. */
  intervalS: number;
  /** Samples needed before the estimate is trusted. */
  warmupSamples: number;
}

export const DEFAULT_DRAIN_RATE_OPTIONS: DrainRateOptions = { alpha: 0.3, intervalS: 1, warmupSamples: 3 };

/** Busy intervals with no drain folded in at once, at most: 0.7^200 of any rate is 0 to a double's precision. */
const MAX_ZERO_SAMPLES = 200;

/**
 * The drain-rate EWMA: assignments per second out of this router's queue.
 *
 * Intervals are closed lazily, on the next event after they end, so the estimator needs no timer (the
 * Durable Object and the simulator both just call it); each is `intervalS` long however late it is closed. An
 * interval with no drains and nothing queued is idle and skipped: no sample, no decay. A busy interval with zero
 * drains is a sample of rate 0.
 *
 * @example
 * ```ts
 * const est = new DrainRateEstimator(DEFAULT_DRAIN_RATE_OPTIONS, 0);
 * est.addSample(10, 1, true);
 * est.addSample(20, 1, true);
 * est.rate; // 0.3 * 20 + 0.7 * 10 = 13
 * ```
 */
export class DrainRateEstimator {
  private currentRate: number | undefined;
  private sampleCount = 0;
  private intervalStartMs: number;
  private drainsInInterval = 0;
  private busyInInterval = false;
  /** The queue's depth at the last event: what it held since (nothing else moves it between events). */
  private lastDepth = 0;
  /** Drains since the estimator was created (the "drain counter" of the accuracy record). */
  drainCount = 0;

  constructor(
    private readonly options: DrainRateOptions,
    nowMs: number,
  ) {
    this.intervalStartMs = nowMs;
  }

  /** The current estimate in drains per second; `undefined` before the first sample. */
  get rate(): number | undefined {
    return this.currentRate;
  }

  /** Number of samples taken. */
  get samples(): number {
    return this.sampleCount;
  }

  /** True once enough samples were taken to trust the estimate. */
  get warm(): boolean {
    return this.sampleCount >= this.options.warmupSamples;
  }

  /**
   * Folds one interval into the EWMA (the spec's rule, exposed for its test vectors).
   * Zero or negative elapsed time is ignored; an idle interval (no drains, `busy` false) is skipped.
   */
  addSample(drains: number, elapsedS: number, busy: boolean): void {
    if (!(elapsedS > 0)) return;
    if (drains === 0 && !busy) return;
    const sample = drains / elapsedS;
    const { alpha } = this.options;
    this.currentRate = this.currentRate === undefined ? sample : alpha * sample + (1 - alpha) * this.currentRate;
    this.sampleCount += 1;
  }

  /**
   * Closes the current interval if it has ended, and any whole intervals since. `queueDepth` is the depth right now
   * (it stays what it is until the next event): a non-empty queue makes the interval busy.
   *
   * An interval closed late is still `intervalS` long, as the spec's `drains_in_interval / interval_s` has it: every
   * drain counted in it fell inside it (a drain closes an ended interval first), and the time after it is the
   * intervals that followed - idle, and skipped, if the queue was empty at the last event; busy with no drain, each a
   * sample of 0, if it held requests. Dividing by the time to the late event instead read a burst followed by a
   * quiet second as half the rate it drained at, and the hints as twice as long.
   */
  advance(nowMs: number, queueDepth: number): void {
    const intervalMs = this.options.intervalS * 1000;
    const elapsedMs = nowMs - this.intervalStartMs;
    if (elapsedMs >= intervalMs) {
      this.addSample(this.drainsInInterval, this.options.intervalS, this.busyInInterval);
      const whole = Math.floor(elapsedMs / intervalMs);
      this.drainsInInterval = 0;
      if (this.lastDepth > 0) {
        for (let i = 1; i < Math.min(whole, MAX_ZERO_SAMPLES); i++) this.addSample(0, this.options.intervalS, true);
        // The interval now open began before this event if the clock is past its edge: the queue held requests then.
        this.intervalStartMs += whole * intervalMs;
        this.busyInInterval = this.intervalStartMs < nowMs;
      } else {
        this.intervalStartMs = nowMs;
        this.busyInInterval = false;
      }
    }
    if (queueDepth > 0) this.busyInInterval = true;
    this.lastDepth = queueDepth;
  }

  /** Counts one drain: a replica accepted a request from this router's queue. */
  recordDrain(nowMs: number, queueDepth: number): void {
    this.advance(nowMs, queueDepth);
    this.drainsInInterval += 1;
    this.drainCount += 1;
  }
}
