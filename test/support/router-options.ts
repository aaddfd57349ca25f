import { DEFAULT_DRAIN_RATE_OPTIONS } from "../../src/core/drain-rate";
import { DEFAULT_SATURATION_OPTIONS, type RetryAfterOptions } from "../../src/core/retry-after";
import type { RouterOptions } from "../../src/core/router-options";

/**
 * `RouterCore` options for the core's tests: one one-slot replica `a`, a 10-deep queue with a 30 s timeout,
 * `router_queue_drain_rate` with a 5 s fallback and 20% jitter, the default drain-rate estimator. A test states
 * only what it is about, in `overrides` (and `retryAfter` for the hint's options).
 *
 * @example
 * ```ts
 * const core = new RouterCore(routerOptions({ replicas: ["a", "b"] }, { jitter: 0 }), clock, () => 0.5);
 * ```
 */
export function routerOptions(
  overrides: Partial<RouterOptions> = {},
  retryAfter: Partial<RetryAfterOptions> = {},
): RouterOptions {
  return {
    replicas: ["a"],
    maxOngoingRequests: 1,
    maxQueuedRequests: 10,
    queueTimeoutMs: 30_000,
    leaseTimeoutMs: 600_000,
    statusCode: 429,
    drainRate: DEFAULT_DRAIN_RATE_OPTIONS,
    ...overrides,
    // A test that gives its own `retryAfter` gets exactly it (an absent field stays absent).
    retryAfter: {
      ...(overrides.retryAfter ?? {
        retryAfterPolicy: "router_queue_drain_rate",
        retryAfterS: 5,
        jitter: 0.2,
        saturation: DEFAULT_SATURATION_OPTIONS,
      }),
      ...retryAfter,
    },
  };
}
