import type { SpillwayConfig } from "./config";
import type { Env } from "./env";
import type { TenantQuotaStats } from "./tenant-quota-stats";

/** At most this many tenants' quota objects are asked per scrape. */
const MAX_TENANTS_SCRAPED = 50;

/**
 * The quota counts of the configured tenants that have quotas (by name; at most 50 per scrape, in configuration
 * order). Tenants known only from KV cannot be listed and are not included; tenants without quotas have no
 * quota object.
 *
 * @example
 * ```ts
 * const quotas = await tenantQuotaStats(env, config); // { small: { admitted: 30, refused: 1, tokensCharged: 9000, tokensRefunded: 8600 } }
 * ```
 */
export async function tenantQuotaStats(env: Env, config: SpillwayConfig): Promise<Record<string, TenantQuotaStats>> {
  const namespace = env.TENANT_QUOTA;
  if (!namespace) return {};
  const names = [
    ...new Set(
      [config.tenants.anonymous, ...Object.values(config.tenants.keys)]
        .filter((plan) => plan.requestsPerMinute !== undefined || plan.tokensPerMinute !== undefined)
        .map((plan) => plan.name),
    ),
  ].slice(0, MAX_TENANTS_SCRAPED);
  const stats = await Promise.all(names.map((name) => namespace.getByName(name).stats()));
  return Object.fromEntries(names.map((name, i) => [name, stats[i] as TenantQuotaStats]));
}
