/** One scheduled callback. `seq` breaks ties so events at the same instant run in scheduling order. */
interface SimEvent {
  atMs: number;
  seq: number;
  run: () => void;
}

/**
 * A discrete-event loop with a simulated clock: a binary min-heap of events ordered by (time, scheduling order).
 * Time only moves when the next event runs, so an hour of traffic takes as long as its events take to compute,
 * and the same events in the same order give the same run.
 *
 * @example
 * ```ts
 * const loop = new EventLoop();
 * loop.after(1_000, () => console.log(loop.now())); // 1000
 * loop.run();
 * ```
 */
export class EventLoop {
  private readonly heap: SimEvent[] = [];
  private seq = 0;
  private nowMs = 0;

  /** The simulated time in milliseconds. */
  now(): number {
    return this.nowMs;
  }

  /** Schedules `run` at `now() + delayMs` (a negative or NaN delay runs at once, after what is already due now). */
  after(delayMs: number, run: () => void): void {
    // biome-ignore lint/complexity/useMathMinMax: Math.max(NaN, 0) is NaN, and a NaN delay must run at once.
    this.at(this.nowMs + (delayMs > 0 ? delayMs : 0), run);
  }

  /** Schedules `run` at the absolute time `atMs` (never in the past). */
  at(atMs: number, run: () => void): void {
    this.push({ atMs: Math.max(atMs, this.nowMs), seq: this.seq++, run });
  }

  /** Number of events waiting. */
  get pending(): number {
    return this.heap.length;
  }

  /** Runs events in order until none is left or the next one lies after `untilMs`; the clock ends at `untilMs`. */
  run(untilMs = Number.POSITIVE_INFINITY): void {
    for (;;) {
      const next = this.heap[0];
      if (next === undefined || next.atMs > untilMs) break;
      this.pop();
      this.nowMs = next.atMs;
      next.run();
    }
    if (Number.isFinite(untilMs)) this.nowMs = Math.max(this.nowMs, untilMs);
  }

  private before(a: SimEvent, b: SimEvent): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
  }

  private push(event: SimEvent): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(heap[i] as SimEvent, heap[parent] as SimEvent)) break;
      [heap[i], heap[parent]] = [heap[parent] as SimEvent, heap[i] as SimEvent];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop() as SimEvent;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && this.before(heap[l] as SimEvent, heap[m] as SimEvent)) m = l;
      if (r < heap.length && this.before(heap[r] as SimEvent, heap[m] as SimEvent)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m] as SimEvent, heap[i] as SimEvent];
      i = m;
    }
  }
}
