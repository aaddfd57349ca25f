/**
 * Names accepted in `backpressure.retryAfterPolicy`. `retry_schedule` spreads refused clients over future
 * capacity, counting the retries it has already scheduled (src/core/retry-schedule.ts); `booked_capacity` (the
 * default) books future capacity for each refused request, bound to its fingerprint, within its client's
 * horizon, with a queue-delay target (src/core/capacity-booking.ts, docs/retry-policy.md).
 */
export const RETRY_AFTER_POLICIES = [
  "static",
  "router_queue_drain_rate",
  "queue_drain_rate",
  "retry_schedule",
  "booked_capacity",
] as const;
export type RetryAfterPolicyName = (typeof RETRY_AFTER_POLICIES)[number];

/** Computed values are clamped to this range (SDKs ignore Retry-After above 60 s). */
export const COMPUTED_MIN_S = 1;
export const COMPUTED_MAX_S = 60;
/** Largest value we ever emit, so `retry-after-ms` stays a safe integer (a static 1.7e308 must not overflow). */
export const EMITTED_MAX_S = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

/** The rung of the fallback ladder that produced a hint. */
export type Rung = "computed" | "static_fallback" | "none";

/** Tunables of the saturation factor (spec: B = 5, w1 = w2 = 0.25). */
export interface SaturationOptions {
  /** B: the backoff streak at which the backoff signal saturates. */
  backoffStreakSaturation: number;
  /** w1: weight of replica occupancy. */
  occupancyWeight: number;
  /** w2: weight of the backoff signal. */
  backoffWeight: number;
}

export const DEFAULT_SATURATION_OPTIONS: SaturationOptions = {
  backoffStreakSaturation: 5,
  occupancyWeight: 0.25,
  backoffWeight: 0.25,
};

/** What the router knows when it rejects: all of it already in memory. */
export interface LoadSignals {
  /** Requests queued at this router, ahead of the rejected one. */
  queueDepth: number;
  /** The drain-rate EWMA (drains per second), `undefined` before the first sample. */
  drainRate: number | undefined;
  /** True once the estimator has its warm-up samples. */
  warm: boolean;
  /** Sum of the cached replica queue lengths. */
  replicaQueueLengthSum: number;
  numReplicas: number;
  maxOngoingRequests: number;
  /** Consecutive failed placement rounds. */
  backoffStreak: number;
}

/** How the Retry-After hint is chosen (the `backpressure` block of a deployment). */
export interface RetryAfterOptions {
  retryAfterPolicy: RetryAfterPolicyName;
  /** The static value, the ladder's second rung; `undefined` means no static fallback. */
  retryAfterS: number | undefined;
  /** Relative jitter: the value is multiplied by 1 + jitter * (2u - 1). */
  jitter: number;
  /**
   * The computed rung's jitter when it is not `jitter`: the ledger policies place their own hint inside its second
   * and pass 0; their static fallback keeps `jitter` (the spec jitters computed and static values alike).
   */
  computedJitter?: number;
  saturation: SaturationOptions;
}

/** The hint for one rejection, with what produced it (for the structured log record). */
export interface RetryAfterDecision {
  rung: Rung;
  /** The value before jitter (after the clamp, for computed values), seconds. */
  preJitterS: number | undefined;
  /** The jittered value before rounding, seconds. */
  jitteredS: number | undefined;
  /** `Retry-After` header value: whole seconds, rounded up. */
  retryAfterS: number | undefined;
  /** `retry-after-ms` header value: whole milliseconds of the same jittered value, rounded up. */
  retryAfterMs: number | undefined;
}

/**
 * `1 + w1 * occupancy + w2 * backoff_signal`, in [1, 1 + w1 + w2].
 *
 * @example
 * ```ts
 * saturationFactor({ ...signals, replicaQueueLengthSum: 8, numReplicas: 2, maxOngoingRequests: 4, backoffStreak: 5 },
 *   DEFAULT_SATURATION_OPTIONS); // 1.5
 * ```
 */
export function saturationFactor(signals: LoadSignals, options: SaturationOptions): number {
  const capacity = signals.numReplicas * signals.maxOngoingRequests;
  const occupancy = capacity > 0 ? Math.min(1, signals.replicaQueueLengthSum / capacity) : 0;
  const backoff =
    options.backoffStreakSaturation > 0 ? Math.min(signals.backoffStreak / options.backoffStreakSaturation, 1) : 0;
  return 1 + options.occupancyWeight * occupancy + options.backoffWeight * backoff;
}

/**
 * The policy's raw estimate in seconds, or `undefined` when it has none (static policy, cold estimator,
 * rate 0, NaN or infinite).
 *
 * `router_queue_drain_rate`: `queue_depth / drain_rate * saturation_factor`; `queue_drain_rate` is the same
 * with the saturation weights at 0 (Ray's later form).
 *
 * @example
 * ```ts
 * estimateRetryAfterS("queue_drain_rate", { ...signals, queueDepth: 10, drainRate: 5, warm: true }, opts); // 2
 * ```
 */
export function estimateRetryAfterS(
  policy: RetryAfterPolicyName,
  signals: LoadSignals,
  saturation: SaturationOptions,
): number | undefined {
  if (policy === "static") return undefined;
  // `retry_schedule` and `booked_capacity` are estimated by RouterCore from their ledgers; without one they are
  // the plain drain estimate.
  const rate = signals.drainRate;
  if (!signals.warm || rate === undefined || !Number.isFinite(rate) || rate <= 0) return undefined;
  const factor = policy === "router_queue_drain_rate" ? saturationFactor(signals, saturation) : 1;
  const estimate = (signals.queueDepth / rate) * factor;
  // A rate so small (a long-stalled EWMA) that the wait overflows a double is still a wait: longer than any cap, as
  // the spec computes it (falling back there gave a deeper queue a shorter hint than a shallow one).
  if (estimate === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  return Number.isFinite(estimate) && estimate >= 0 ? estimate : undefined;
}

/**
 * Jitter that stays inside `[min, max]` without piling on the bounds: `value * (1 + jitter * (2u - 1))` when
 * that range fits inside them; near `max`, `base = min(value, max)` jittered downward only, uniform in
 * `[base * (1 - jitter), base]` (`[max * (1 - jitter), max]` from the cap up; spec correction: clamping after
 * jitter sent every draw above the cap to exactly the cap - half the refusals of a long overload on one second);
 * near `min`, jittered upward only, uniform in `[base, base * (1 + jitter)]` (the same correction at the floor:
 * clamping sent every draw below 1 s to exactly 1 s - half the refusals of a short queue, one herd on the floor).
 *
 * @example
 * ```ts
 * jitterWithin(1000, 0.2, 0, 1, 60);   // 48
 * jitterWithin(1000, 0.2, 0.5, 1, 60); // 54 (not 60)
 * jitterWithin(5, 0.2, 0, 1, 60);      // 4
 * jitterWithin(1, 0.2, 0.5, 1, 60);    // 1.1 (not 1)
 * ```
 */
export function jitterWithin(value: number, jitter: number, u: number, min: number, max: number): number {
  const base = clamp(value, min, max);
  if (base * (1 + jitter) > max) return clamp(base * (1 - jitter * (1 - u)), min, max);
  if (base * (1 - jitter) < min) return clamp(base * (1 + jitter * u), min, max);
  return applyJitter(base, jitter, u);
}

/**
 * `value * (1 + jitter * (2u - 1))`, never negative.
 *
 * @example
 * ```ts
 * applyJitter(10, 0.2, 0); // 8
 * ```
 */
export function applyJitter(value: number, jitter: number, u: number): number {
  return Math.max(0, value * (1 + jitter * (2 * u - 1)));
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** Rounds a jittered value to header values. Sub-nanosecond float error is not a millisecond. */
function toHeaderValues(jitteredS: number): { retryAfterS: number; retryAfterMs: number } {
  const capped = Math.min(jitteredS, EMITTED_MAX_S);
  const retryAfterMs = Math.max(0, Math.ceil(capped * 1000 - 1e-6));
  return { retryAfterS: Math.ceil(retryAfterMs / 1000), retryAfterMs };
}

const NO_HINT: RetryAfterDecision = {
  rung: "none",
  preJitterS: undefined,
  jitteredS: undefined,
  retryAfterS: undefined,
  retryAfterMs: undefined,
};

/**
 * The fallback ladder: computed (policy has an estimate) -> static `retryAfterS` -> no header. Computed values
 * are clamped to [1, maxS] s (60 s unless the client is known to honour longer) and jittered inside that range
 * ({@link jitterWithin}, with `computedJitter` when set); static values are jittered (`jitter`) but not clamped. A
 * policy error falls to the next rung: a hint never fails or delays a rejection.
 *
 * @example
 * ```ts
 * decideRetryAfter(signals, { retryAfterPolicy: "static", retryAfterS: 5, jitter: 0.2,
 *   saturation: DEFAULT_SATURATION_OPTIONS }, () => 0); // { rung: "static_fallback", retryAfterS: 4, ... }
 * ```
 */
export function decideRetryAfter(
  signals: LoadSignals,
  options: RetryAfterOptions,
  random: () => number,
  estimate: () => number | undefined = () => estimateRetryAfterS(options.retryAfterPolicy, signals, options.saturation),
  maxS: number = COMPUTED_MAX_S,
): RetryAfterDecision {
  let computed: number | undefined;
  try {
    computed = estimate();
  } catch {
    computed = undefined;
  }
  // An empty queue at a warm router (maxQueuedRequests 0) still gets a computed hint: the clamp makes it 1 s.
  if (computed !== undefined && Number.isFinite(computed) && computed >= 0) {
    const cap = Math.max(COMPUTED_MIN_S, maxS);
    const preJitterS = clamp(computed, COMPUTED_MIN_S, cap);
    const jitteredS = jitterWithin(preJitterS, options.computedJitter ?? options.jitter, random(), COMPUTED_MIN_S, cap);
    return { rung: "computed", preJitterS, jitteredS, ...toHeaderValues(jitteredS) };
  }
  const fallback = options.retryAfterS;
  if (fallback === undefined || Number.isNaN(fallback)) return NO_HINT;
  const preJitterS = Math.max(0, fallback);
  const jitteredS = applyJitter(Math.min(preJitterS, EMITTED_MAX_S), options.jitter, random());
  return { rung: "static_fallback", preJitterS, jitteredS, ...toHeaderValues(jitteredS) };
}
