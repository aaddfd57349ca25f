/** When a hinted request came back, against the time it was told. */
export type HintTiming = "early" | "on_time" | "late";
/** What the router did with the returning request. */
export type HintOutcome = "admitted" | "refused";

/** Counts of hinted retries by outcome and timing. */
export type HintedRetryCounts = Record<HintOutcome, Record<HintTiming, number>>;

/** Tolerances of "on time": from `earlyMs` before the hinted instant to `lateMs` after it. */
export interface HintedRetryOptions {
  earlyMs: number;
  lateMs: number;
  /** Hints remembered at once; the oldest is forgotten beyond this (memory stays bounded). */
  capacity: number;
}

export const DEFAULT_HINTED_RETRY_OPTIONS: HintedRetryOptions = { earlyMs: 1_000, lateMs: 3_000, capacity: 8_192 };

const zero = (): Record<HintTiming, number> => ({ early: 0, on_time: 0, late: 0 });

/**
 * X measured in production: the router remembers the fingerprint of every request it refused with a hint (a
 * bounded map, oldest forgotten first) and, when the same request comes back, counts it by outcome (admitted to
 * the queue, or refused again; the router counts one let in at an empty queue only to wait for a probe by the
 * probe's answer) and timing (early, on time, late against the hinted instant). The RFC's open
 * question - what share of retries made at the suggested time is admitted - is then a ratio of two counters on
 * `/spillway/metrics` (`spillway_hinted_retries_total{outcome,timing}`). A request whose hint was forgotten, or
 * that never returns, is simply not counted.
 *
 * @example
 * ```ts
 * const tracker = new HintedRetryTracker();
 * tracker.hinted("fp", 0, 5);          // refused at t = 0 with a 5 s hint
 * const timing = tracker.returned("fp", 5_200); // "on_time"
 * tracker.count("admitted", timing);
 * tracker.counts().admitted.on_time;   // 1
 * ```
 */
export class HintedRetryTracker {
  private readonly due = new Map<string, number>();
  private readonly tally: HintedRetryCounts = { admitted: zero(), refused: zero() };

  constructor(private readonly options: HintedRetryOptions = DEFAULT_HINTED_RETRY_OPTIONS) {}

  /** A request was refused with a hint of `delayS` seconds. */
  hinted(fingerprint: string | undefined, nowMs: number, delayS: number): void {
    if (fingerprint === undefined || !Number.isFinite(delayS)) return;
    this.due.delete(fingerprint);
    this.due.set(fingerprint, nowMs + delayS * 1000);
    if (this.due.size > this.options.capacity) this.due.delete(this.due.keys().next().value as string);
  }

  /** A request arrived: if it was hinted, its timing (and it is forgotten); else `undefined`. */
  returned(fingerprint: string | undefined, nowMs: number): HintTiming | undefined {
    if (fingerprint === undefined) return undefined;
    const dueMs = this.due.get(fingerprint);
    if (dueMs === undefined) return undefined;
    this.due.delete(fingerprint);
    if (nowMs < dueMs - this.options.earlyMs) return "early";
    return nowMs <= dueMs + this.options.lateMs ? "on_time" : "late";
  }

  /** Counts a returned hinted request's outcome. */
  count(outcome: HintOutcome, timing: HintTiming): void {
    this.tally[outcome][timing] += 1;
  }

  /** A copy of the counters. */
  counts(): HintedRetryCounts {
    return { admitted: { ...this.tally.admitted }, refused: { ...this.tally.refused } };
  }

  /** Hints remembered now. */
  get tracked(): number {
    return this.due.size;
  }
}
