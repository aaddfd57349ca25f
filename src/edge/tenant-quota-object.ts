import { DurableObject } from "cloudflare:workers";
import type { LeaseReturn } from "../core/quota-lease";
import { QuotaLedger, type QuotaLimits, type QuotaUnits, type QuotaVerdict } from "../core/tenant-quota";
import type { Env } from "./env";
import type { TenantQuotaStats } from "./tenant-quota-stats";

/**
 * The quotas of one tenant, held consistently across the whole edge: one Durable Object per tenant name
 * (`getByName(plan.name)`), driving the pure {@link QuotaLedger}. Every call answers from memory (no storage, no
 * fetch). The limits come with each call (the configuration is the source of truth; a changed plan applies at
 * once). An admission may also grant the calling isolate a lease (`QuotaLease`: units charged now, spent there
 * without a round trip); the isolate hands its leftovers back with a later call (`admit`'s `lease.returned`, or
 * `returnLease`).
 *
 * State lives in memory only: a restarted object starts with full quotas (a tenant may get up to one extra
 * minute's allowance across a restart; never less than its plan).
 *
 * @example
 * ```ts
 * const quota = env.TENANT_QUOTA.getByName("acme");
 * const verdict = await quota.admit({ requestsPerMinute: 30 }, 1200);
 * if (verdict.admitted) {
 *   // ... serve, then correct the token charge with the response's usage:
 *   await quota.adjust({ tokensPerMinute: 10_000 }, 0, 1200 - 800);
 * }
 * ```
 */
export class TenantQuota extends DurableObject<Env> {
  private readonly ledger = new QuotaLedger();
  private readonly counts: TenantQuotaStats = { admitted: 0, refused: 0, tokensCharged: 0, tokensRefunded: 0 };

  /**
   * Charges one request and `tokens` if both fit now; otherwise nothing, with the exact wait until they do.
   * `lease.returned` (an isolate's closed lease) is given back first, so a refusal counts it; `lease.want` asks
   * for a lease beside an admission (`verdict.lease`: what was granted).
   */
  async admit(
    limits: QuotaLimits,
    tokens: number,
    lease?: { want?: QuotaUnits; returned?: LeaseReturn },
  ): Promise<QuotaVerdict> {
    if (lease?.returned) this.giveBack(limits, lease.returned);
    const verdict = this.ledger.admit(limits, tokens, Date.now(), lease?.want);
    if (verdict.admitted) {
      this.counts.admitted += 1;
      // A lease's units are not counted here: its admissions are, when it is returned.
      this.counts.tokensCharged += tokens;
    } else this.counts.refused += 1;
    return verdict;
  }

  /** Takes back a closed lease's leftovers (and counts the admissions it served). */
  async returnLease(limits: QuotaLimits, returned: LeaseReturn): Promise<void> {
    this.giveBack(limits, returned);
  }

  /** Corrects an earlier charge: positive amounts are refunds (a refused or cheaper request), negative charges. */
  async adjust(limits: QuotaLimits, requests: number, tokens: number): Promise<QuotaVerdict> {
    // Monotonic counters (Prometheus): a refund counts as refunded, an overrun as charged.
    if (tokens > 0) this.counts.tokensRefunded += tokens;
    else this.counts.tokensCharged -= tokens;
    return this.ledger.adjust(limits, requests, tokens, Date.now());
  }

  private giveBack(limits: QuotaLimits, returned: LeaseReturn): void {
    this.counts.admitted += returned.served;
    this.counts.tokensCharged += returned.tokensCharged;
    this.counts.tokensRefunded += returned.tokensRefunded;
    this.ledger.adjust(limits, returned.leftover.requests, returned.leftover.tokens, Date.now());
  }

  /** What this tenant's quota has counted since the object started (for the metrics route). */
  async stats(): Promise<TenantQuotaStats> {
    return { ...this.counts };
  }
}
