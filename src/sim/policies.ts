import type { RetryAfterPolicyName } from "../core/retry-after";
import type { ClientKind } from "./client-model";

/** One Retry-After configuration compared in the evaluation, with the client that meets it. */
export interface PolicySpec {
  /** Short id used in tables and JSON. */
  id: string;
  label: string;
  retryAfterPolicy: RetryAfterPolicyName;
  /** The static value (the policy `static`, or the computed policies' fallback rung). */
  retryAfterS?: number;
  /** Saturation weights w1 = w2 (the spec's 0.25); `queue_drain_rate` ignores them. */
  client: ClientKind;
}

/**
 * The policies the evaluation compares, in the same runs (same seed, same arrivals). The computed policies
 * keep the config's default ladder: no static fallback, so a cold router sends no header.
 *
 * @example
 * ```ts
 * EVAL_POLICIES.map((p) => p.id); // ["none", "static-1", ...]
 * ```
 */
export const EVAL_POLICIES: readonly PolicySpec[] = [
  { id: "none", label: "no header", retryAfterPolicy: "static", client: "backoff_only" },
  { id: "static-1", label: "static 1 s", retryAfterPolicy: "static", retryAfterS: 1, client: "honours_hints" },
  { id: "static-5", label: "static 5 s", retryAfterPolicy: "static", retryAfterS: 5, client: "honours_hints" },
  { id: "static-30", label: "static 30 s", retryAfterPolicy: "static", retryAfterS: 30, client: "honours_hints" },
  {
    id: "router_queue_drain_rate",
    label: "router_queue_drain_rate (RFC, saturation factor)",
    retryAfterPolicy: "router_queue_drain_rate",
    client: "honours_hints",
  },
  {
    id: "queue_drain_rate",
    label: "queue_drain_rate (no saturation factor)",
    retryAfterPolicy: "queue_drain_rate",
    client: "honours_hints",
  },
  {
    id: "retry_schedule",
    label: "retry_schedule (counts scheduled retries)",
    retryAfterPolicy: "retry_schedule",
    client: "honours_hints",
  },
];

/** Ids of the static policies, for "best static" comparisons. */
export const STATIC_POLICY_IDS = ["static-1", "static-5", "static-30"] as const;
