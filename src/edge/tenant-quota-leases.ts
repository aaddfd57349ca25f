import type { LeaseReturn, QuotaLease } from "../core/quota-lease";
import type { QuotaLimits } from "../core/tenant-quota";

/** At most this many tenants' leases are held in one isolate; past it the oldest is closed and given back. */
const MAX_LEASED_TENANTS = 1024;

const slots = new Map<string, LeaseSlot>();

/** One tenant's lease in this isolate, and the call asking for the next one, if any is in flight. */
export interface LeaseSlot {
  lease?: QuotaLease;
  /** A call asking for a lease is in flight (other misses meanwhile are charged without asking for one). */
  renewing: boolean;
}

/**
 * The quota leases of this isolate, by tenant name (one `TENANT_QUOTA` namespace per Worker). Isolate memory, as
 * the platform keeps module state between requests; an evicted isolate loses its leases' leftovers (charged, so
 * never an excess: the tenant's bucket refills them).
 *
 * @example
 * ```ts
 * const slot = leaseSlot("acme", (evicted, lease) =>
 *   ctx.waitUntil(env.TENANT_QUOTA.getByName(evicted).returnLease(lease.limits, lease.close())));
 * const verdict = slot.lease?.take(tokens, Date.now());
 * ```
 */
export function leaseSlot(tenant: string, giveBack: (evictedTenant: string, lease: QuotaLease) => void): LeaseSlot {
  const existing = slots.get(tenant);
  if (existing) return existing;
  const slot: LeaseSlot = { renewing: false };
  slots.set(tenant, slot);
  if (slots.size > MAX_LEASED_TENANTS) {
    const [oldestName, oldest] = slots.entries().next().value as [string, LeaseSlot];
    slots.delete(oldestName);
    if (oldest.lease) giveBack(oldestName, oldest.lease);
  }
  return slot;
}

/** Closes a slot's lease, if any: its leftovers to give back when it was taken under the same `limits`. */
export function closeLease(slot: LeaseSlot, limits: QuotaLimits): LeaseReturn | undefined {
  const lease = slot.lease;
  if (!lease) return undefined;
  slot.lease = undefined;
  const returned = lease.close();
  // Under changed limits the quota object starts the tenant's buckets afresh: the old leftovers are not owed.
  return sameLimits(lease.limits, limits) ? returned : undefined;
}

/** Whether two plans' quotas are the same. */
export function sameLimits(a: QuotaLimits, b: QuotaLimits): boolean {
  return a.requestsPerMinute === b.requestsPerMinute && a.tokensPerMinute === b.tokensPerMinute;
}

/** Forgets every lease of this isolate, unreturned (tests: a fresh isolate). */
export function forgetLeasesForTesting(): void {
  slots.clear();
}
