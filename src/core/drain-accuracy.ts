/** One rejection's hint beside the time its queue actually took to drain. */
export interface DrainObservation {
  /** When the rejection happened (ms). */
  atMs: number;
  /** Queue depth at the rejection. */
  queueDepth: number;
  /** The suggested delay (jittered, seconds), or `undefined` when no header was sent. */
  suggestedS: number | undefined;
  /** Seconds until the drain counter passed its value at the rejection plus the depth. */
  observedS: number;
}

/**
 * Upper bounds (seconds) of the drain-time error histogram: error = suggested - observed, so a positive error is a
 * hint longer than the queue took to drain, a negative one a hint too short. The last bound is +Inf.
 */
export const DRAIN_ERROR_BOUNDS = [-60, -30, -10, -5, -2, -1, 0, 1, 2, 5, 10, 30, 60, Number.POSITIVE_INFINITY];

/**
 * A cumulative-count-ready histogram since start: per-bucket counts (not cumulative), their sum and count.
 *
 * @example
 * ```ts
 * const h: HistogramSnapshot = { buckets: [{ le: 0, count: 1 }, { le: Infinity, count: 2 }], sum: 3.5, count: 3 };
 * ```
 */
export interface HistogramSnapshot {
  buckets: { le: number; count: number }[];
  sum: number;
  count: number;
}

interface Pending {
  atMs: number;
  queueDepth: number;
  suggestedS: number | undefined;
  targetDrainCount: number;
}

/**
 * Measures how good the hints are: a rejection at time t with depth D and drain counter C0 is "observed
 * drained" when the drain counter reaches C0 + D; observed drain time = that time - t. Bounded: the oldest
 * pending records and results are dropped first. A rejection or drain reported with a number that is not finite (a
 * NaN time, depth, counter or hint) is ignored: it would never be observed, or poison every later sum.
 *
 * @example
 * ```ts
 * const tracker = new DrainAccuracyTracker();
 * tracker.recordRejection(1_000, 2, 10, 3);
 * tracker.onDrain(2_000, 11);
 * tracker.onDrain(4_000, 12); // the counter reached 10 + 2
 * tracker.recent(); // [{ atMs: 1000, queueDepth: 2, suggestedS: 3, observedS: 3 }]
 * // Keep every observation (the simulator's evaluation), with room for a burst's pending records:
 * const all: DrainObservation[] = [];
 * new DrainAccuracyTracker(1_000_000, 256, (o) => all.push(o));
 * ```
 */
export class DrainAccuracyTracker {
  /** Sorted by target drain count, ascending. */
  private readonly pending: Pending[] = [];
  private readonly results: DrainObservation[] = [];
  /** Every observation with a hint since start (not only the recent window): suggested - observed. */
  private readonly errorCounts = DRAIN_ERROR_BOUNDS.map(() => 0);
  private errorSum = 0;
  private errorCount = 0;

  /**
   * `onObservation` sees every completed observation, not just the bounded recent window (the simulator
   * keeps them all; the Durable Object does not pass one).
   */
  constructor(
    private readonly maxPending = 1024,
    private readonly maxResults = 256,
    private readonly onObservation?: (observation: DrainObservation) => void,
  ) {}

  recordRejection(nowMs: number, queueDepth: number, drainCount: number, suggestedS: number | undefined): void {
    if (!(Number.isFinite(nowMs) && Number.isFinite(queueDepth) && Number.isFinite(drainCount))) return;
    if (suggestedS !== undefined && !Number.isFinite(suggestedS)) return;
    const record = { atMs: nowMs, queueDepth, suggestedS, targetDrainCount: drainCount + queueDepth };
    // An empty queue (depth 0) has drained already: observed at once, not at the next drain.
    if (queueDepth <= 0) {
      this.observe(record, nowMs);
      return;
    }
    // Targets are almost always non-decreasing (the depth at rejection is the queue bound), so this scan from
    // the end is O(1) in practice.
    let i = this.pending.length;
    while (i > 0 && (this.pending[i - 1] as Pending).targetDrainCount > record.targetDrainCount) i -= 1;
    this.pending.splice(i, 0, record);
    if (this.pending.length > this.maxPending) {
      // The oldest record goes, not the nearest target (a later rejection at a shorter queue has a nearer one).
      let oldest = 0;
      for (let j = 1; j < this.pending.length; j++)
        if ((this.pending[j] as Pending).atMs < (this.pending[oldest] as Pending).atMs) oldest = j;
      this.pending.splice(oldest, 1);
    }
  }

  /** Call after each drain with the new drain counter. */
  onDrain(nowMs: number, drainCount: number): void {
    if (!(Number.isFinite(nowMs) && Number.isFinite(drainCount))) return;
    while (this.pending.length > 0 && (this.pending[0] as Pending).targetDrainCount <= drainCount)
      this.observe(this.pending.shift() as Pending, nowMs);
  }

  private observe(done: Pending, nowMs: number): void {
    const observation = {
      atMs: done.atMs,
      queueDepth: done.queueDepth,
      suggestedS: done.suggestedS,
      observedS: (nowMs - done.atMs) / 1000,
    };
    this.results.push(observation);
    if (observation.suggestedS !== undefined) {
      const error = observation.suggestedS - observation.observedS;
      const i = DRAIN_ERROR_BOUNDS.findIndex((le) => error <= le);
      this.errorCounts[i] = (this.errorCounts[i] ?? 0) + 1;
      this.errorSum += error;
      this.errorCount += 1;
    }
    this.onObservation?.(observation);
    if (this.results.length > this.maxResults) this.results.shift();
  }

  /** Completed observations, oldest first. */
  recent(): DrainObservation[] {
    return [...this.results];
  }

  /**
   * The drain-time error (suggested - observed, seconds) of every hinted observation since start, as a histogram
   * over {@link DRAIN_ERROR_BOUNDS} (per-bucket counts), with its sum and count.
   *
   * @example
   * ```ts
   * tracker.recordRejection(0, 1, 0, 3);
   * tracker.onDrain(2_000, 1); // observed 2 s, suggested 3 s: error +1 s
   * tracker.errorHistogram(); // { buckets: [..., { le: 1, count: 1 }, ...], sum: 1, count: 1 }
   * ```
   */
  errorHistogram(): HistogramSnapshot {
    return {
      buckets: DRAIN_ERROR_BOUNDS.map((le, i) => ({ le, count: this.errorCounts[i] ?? 0 })),
      sum: this.errorSum,
      count: this.errorCount,
    };
  }

  get pendingCount(): number {
    return this.pending.length;
  }
}
