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

interface Pending {
  atMs: number;
  queueDepth: number;
  suggestedS: number | undefined;
  targetDrainCount: number;
}

/**
 * Measures how good the hints are: a rejection at time t with depth D and drain counter C0 is "observed
 * drained" when the drain counter reaches C0 + D; observed drain time = that time - t. Bounded: the oldest
 * pending records and results are dropped first.
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
    const record = { atMs: nowMs, queueDepth, suggestedS, targetDrainCount: drainCount + queueDepth };
    // Targets are almost always non-decreasing (the depth at rejection is the queue bound), so this scan from
    // the end is O(1) in practice.
    let i = this.pending.length;
    while (i > 0 && (this.pending[i - 1] as Pending).targetDrainCount > record.targetDrainCount) i -= 1;
    this.pending.splice(i, 0, record);
    if (this.pending.length > this.maxPending) this.pending.shift();
  }

  /** Call after each drain with the new drain counter. */
  onDrain(nowMs: number, drainCount: number): void {
    while (this.pending.length > 0 && (this.pending[0] as Pending).targetDrainCount <= drainCount) {
      const done = this.pending.shift() as Pending;
      const observation = {
        atMs: done.atMs,
        queueDepth: done.queueDepth,
        suggestedS: done.suggestedS,
        observedS: (nowMs - done.atMs) / 1000,
      };
      this.results.push(observation);
      this.onObservation?.(observation);
      if (this.results.length > this.maxResults) this.results.shift();
    }
  }

  /** Completed observations, oldest first. */
  recent(): DrainObservation[] {
    return [...this.results];
  }

  get pendingCount(): number {
    return this.pending.length;
  }
}
