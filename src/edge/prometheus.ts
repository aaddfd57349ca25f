import type { ShardStats } from "./router-protocol";

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
 * Renders routers' stats as Prometheus text: one series per deployment shard (labels `deployment`, `shard`).
 * The suggested-delay histogram is cumulative, as Prometheus expects (the router keeps per-bucket counts).
 *
 * @example
 * ```ts
 * const text = prometheusText(await shardStats(env, "llama", 1));
 * // spillway_queue_depth{deployment="llama",shard="0"} 3
 * ```
 */
export function prometheusText(shards: ShardStats[]): string {
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
  gauge(
    "spillway_outstanding_bookings",
    "Retries booked_capacity has promised room to and that have not come back or lapsed yet.",
    (s) => s.outstandingBookings,
  );

  out.family("spillway_suggested_delay_seconds", "histogram", "Suggested Retry-After of rejections (after jitter).");
  for (const s of shards) {
    let cumulative = 0;
    for (const b of s.suggestedDelayBuckets) {
      cumulative += b.count;
      out.sample("spillway_suggested_delay_seconds_bucket", { ...id(s), le: numberText(b.le) }, cumulative);
    }
    out.sample("spillway_suggested_delay_seconds_count", id(s), cumulative);
  }

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
