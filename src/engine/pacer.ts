import { setTimeout as sleepMs, setImmediate as yieldToIo } from "node:timers/promises";

/**
 * Real-time sleeping for the server's loop that stays accurate for sub-millisecond steps: it tracks
 * where model time should be and sleeps only when real time is ahead of it by a millisecond or more,
 * otherwise it just yields to I/O (so fast engines and `--speed inf` still serve sockets every step).
 *
 * @example
 * ```ts
 * const pacer = createPacer();
 * await pacer.sleep(0.0004); // yields; the 0.4 ms is carried to the next sleep
 * pacer.reset();             // after an idle wait, start from now
 * ```
 */
export function createPacer(now: () => number = () => performance.now()) {
  let target = now();
  return {
    async sleep(seconds: number): Promise<void> {
      target = Math.max(target, now() - 50) + seconds * 1000;
      const ahead = target - now();
      if (ahead >= 1) await sleepMs(ahead);
      else await yieldToIo();
    },
    reset(): void {
      target = now();
    },
  };
}
