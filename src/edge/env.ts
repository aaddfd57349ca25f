import type { DeploymentRouter } from "./deployment-router";
import type { TenantQuota } from "./tenant-quota-object";

type SpillwayEnv = Env;

/**
 * The Worker's bindings, as declared in wrangler.toml.
 *
 * @example
 * ```ts
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
  /** One quota Durable Object per tenant (requests and tokens per minute); needed once any plan has quotas. */
  TENANT_QUOTA?: DurableObjectNamespace<TenantQuota>;
  /** Workers KV: SHA-256 (hex) of an API key -> its plan as JSON (README, "Tenants"). Optional. */
  SPILLWAY_TENANT_KEYS?: KVNamespace;
}

declare global {
  namespace Cloudflare {
    // Lets `env` from "cloudflare:test" and "cloudflare:workers" carry our bindings' types.
    interface Env extends SpillwayEnv {}
  }
}
