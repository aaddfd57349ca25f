import type { HistogramSnapshot } from "../core/drain-accuracy";
import { topTenants } from "../core/tenant-counters";
import type { ShardStats } from "./router-protocol";
import type { TenantQuotaStats } from "./tenant-quota-stats";

/** Tenants with their own label per router shard; the rest are summed as `other`. */
const TOP_TENANTS = 10;

type Labels = Record<string, string | number>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`,
  );
  return parts.length > 0 ? `{${parts.join(",")}}` : "";
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/** Prometheus text exposition (format 0.0.4), built one metric family at a time. */
class Exposition {
  private readonly lines: string[] = [];

  family(name: string, type: "gauge" | "counter" | "histogram", help: string): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }

  sample(name: string, labels: Labels, value: number): this {
    this.lines.push(`${name}${labelText(labels)} ${numberText(value)}`);
    return this;
  }

  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}

/** The Prometheus text format's content type. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * Renders routers' stats as Prometheus text: one series per deployment shard (labels `deployment`, `shard`), and
 * per tenant with quotas its quota refusals and tokens (label `tenant`).
 * Histograms (suggested delays, drain-time error) are complete Prometheus histograms: cumulative `_bucket`
 * series ending at `le="+Inf"`, `_sum` and `_count` (the router keeps per-bucket counts and the sum).
 *
 * @example
 * ```ts
 * const text = prometheusText(await shardStats(env, "llama", 1));
 * // spillway_queue_depth{deployment="llama",shard="0"} 3
 * ```
 */
export function prometheusText(shards: ShardStats[], quotas: Record<string, TenantQuotaStats> = {}): string {
  const out = new Exposition();
  const id = (s: ShardStats) => ({ deployment: s.deployment, shard: s.shard });
  const gauge = (name: string, help: string, value: (s: ShardStats) => number | null) => {
    out.family(name, "gauge", help);
    for (const s of shards) {
      const v = value(s);
      if (v !== null) out.sample(name, id(s), v);
    }
  };
  const counter = (name: string, help: string, value: (s: ShardStats) => number) => {
    out.family(name, "counter", help);
    for (const s of shards) out.sample(name, id(s), value(s));
  };
  gauge("spillway_queue_depth", "Requests waiting in the router's queue.", (s) => s.queueDepth);
  gauge("spillway_max_queued_requests", "The router's queue bound.", (s) => s.maxQueuedRequests);
  gauge("spillway_drain_rate", "Drain-rate EWMA, requests leaving the queue per second.", (s) => s.drainRate);
  gauge("spillway_estimator_warm", "1 when the drain-rate estimator is warm.", (s) => (s.estimatorWarm ? 1 : 0));
  gauge("spillway_active_leases", "Requests admitted and not yet released.", (s) => s.activeLeases);
  gauge("spillway_backoff_streak", "Consecutive placement rounds that found no replica.", (s) => s.backoffStreak);
  counter("spillway_admitted_total", "Requests given a replica.", (s) => s.admitted);
  counter("spillway_completed_total", "Leases released.", (s) => s.completed);
  counter("spillway_drained_total", "Requests that left the queue (the drain counter).", (s) => s.drainCount);
  counter("spillway_router_acquire_calls_total", "acquire calls the router answered.", (s) => s.calls.acquire);
  counter(
    "spillway_router_release_calls_total",
    "release calls the router answered (isolates batch releases: fewer than the slots released).",
    (s) => s.calls.releaseCalls,
  );
  counter(
    "spillway_router_slots_handed_off_total",
    "Slots an isolate handed from a finished request to its next one without asking (slotHandoffMs).",
    (s) => s.calls.handedOff,
  );
  counter(
    "spillway_router_slots_released_total",
    "Slots given back, by release calls or carried by acquires.",
    (s) => s.calls.slotsReleased,
  );

  out.family("spillway_rejections_total", "counter", "Rejections by Retry-After rung.");
  for (const s of shards)
    for (const [rung, n] of Object.entries(s.rejections))
      out.sample("spillway_rejections_total", { ...id(s), rung }, n);
  out.family("spillway_rejections_by_reason_total", "counter", "Rejections by reason.");
  for (const s of shards)
    for (const [reason, n] of Object.entries(s.rejectionsByReason))
      out.sample("spillway_rejections_by_reason_total", { ...id(s), reason }, n);

  out.family(
    "spillway_hinted_retries_total",
    "counter",
    "Requests refused with a hint that came back (same fingerprint), by outcome (admitted to the queue or refused) and timing against the hint (early, on_time, late): X, measured live.",
  );
  for (const s of shards)
    for (const [outcome, byTiming] of Object.entries(s.hintedRetries))
      for (const [timing, n] of Object.entries(byTiming))
        out.sample("spillway_hinted_retries_total", { ...id(s), outcome, timing }, n);
  counter(
    "spillway_demoted_total",
    "Requests queued demoted: first refused longer ago than booking.demoteAfterS, they waited behind the others.",
    (s) => s.demoted,
  );
  gauge(
    "spillway_outstanding_bookings",
    "Retries booked_capacity has promised room to and that have not come back or lapsed yet.",
    (s) => s.outstandingBookings,
  );
  // The ledger's word (booked_capacity only): promises made and how they ended, and the trust they taught it.
  const ledgers = shards.filter((s) => s.ledger !== null && s.ledger !== undefined);
  out.family(
    "spillway_promises_made_total",
    "counter",
    "Refusals answered with a promise: a hint backed by capacity booked in booked_capacity's ledger.",
  );
  for (const s of ledgers) out.sample("spillway_promises_made_total", id(s), s.ledger?.promises.made ?? 0);
  out.family(
    "spillway_promises_ended_total",
    "counter",
    "Promises by how they ended: kept (the retry was placed on a replica), broken (it came back on time and was refused, or shed from the queue), no_show (it did not come back in time).",
  );
  for (const s of ledgers) {
    const p = s.ledger?.promises;
    if (!p) continue;
    out.sample("spillway_promises_ended_total", { ...id(s), outcome: "kept" }, p.kept);
    out.sample("spillway_promises_ended_total", { ...id(s), outcome: "broken" }, p.broken);
    out.sample("spillway_promises_ended_total", { ...id(s), outcome: "no_show" }, p.noShow);
  }
  gauge(
    "spillway_booking_trust",
    "booked_capacity's trust in its forecast (minTrust to 1): broken promises lower it and shrink the capacity it promises.",
    (s) => s.ledger?.trust ?? null,
  );
  gauge(
    "spillway_booking_show_rate",
    "Share of promised clients that came back to claim their promise (decayed).",
    (s) => s.ledger?.showRate ?? null,
  );
  gauge(
    "spillway_booking_fresh_baseline",
    "booked_capacity's forecast baseline of fresh arrivals (first attempts per second at this router): what its promises leave room for in an overload.",
    (s) => s.ledger?.freshBaseline ?? null,
  );

  const histogram = (name: string, help: string, value: (s: ShardStats) => HistogramSnapshot) => {
    out.family(name, "histogram", help);
    for (const s of shards) {
      const h = value(s);
      let cumulative = 0;
      for (const b of h.buckets) {
        cumulative += b.count;
        out.sample(`${name}_bucket`, { ...id(s), le: numberText(b.le) }, cumulative);
      }
      out.sample(`${name}_sum`, id(s), h.sum);
      out.sample(`${name}_count`, id(s), cumulative);
    }
  };
  histogram("spillway_suggested_delay_seconds", "Suggested Retry-After of rejections (after jitter).", (s) => ({
    buckets: s.suggestedDelayBuckets,
    sum: s.suggestedDelaySumS,
    count: s.suggestedDelayBuckets.reduce((n, b) => n + b.count, 0),
  }));
  histogram(
    "spillway_drain_time_error_seconds",
    "Suggested delay minus the time the queue ahead of the rejection took to drain (the RFC's accuracy).",
    (s) => s.drainTimeError,
  );

  // Per tenant: the top tenants by decisions at each shard, the rest as `other` (bounded cardinality).
  out.family(
    "spillway_tenant_admitted_total",
    "counter",
    "Requests given a replica, per tenant (top tenants + other).",
  );
  for (const s of shards)
    for (const [tenant, count] of Object.entries(topTenants(s.tenants ?? {}, TOP_TENANTS)))
      out.sample("spillway_tenant_admitted_total", { ...id(s), tenant }, count.admitted);
  out.family(
    "spillway_tenant_shed_total",
    "counter",
    "Requests refused for capacity, per tenant (top tenants + other).",
  );
  for (const s of shards)
    for (const [tenant, count] of Object.entries(topTenants(s.tenants ?? {}, TOP_TENANTS)))
      out.sample("spillway_tenant_shed_total", { ...id(s), tenant, reason: "capacity" }, count.shed);

  out.family("spillway_tenant_quota_refused_total", "counter", "Requests refused by the tenant's own quota.");
  for (const [tenant, q] of Object.entries(quotas))
    out.sample("spillway_tenant_quota_refused_total", { tenant }, q.refused);
  // Net tokens (the answers' usage where they carried it) = charged - refunded; both only ever grow.
  out.family("spillway_tenant_tokens_charged_total", "counter", "Tokens charged to the tenant's quota.");
  for (const [tenant, q] of Object.entries(quotas))
    out.sample("spillway_tenant_tokens_charged_total", { tenant }, q.tokensCharged);
  out.family("spillway_tenant_tokens_refunded_total", "counter", "Tokens given back to the tenant's quota.");
  for (const [tenant, q] of Object.entries(quotas))
    out.sample("spillway_tenant_tokens_refunded_total", { tenant }, q.tokensRefunded);

  // `replica`: the stats' key, already the URL's display form (`DeploymentRouter.stats` labels it: `replicaLabel`).
  out.family("spillway_replica_queue_length", "gauge", "The router's cached queue length of a replica.");
  for (const s of shards)
    for (const [replica, entry] of Object.entries(s.replicas))
      if (entry) out.sample("spillway_replica_queue_length", { ...id(s), replica }, entry.queueLength);
  out.family("spillway_replica_up", "gauge", "0 after a failed probe of the replica, until one succeeds.");
  for (const s of shards)
    for (const [replica, entry] of Object.entries(s.replicas))
      if (entry) out.sample("spillway_replica_up", { ...id(s), replica }, entry.valid ? 1 : 0);
  return out.text();
}
