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

/**
 * The drain-rate EWMA: assignments per second out of this router's queue.
 *
 * Intervals are closed lazily, on the next event after they end, so the estimator needs no timer (the
 * Durable Object and the simulator both just call it). An interval with no drains and nothing queued is
 * idle and skipped: no sample, no decay. A busy interval with zero drains is a sample of rate 0.
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
   * Closes the current interval if it has ended. `queueDepth` is the depth right now: a non-empty queue
   * makes the interval busy, and the next interval starts busy if it is still non-empty.
   */
  advance(nowMs: number, queueDepth: number): void {
    if (queueDepth > 0) this.busyInInterval = true;
    const elapsedMs = nowMs - this.intervalStartMs;
    if (elapsedMs < this.options.intervalS * 1000) return;
    this.addSample(this.drainsInInterval, elapsedMs / 1000, this.busyInInterval);
    this.intervalStartMs = nowMs;
    this.drainsInInterval = 0;
    this.busyInInterval = queueDepth > 0;
  }

  /** Counts one drain: a replica accepted a request from this router's queue. */
  recordDrain(nowMs: number, queueDepth: number): void {
    this.advance(nowMs, queueDepth);
    this.drainsInInterval += 1;
    this.drainCount += 1;
  }
}
