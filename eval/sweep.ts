/** The queue-bound sweep (`npm run eval`): these scenarios with a queue that drains in about these many seconds at capacity. */
export const SWEEP_SCENARIOS = ["burst-3x", "burst-10x", "waves"];
export const SWEEP_DRAIN_S = [1, 2, 4, 8, 15];
