/** Placement backoff constants (Ray Serve's): 25 ms initial, x2, capped at 500 ms. */
export const BACKOFF_INITIAL_MS = 25;
export const BACKOFF_MAX_MS = 500;
/** Probe deadline: 0.1 s, doubling per backoff, capped at 1 s. */
export const PROBE_DEADLINE_INITIAL_MS = 100;
export const PROBE_DEADLINE_MAX_MS = 1000;

/**
 * Delay before the next placement round after `streak` consecutive failed rounds:
 * 0, 25, 50, 100, 200, 400, 500, 500, ... ms.
 *
 * @example
 * ```ts
 * [0, 1, 2, 6].map(backoffDelayMs); // [0, 25, 50, 500]
 * ```
 */
export function backoffDelayMs(streak: number): number {
  if (streak <= 0) return 0;
  return Math.min(BACKOFF_INITIAL_MS * 2 ** (streak - 1), BACKOFF_MAX_MS);
}

/**
 * Deadline for a queue-length probe after `streak` consecutive failed rounds: 100, 200, 400, 800, 1000 ms.
 *
 * @example
 * ```ts
 * probeDeadlineMs(0); // 100
 * ```
 */
export function probeDeadlineMs(streak: number): number {
  return Math.min(PROBE_DEADLINE_INITIAL_MS * 2 ** Math.max(0, streak), PROBE_DEADLINE_MAX_MS);
}
