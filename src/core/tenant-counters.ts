/** One tenant's routing decisions at a router. */
export interface TenantCount {
  admitted: number;
  /** Refused for capacity: queue full (or pushed out), queue timeout, no replica. */
  shed: number;
}

/** The label that gathers every tenant without its own. */
export const OTHER_TENANTS = "other";

/**
 * Per-tenant admitted / shed counts with bounded memory: the first `maxTenants` tenants get their own entry, later
 * ones are counted under `other` (a router sees few tenants; a flood of names cannot grow it), as is a tenant named
 * `other`, which takes none of those entries' places.
 *
 * @example
 * ```ts
 * const counts = new TenantCounters(2);
 * counts.add("a", "admitted"); counts.add("b", "shed"); counts.add("c", "shed");
 * counts.snapshot(); // { a: { admitted: 1, shed: 0 }, b: { admitted: 0, shed: 1 }, other: { admitted: 0, shed: 1 } }
 * ```
 */
export class TenantCounters {
  private readonly counts = new Map<string, TenantCount>();

  constructor(private readonly maxTenants = 256) {}

  add(tenant: string, kind: keyof TenantCount): void {
    let count = this.counts.get(tenant);
    if (!count) {
      // Tenants with an entry of their own: `other` is not one (a tenant named so included), so takes no one's place.
      const own = this.counts.size - (this.counts.has(OTHER_TENANTS) ? 1 : 0);
      const name = own >= this.maxTenants || tenant === OTHER_TENANTS ? OTHER_TENANTS : tenant;
      count = this.counts.get(name) ?? { admitted: 0, shed: 0 };
      this.counts.set(name, count);
    }
    count[kind] += 1;
  }

  snapshot(): Record<string, TenantCount> {
    return Object.fromEntries([...this.counts].map(([name, count]) => [name, { ...count }]));
  }
}

/**
 * The `k` tenants with the most decisions, the rest summed as `other`: the labels a metrics exporter shows, so a
 * dashboard's cardinality stays bounded whatever the number of tenants.
 *
 * @example
 * ```ts
 * topTenants({ a: { admitted: 9, shed: 0 }, b: { admitted: 1, shed: 0 }, c: { admitted: 2, shed: 1 } }, 1);
 * // { a: { admitted: 9, shed: 0 }, other: { admitted: 3, shed: 1 } }
 * ```
 */
export function topTenants(counts: Record<string, TenantCount>, k: number): Record<string, TenantCount> {
  const ranked = Object.entries(counts)
    .filter(([name]) => name !== OTHER_TENANTS)
    .sort(([an, a], [bn, b]) => b.admitted + b.shed - (a.admitted + a.shed) || an.localeCompare(bn));
  const top: Record<string, TenantCount> = Object.fromEntries(ranked.slice(0, k).map(([n, c]) => [n, { ...c }]));
  const rest = ranked.slice(k).map(([, c]) => c);
  const other = counts[OTHER_TENANTS];
  if (other) rest.push(other);
  if (rest.length > 0) {
    top[OTHER_TENANTS] = {
      admitted: rest.reduce((s, c) => s + c.admitted, 0),
      shed: rest.reduce((s, c) => s + c.shed, 0),
    };
  }
  return top;
}
