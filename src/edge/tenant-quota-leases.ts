import type { LeaseReturn, QuotaLease } from "../core/quota-lease";
import type { QuotaLimits } from "../core/tenant-quota";

/** At most this many tenants' leases are held in one isolate; past it the oldest is closed and given back. */
const MAX_LEASED_TENANTS = 1024;

const slots = new Map<string, LeaseSlot>();

/** One tenant's lease in this isolate, and the call asking for the next one, if any is in flight. */
export interface LeaseSlot {
  lease?: QuotaLease;
  /**
   * When the call asking for a lease that is in flight started (other misses meanwhile are charged without asking
   * for one); `undefined`: none. A call whose request was cancelled may never clear it: it counts only for
   * {@link RENEWAL_STALE_MS}.
   */
  renewingSince: number | undefined;
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
  const slot: LeaseSlot = { renewingSince: undefined };
  slots.set(tenant, slot);
  if (slots.size > MAX_LEASED_TENANTS) {
    const [oldestName, oldest] = slots.entries().next().value as [string, LeaseSlot];
    slots.delete(oldestName);
    if (oldest.lease) giveBack(oldestName, oldest.lease);
  }
  return slot;
}

/** After this long a lease call is assumed lost (its request cancelled before the answer): ask again. */
export const RENEWAL_STALE_MS = 10_000;

/** Whether a call asking for this slot's next lease is in flight. */
export function renewing(slot: LeaseSlot, nowMs: number): boolean {
  return slot.renewingSince !== undefined && nowMs - slot.renewingSince < RENEWAL_STALE_MS;
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
