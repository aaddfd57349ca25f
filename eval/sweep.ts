/** The queue-bound sweep (`npm run eval`): these scenarios with a queue that drains in about these many seconds at capacity. */
export const SWEEP_SCENARIOS = ["burst-3x", "burst-10x", "waves"];
export const SWEEP_DRAIN_S = [1, 2, 4, 8, 15];

/**
 * The sweep's queue bound for a full queue that drains in about `drainS` at `capacityRps` (at least one place).
 *
 * @example
 * ```ts
 * sweepQueueBound(1, 8.53); // 9
 * ```
 */
export function sweepQueueBound(drainS: number, capacityRps: number): number {
  return Math.max(1, Math.round(drainS * capacityRps));
}
