import type { Rejection } from "../core/router-core";
import { replicaLabel } from "./replica-label";

/**
 * One data point per routing decision, written to a Workers Analytics Engine dataset. The layout (query it
 * with the SQL API; see README, "Edge metrics"):
 *
 * | column | meaning |
 * | --- | --- |
 * | `index1` | deployment (one of more than 96 UTF-8 bytes: its first bytes, `~` and a hash of the whole name) |
 * | `blob1` | deployment |
 * | `blob2` | outcome: `admitted` or `rejected` |
 * | `blob3` | rejection reason (`queue_full`, `queue_timeout`, `no_replica_available`, `quota`), `""` when admitted |
 * | `blob4` | Retry-After rung (`computed`, `static_fallback`, `none`), `""` when admitted |
 * | `blob5` | replica (admitted; its URL with credentials redacted, `replicaLabel`), `""` when rejected |
 * | `blob6` | tenant name (the plan's `name`, never its key), `""` when the request named none |
 * | `double1` | 1 (sum it, times `_sample_interval`, to count decisions) |
 * | `double2` | suggested delay in seconds after jitter (rejected; 0 when none was given) |
 * | `double3` | router queue depth at the decision |
 * | `double4` | drain rate at a rejection (requests/s; 0 while the estimator is cold, and for admissions) |
 * | `double5` | HTTP status (200 admitted, else 429/503) |
 * | `double6` | router shard (-1: refused by the tenant's quota before any router was asked) |
 *
 * Analytics Engine refuses a data point (`writeDataPoint` throws a TypeError, and the row is lost) whose index
 * exceeds 96 bytes or whose blobs exceed 16 KB together (https://developers.cloudflare.com/analytics/analytics-engine/limits/;
 * workerd's own check is 5120 bytes). So the index is cut as above, and each blob to its first 853 UTF-8 bytes
 * (5120 / 6; never inside a character): a deployment name or replica URL that long is cut, never the row.
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

/** Analytics Engine's limit on an index, in UTF-8 bytes. */
const MAX_INDEX_BYTES = 96;
/** Each of the six blobs' share of the 5120 bytes all blobs may hold together (workerd's check; the docs say 16 KB). */
const MAX_BLOB_BYTES = Math.floor(5120 / 6);

const utf8 = new TextEncoder();

/**
 * The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that ends between two code points (`encodeInto`
 * writes whole characters only; a lone surrogate is written as U+FFFD, as the platform stores it).
 */
function utf8Prefix(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text; // a UTF-16 unit is at most 3 UTF-8 bytes
  return text.slice(0, utf8.encodeInto(text, new Uint8Array(maxBytes)).read);
}

/**
 * The deployment as an index: itself when it fits in 96 bytes, else its first 87 bytes, `~` and the FNV-1a hash
 * of the whole name (8 hex digits), so that two long names with one prefix stay apart.
 */
function indexOf(deployment: string): string {
  const prefix = utf8Prefix(deployment, MAX_INDEX_BYTES);
  if (prefix.length === deployment.length) return deployment;
  let hash = 0x811c9dc5;
  for (let i = 0; i < deployment.length; i++) hash = Math.imul(hash ^ deployment.charCodeAt(i), 0x01000193);
  return `${utf8Prefix(deployment, MAX_INDEX_BYTES - 9)}~${(hash >>> 0).toString(16).padStart(8, "0")}`;
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
      indexes: [indexOf(point.deployment)],
      blobs: [
        point.deployment,
        point.outcome,
        point.reason ?? "",
        point.rung ?? "",
        // Its display form: a credential in the URL (`?key=`, `user:pass@`) never goes into a row. A rejection has
        // none (and "" is no URL: labelling it would throw and catch once per refusal).
        point.replica === undefined ? "" : replicaLabel(point.replica),
        point.tenant ?? "",
      ].map((blob) => utf8Prefix(blob, MAX_BLOB_BYTES)),
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
