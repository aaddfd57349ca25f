import type { Rejection } from "../core/router-core";

/**
 * One data point per routing decision, written to a Workers Analytics Engine dataset. The layout (query it
 * with the SQL API; see README, "Edge metrics"):
 *
 * | column | meaning |
 * | --- | --- |
 * | `index1` | deployment |
 * | `blob1` | deployment |
 * | `blob2` | outcome: `admitted` or `rejected` |
 * | `blob3` | rejection reason (`queue_full`, `queue_timeout`, `no_replica_available`, `quota`), `""` when admitted |
 * | `blob4` | Retry-After rung (`computed`, `static_fallback`, `none`), `""` when admitted |
 * | `blob5` | replica (admitted), `""` when rejected |
 * | `blob6` | tenant name (the plan's `name`, never its key), `""` when the request named none |
 * | `double1` | 1 (sum it, times `_sample_interval`, to count decisions) |
 * | `double2` | suggested delay in seconds after jitter (rejected; 0 when none was given) |
 * | `double3` | router queue depth at the decision |
 * | `double4` | drain rate at a rejection (requests/s; 0 while the estimator is cold, and for admissions) |
 * | `double5` | HTTP status (200 admitted, else 429/503) |
 * | `double6` | router shard (-1: refused by the tenant's quota before any router was asked) |
 */
export interface DecisionPoint {
  deployment: string;
  shard: number;
  outcome: "admitted" | "rejected";
  reason?: string;
  rung?: string;
  replica?: string;
  suggestedS?: number | null;
  queueDepth: number;
  drainRate: number | null;
  status: number;
  tenant?: string;
}

/**
 * Writes one decision to the dataset; does nothing without the (optional) binding, and never throws: metrics
 * must not turn a routing decision into a failure. `writeDataPoint` is fire-and-forget (no await, no I/O wait).
 *
 * @example
 * ```ts
 * writeDecision(env.SPILLWAY_METRICS, { deployment: "llama", shard: 0, outcome: "admitted", replica,
 *   queueDepth: 0, drainRate: 3.2, status: 200 });
 * ```
 */
export function writeDecision(dataset: AnalyticsEngineDataset | undefined, point: DecisionPoint): void {
  if (!dataset) return;
  try {
    dataset.writeDataPoint({
      indexes: [point.deployment],
      blobs: [
        point.deployment,
        point.outcome,
        point.reason ?? "",
        point.rung ?? "",
        point.replica ?? "",
        point.tenant ?? "",
      ],
      doubles: [1, point.suggestedS ?? 0, point.queueDepth, point.drainRate ?? 0, point.status, point.shard],
    });
  } catch (error) {
    console.error(JSON.stringify({ event: "spillway.analytics_error", message: String(error) }));
  }
}

/**
 * The decision point of a rejection, from the router's rejection record.
 *
 * @example
 * ```ts
 * writeDecision(env.SPILLWAY_METRICS, rejectionPoint(rejection, "llama", 0));
 * ```
 */
export function rejectionPoint(rejection: Rejection, deployment: string, shard: number): DecisionPoint {
  const r = rejection.record;
  return {
    deployment,
    shard,
    outcome: "rejected",
    reason: r.reason,
    rung: r.rung,
    suggestedS: r.post_jitter_s,
    queueDepth: r.queue_depth,
    drainRate: r.drain_rate,
    status: r.status,
    ...(r.tenant ? { tenant: r.tenant } : {}),
  };
}

/**
 * The decision point of a refusal by a tenant's quota (shard -1: no router was asked), from the 429 or 400 sent.
 *
 * @example
 * ```ts
 * writeDecision(env.SPILLWAY_METRICS, quotaRefusalPoint(response, "llama", "acme"));
 * ```
 */
export function quotaRefusalPoint(response: Response, deployment: string, tenant: string): DecisionPoint {
  const ms = Number(response.headers.get("retry-after-ms"));
  return {
    deployment,
    shard: -1,
    outcome: "rejected",
    reason: "quota",
    suggestedS: Number.isFinite(ms) && ms > 0 ? ms / 1000 : null,
    queueDepth: 0,
    drainRate: null,
    status: response.status,
    tenant,
  };
}
