import { PROMISE_OUTCOME_KEYS, type PromiseOutcomes } from "../core/capacity-booking";
import type { DrainObservation } from "../core/drain-accuracy";
import type { HintedRetryCounts, HintTiming } from "../core/hinted-retries";
import { type TenantCount, topTenants } from "../core/tenant-counters";
import type { DeploymentConfig, SpillwayConfig } from "./config";
import type { Env } from "./env";
import { type ReplicaLoad, replicaLoad } from "./replica-load";
import { placement, routerName, type ShardStats } from "./router-protocol";

/** One deployment as the dashboard sees it: its routers' state summed over shards, and its replicas' load. */
export interface DeploymentOverview {
  deployment: string;
  shards: number;
  maxQueuedRequests: number;
  queueDepth: number;
  /** Summed over shards; null while no shard's estimator has a rate. */
  drainRate: number | null;
  estimatorWarm: boolean;
  activeLeases: number;
  backoffStreak: number;
  admitted: number;
  completed: number;
  rejected: number;
  rejections: Record<string, number>;
  rejectionsByReason: Record<string, number>;
  /** Suggested delays (seconds), counts per upper bound ("+Inf" last), summed over shards. */
  suggestedDelayBuckets: { le: number | "+Inf"; count: number }[];
  /** Hinted requests that came back, by outcome and timing, summed over shards (X = admitted / all, live). */
  hintedRetries: HintedRetryCounts;
  /**
   * `booked_capacity`'s ledgers: their promises summed over shards, their trust in the forecast averaged over
   * them (below 1: promises were broken, and fewer are made), and their forecasts of fresh arrivals (requests per
   * second) summed over the shards that have one (null while none has). null for the other policies.
   */
  ledger: { promises: PromiseOutcomes; trust: number; freshBaseline: number | null } | null;
  /** The latest suggested-vs-observed drain times, oldest first. */
  recentObservations: DrainObservation[];
  /** Admitted and shed (capacity) per tenant, summed over shards: the 10 busiest, the rest as `other`. */
  tenants: Record<string, TenantCount>;
  replicas: ReplicaLoad[];
}

/** `GET /spillway/overview`: every deployment at one instant. */
export interface FleetOverview {
  atMs: number;
  deployments: DeploymentOverview[];
}

const MAX_OBSERVATIONS = 64;

function addInto(target: Record<string, number>, source: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
  return target;
}

function sumTenants(shards: ShardStats[]): Record<string, TenantCount> {
  // A Map, not an object: a tenant may be named `__proto__` (the config allows it), and `sum["__proto__"]` would
  // have been Object.prototype, its `admitted` and `shed` written onto every object of the isolate.
  const sum = new Map<string, TenantCount>();
  for (const s of shards)
    for (const [name, count] of Object.entries(s.tenants ?? {})) {
      const into = sum.get(name) ?? { admitted: 0, shed: 0 };
      into.admitted += count.admitted;
      into.shed += count.shed;
      sum.set(name, into);
    }
  return Object.fromEntries(sum);
}

function sumTimings(counts: Record<HintTiming, number>[]): Record<HintTiming, number> {
  const sum: Record<HintTiming, number> = { early: 0, on_time: 0, late: 0 };
  for (const c of counts) for (const k of Object.keys(sum) as HintTiming[]) sum[k] += c[k];
  return sum;
}

function mergeLedgers(shards: ShardStats[]): DeploymentOverview["ledger"] {
  const views = shards.flatMap((s) => (s.ledger ? [s.ledger] : []));
  if (views.length === 0) return null;
  const promises: PromiseOutcomes = { made: 0, kept: 0, broken: 0, noShow: 0 };
  for (const v of views) for (const k of PROMISE_OUTCOME_KEYS) promises[k] += v.promises[k];
  // Each shard forecasts the fresh arrivals it sees: the deployment's are their sum (the dashboard's tooltip).
  const baselines = views.flatMap((v) => (v.freshBaseline === null ? [] : [v.freshBaseline]));
  return {
    promises,
    trust: views.reduce((sum, v) => sum + v.trust, 0) / views.length,
    freshBaseline: baselines.length > 0 ? baselines.reduce((a, b) => a + b, 0) : null,
  };
}

/**
 * Sums the shards of one deployment into one view (rates and counters add; the estimator is warm when every
 * shard's is).
 *
 * @example
 * ```ts
 * const view = mergeShards("llama", shards, replicaLoads);
 * view.queueDepth; // queued requests over all shards
 * ```
 */
export function mergeShards(deployment: string, shards: ShardStats[], replicas: ReplicaLoad[]): DeploymentOverview {
  const rates = shards.map((s) => s.drainRate).filter((r): r is number => r !== null);
  const buckets = new Map<number, number>();
  for (const s of shards)
    for (const b of s.suggestedDelayBuckets) buckets.set(b.le, (buckets.get(b.le) ?? 0) + b.count);
  const rejections = shards.reduce((acc, s) => addInto(acc, s.rejections), {} as Record<string, number>);
  return {
    deployment,
    shards: shards.length,
    // -1 (unlimited) on any shard makes the deployment's bound unlimited too.
    maxQueuedRequests: shards.some((s) => s.maxQueuedRequests < 0)
      ? -1
      : shards.reduce((n, s) => n + s.maxQueuedRequests, 0),
    queueDepth: shards.reduce((n, s) => n + s.queueDepth, 0),
    drainRate: rates.length > 0 ? rates.reduce((a, b) => a + b, 0) : null,
    estimatorWarm: shards.every((s) => s.estimatorWarm),
    activeLeases: shards.reduce((n, s) => n + s.activeLeases, 0),
    backoffStreak: Math.max(0, ...shards.map((s) => s.backoffStreak)),
    admitted: shards.reduce((n, s) => n + s.admitted, 0),
    completed: shards.reduce((n, s) => n + s.completed, 0),
    rejected: Object.values(rejections).reduce((a, b) => a + b, 0),
    rejections,
    rejectionsByReason: shards.reduce((acc, s) => addInto(acc, s.rejectionsByReason), {} as Record<string, number>),
    suggestedDelayBuckets: [...buckets].map(([le, count]) => ({ le: Number.isFinite(le) ? le : "+Inf", count })),
    hintedRetries: {
      admitted: sumTimings(shards.map((s) => s.hintedRetries.admitted)),
      refused: sumTimings(shards.map((s) => s.hintedRetries.refused)),
    },
    ledger: mergeLedgers(shards),
    recentObservations: shards
      .flatMap((s) => s.recentObservations)
      .sort((a, b) => a.atMs - b.atMs)
      .slice(-MAX_OBSERVATIONS),
    tenants: topTenants(sumTenants(shards), 10),
    replicas,
  };
}

/**
 * Reads every shard's stats over DO RPC and, with `withReplicas`, every replica's `/load` and `/metrics`
 * (concurrently; a slow replica costs at most the fetch timeout).
 *
 * @example
 * ```ts
 * const overview = await fleetOverview(env, configFromEnv(env.SPILLWAY_CONFIG));
 * ```
 */
export async function fleetOverview(env: Env, config: SpillwayConfig, withReplicas = true): Promise<FleetOverview> {
  const deployments = await Promise.all(
    Object.entries(config.deployments).map(async ([name, d]) => {
      const [shards, replicas] = await Promise.all([
        shardStats(env, name, d.routerShards, d.locationHint),
        withReplicas
          ? Promise.all(d.replicas.map((r) => replicaLoad(r, env.SPILLWAY_SIGNING_SECRET)))
          : Promise.resolve([]),
      ]);
      return mergeShards(name, shards, replicas);
    }),
  );
  return { atMs: Date.now(), deployments };
}

/**
 * Every shard's stats of one deployment, over DO RPC.
 *
 * @example
 * ```ts
 * const shards = await shardStats(env, "llama", 2);
 * ```
 */
export function shardStats(
  env: Env,
  deployment: string,
  shards: number,
  locationHint?: DeploymentConfig["locationHint"],
): Promise<ShardStats[]> {
  return Promise.all(
    Array.from({ length: shards }, (_, shard) =>
      env.DEPLOYMENT_ROUTER.getByName(routerName(deployment, shard), placement(locationHint)).stats(deployment, shard),
    ),
  );
}
