import type { DeploymentRouter } from "./deployment-router";
import type { TenantQuota } from "./tenant-quota-object";

/**
 * The bindings spillway reads, as declared in wrangler.toml (exported by the package as `SpillwayBindings`;
 * a Worker's own `Env`, e.g. from `wrangler types`, extends or includes it). Secrets named by a deployment's
 * `upstreamApiKeySecret` are read by name besides these.
 *
 * @example
 * ```ts
 * import type { SpillwayBindings } from "spillway";
 * type Env = SpillwayBindings & { MY_KV: KVNamespace };
 * export default { fetch: (req: Request, env: Env) => new Response(env.SPILLWAY_CONFIG) };
 * ```
 */
export interface Env {
  /** The configuration document, a JSON string (see README, "Configuration"). */
  SPILLWAY_CONFIG: string;
  /** One router Durable Object per deployment (or per deployment shard). */
  DEPLOYMENT_ROUTER: DurableObjectNamespace<DeploymentRouter>;
  /** Bearer token of the stats and admin routes (a wrangler secret, or `.dev.vars` locally). Unset: closed. */
  SPILLWAY_ADMIN_TOKEN?: string;
  /** Shared secret the edge signs forwarded requests and probes with (a wrangler secret). Unset: unsigned. */
  SPILLWAY_SIGNING_SECRET?: string;
  /** Workers Analytics Engine dataset for routing decisions (optional; see analytics.ts). Unset: not written. */
  SPILLWAY_METRICS?: AnalyticsEngineDataset;
  /** "1" enables test seams such as `DeploymentRouter.setClockForTesting` (the workerd tests only). Unset: off. */
  SPILLWAY_TEST_HOOKS?: string;
  /** One quota Durable Object per tenant (requests and tokens per minute); needed once any plan has quotas. */
  TENANT_QUOTA?: DurableObjectNamespace<TenantQuota>;
  /** Workers KV: SHA-256 (hex) of an API key -> its plan as JSON (README, "Tenants"). Optional. */
  SPILLWAY_TENANT_KEYS?: KVNamespace;
}
