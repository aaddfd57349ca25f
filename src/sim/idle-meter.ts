/**
 * Integrates `min(free slots, clients sleeping before a retry)` over simulated time: capacity that sat idle
 * while a refused client could have used it. Call `tick()` before every change.
 *
 * @example
 * ```ts
 * const meter = new IdleMeter(() => loop.now(), 8);
 * meter.tick(); meter.clientsWaiting += 1;        // a client starts its backoff
 * meter.tick(); meter.freeSlots -= 1;             // a slot is taken
 * meter.slotSeconds;                              // idle slot-seconds so far
 * ```
 */
export class IdleMeter {
  clientsWaiting = 0;
  slotSeconds = 0;
  private lastMs: number;

  constructor(
    private readonly now: () => number,
    public freeSlots: number,
  ) {
    this.lastMs = now();
  }

  tick(): void {
    const t = this.now();
    const idle = Math.min(Math.max(0, this.freeSlots), this.clientsWaiting);
    if (idle > 0) this.slotSeconds += (idle * (t - this.lastMs)) / 1000;
    this.lastMs = t;
  }
}
