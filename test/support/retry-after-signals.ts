import { DEFAULT_SATURATION_OPTIONS, type LoadSignals, type RetryAfterOptions } from "../../src/core/retry-after";

/**
 * Load signals of a cold router with two 4-slot replicas and nothing queued: the Retry-After tests' starting point.
 *
 * @example
 * ```ts
 * decideRetryAfter(idleSignals, retryAfterOptions({ retryAfterPolicy: "static", retryAfterS: 10 }), fixedDraw(0.5));
 * ```
 */
export const idleSignals: LoadSignals = {
  queueDepth: 0,
  drainRate: undefined,
  warm: false,
  replicaQueueLengthSum: 0,
  numReplicas: 2,
  maxOngoingRequests: 4,
  backoffStreak: 0,
};

/** The same router warm, `queueDepth` queued and draining at `drainRate` per second. */
export const warmSignals = (queueDepth: number, drainRate: number): LoadSignals => ({
  ...idleSignals,
  queueDepth,
  drainRate,
  warm: true,
});

/** `router_queue_drain_rate` with 20% jitter, no static value and the default saturation; `over` replaces fields. */
export const retryAfterOptions = (over: Partial<RetryAfterOptions> = {}): RetryAfterOptions => ({
  retryAfterPolicy: "router_queue_drain_rate",
  retryAfterS: undefined,
  jitter: 0.2,
  saturation: DEFAULT_SATURATION_OPTIONS,
  ...over,
});

/** A random source that always draws `u`. */
export const fixedDraw = (u: number) => () => u;
