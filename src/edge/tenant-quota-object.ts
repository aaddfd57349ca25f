import { DurableObject } from "cloudflare:workers";
import { QuotaLedger, type QuotaLimits, type QuotaVerdict } from "../core/tenant-quota";
import type { Env } from "./env";
import type { TenantQuotaStats } from "./tenant-quota-stats";

/**
 * The quotas of one tenant, held consistently across the whole edge: one Durable Object per tenant name
 * (`getByName(plan.name)`), driving the pure {@link QuotaLedger}. Every call answers from memory (no storage, no
 * fetch), so it adds one Durable Object round trip to an admitted request and nothing more. The limits come with
 * each call (the configuration is the source of truth; a changed plan applies at once).
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

  /** Charges one request and `tokens` if both fit now; otherwise nothing, with the exact wait until they do. */
  async admit(limits: QuotaLimits, tokens: number): Promise<QuotaVerdict> {
    const verdict = this.ledger.admit(limits, tokens, Date.now());
    if (verdict.admitted) {
      this.counts.admitted += 1;
      this.counts.tokensCharged += tokens;
    } else this.counts.refused += 1;
    return verdict;
  }

  /** Corrects an earlier charge: positive amounts are refunds (a refused or cheaper request), negative charges. */
  async adjust(limits: QuotaLimits, requests: number, tokens: number): Promise<QuotaVerdict> {
    // Monotonic counters (Prometheus): a refund counts as refunded, an overrun as charged.
    if (tokens > 0) this.counts.tokensRefunded += tokens;
    else this.counts.tokensCharged -= tokens;
    return this.ledger.adjust(limits, requests, tokens, Date.now());
  }

  /** What this tenant's quota has counted since the object started (for the metrics route). */
  async stats(): Promise<TenantQuotaStats> {
    return { ...this.counts };
  }
}
