import { QUOTA_PERIOD_MS, type QuotaLimits, type QuotaState, type QuotaUnits, type QuotaVerdict } from "./tenant-quota";

/** A lease smaller than this many requests is not worth its inexactness: such a tenant is charged per request. */
export const MIN_LEASED_REQUESTS = 4;

/**
 * A lease is renewed ahead once this share of its time or of any of its units is left, so that the requests
 * arriving while its successor is asked for still find units (without it, every one of them paid a round trip
 * to the quota object, and each correction of an expired lease's admissions another).
 */
export const RENEW_AHEAD_SHARE = 0.25;

/**
 * The lease worth asking the quota for beside a request of `tokens`: what each limited quota refills in
 * `leaseMs` (so an isolate never holds more than `leaseMs` of a tenant's allowance). `undefined` when leasing is
 * off (`leaseMs` 0), the tenant has no quota, or the lease would cover fewer than {@link MIN_LEASED_REQUESTS}
 * requests like this one (a 30-requests-per-minute tenant is always charged exactly, request by request).
 *
 * @example
 * ```ts
 * leaseWant({ requestsPerMinute: 6000 }, 500, 1000);   // { requests: 100 }
 * leaseWant({ requestsPerMinute: 30 }, 500, 1000);     // undefined: half a request per second
 * ```
 */
export function leaseWant(limits: QuotaLimits, tokens: number, leaseMs: number): QuotaUnits | undefined {
  if (!(leaseMs > 0)) return undefined;
  const share = (limit: number | undefined) =>
    limit === undefined ? undefined : Math.floor((limit * leaseMs) / QUOTA_PERIOD_MS);
  const requests = share(limits.requestsPerMinute);
  const tokenUnits = share(limits.tokensPerMinute);
  if (requests === undefined && tokenUnits === undefined) return undefined;
  if (requests !== undefined && requests < MIN_LEASED_REQUESTS) return undefined;
  if (tokenUnits !== undefined && tokenUnits < MIN_LEASED_REQUESTS * Math.max(1, tokens)) return undefined;
  return {
    ...(requests !== undefined ? { requests } : {}),
    ...(tokenUnits !== undefined ? { tokens: tokenUnits } : {}),
  };
}

/**
 * What a closed lease hands back: its leftovers (corrections included), and for the quota object's counts the
 * admissions it served, the tokens they were charged (estimates, plus overruns) and the tokens refunded to it.
 */
export interface LeaseReturn {
  leftover: Required<QuotaUnits>;
  served: number;
  tokensCharged: number;
  tokensRefunded: number;
}

/**
 * A share of one tenant's quotas that the quota object charged up front and an isolate spends locally until
 * `expiresAtMs`: an admission it covers costs no round trip. Because the units were taken from the tenant's
 * buckets when granted, spending them never admits beyond the quota; a request the lease does not cover goes
 * to the quota object (which alone refuses, with the exact wait). Corrections of admissions (a refund, the answer's
 * usage) are put on it while it is open and holds no more than it was granted; what is left when it closes goes
 * back to the object.
 *
 * The `x-ratelimit-*` states of an admission it serves are estimates: the bucket's level when the lease was
 * granted, refilled since, plus what the lease still holds (other isolates' spending since is not seen).
 *
 * Pure: the clock is a parameter.
 *
 * @example
 * ```ts
 * const limits = { requestsPerMinute: 6000 };
 * const verdict = ledger.admit(limits, 0, now, leaseWant(limits, 0, 1000));
 * const lease = new QuotaLease(limits, verdict.lease ?? {}, verdict, now, now + 1000);
 * lease.take(0, now + 10)?.admitted;   // true, locally
 * lease.close();   // { leftover: { requests: 99, tokens: 0 }, served: 1, tokensCharged: 0, tokensRefunded: 0 }
 * ```
 */
export class QuotaLease {
  private readonly left: Required<QuotaUnits>;
  private readonly granted: Required<QuotaUnits>;
  private served = 0;
  private tokensCharged = 0;
  private tokensRefunded = 0;
  private closed = false;

  constructor(
    readonly limits: QuotaLimits,
    granted: QuotaUnits,
    private readonly atGrant: Pick<QuotaVerdict, "requests" | "tokens">,
    private readonly grantedAtMs: number,
    readonly expiresAtMs: number,
  ) {
    this.left = { requests: granted.requests ?? 0, tokens: granted.tokens ?? 0 };
    this.granted = { ...this.left };
  }

  /** Whether it may still be spent: not closed and not expired. */
  isOpen(nowMs: number): boolean {
    return !this.closed && nowMs < this.expiresAtMs;
  }

  /**
   * Whether its successor is worth asking for now, while it is still open: at most {@link RENEW_AHEAD_SHARE} of
   * its time, or of a unit it was granted, is left. (A closed or expired lease is not due: it is replaced.)
   */
  dueForRenewal(nowMs: number): boolean {
    if (!this.isOpen(nowMs)) return false;
    const lifetime = this.expiresAtMs - this.grantedAtMs;
    if (this.expiresAtMs - nowMs <= lifetime * RENEW_AHEAD_SHARE) return true;
    const low = (unit: keyof QuotaUnits) =>
      this.granted[unit] > 0 && this.left[unit] <= this.granted[unit] * RENEW_AHEAD_SHARE;
    return low("requests") || low("tokens");
  }

  /** Whether it is open and holds one request and `tokens` (of the quotas it has): what `take` would spend. */
  covers(tokens: number, nowMs: number): boolean {
    if (!this.isOpen(nowMs)) return false;
    if (this.limits.requestsPerMinute !== undefined && this.left.requests < 1) return false;
    return this.limits.tokensPerMinute === undefined || this.left.tokens >= tokens;
  }

  /** Spends one request and `tokens` if it is open and covers both; the admission (estimated states) or `undefined`. */
  take(tokens: number, nowMs: number): QuotaVerdict | undefined {
    if (!this.covers(tokens, nowMs)) return undefined;
    if (this.limits.requestsPerMinute !== undefined) this.left.requests -= 1;
    if (this.limits.tokensPerMinute !== undefined) this.left.tokens -= tokens;
    this.served += 1;
    this.tokensCharged += tokens;
    return this.view(nowMs);
  }

  /** An admission's verdict as seen from this lease now (its `x-ratelimit-*` estimates). */
  view(nowMs: number): QuotaVerdict {
    return { admitted: true, ...this.states(nowMs) };
  }

  /**
   * Puts a correction of an admission on the lease (positive: back, negative: charged); false, and nothing
   * changed, when it is closed or expired, a charge exceeds what it holds, or a refund would make it hold more
   * than it was granted (then the caller sends the correction to the quota object). The last keeps the lease's
   * promise for refunds of admissions it did not serve (the object's, an earlier lease's): the bucket caps a
   * refund at its limit, and a lease holding it beyond its grant could be spent on top of a full bucket.
   *
   * @example
   * ```ts
   * const lease = new QuotaLease({ tokensPerMinute: 60_000 }, { tokens: 1000 }, {}, 0, 1000);
   * lease.take(400, 10);            // served from the lease: 600 left
   * lease.correct(0, 300, 20);      // true: its answer used 100 of 400 (900 left)
   * lease.correct(0, 5000, 30);     // false: a refund beyond the grant goes to the quota object
   * ```
   */
  correct(requests: number, tokens: number, nowMs: number): boolean {
    if (!this.isOpen(nowMs)) return false;
    const requestsAfter = this.limits.requestsPerMinute === undefined ? 0 : this.left.requests + requests;
    const tokensAfter = this.limits.tokensPerMinute === undefined ? 0 : this.left.tokens + tokens;
    if (requestsAfter < 0 || tokensAfter < 0) return false;
    if (requestsAfter > this.granted.requests || tokensAfter > this.granted.tokens) return false;
    if (this.limits.requestsPerMinute !== undefined) this.left.requests = requestsAfter;
    if (this.limits.tokensPerMinute !== undefined) this.left.tokens = tokensAfter;
    // Counted even without a token quota: the tenant's token count (metrics) is then the answers' usage.
    if (tokens > 0) this.tokensRefunded += tokens;
    else this.tokensCharged -= tokens;
    return true;
  }

  /** Closes it: what it still holds goes back to the quota object, with how many admissions it served. Once. */
  close(): LeaseReturn {
    if (this.closed) return { leftover: { requests: 0, tokens: 0 }, served: 0, tokensCharged: 0, tokensRefunded: 0 };
    this.closed = true;
    const { served, tokensCharged, tokensRefunded } = this;
    return { leftover: { ...this.left }, served, tokensCharged, tokensRefunded };
  }

  private states(nowMs: number): Pick<QuotaVerdict, "requests" | "tokens"> {
    const estimate = (state: QuotaState | undefined, held: number): QuotaState | undefined => {
      if (!state) return undefined;
      const refilled = (Math.max(0, nowMs - this.grantedAtMs) * state.limit) / QUOTA_PERIOD_MS;
      const level = Math.min(state.limit, state.remaining + refilled + held);
      return {
        limit: state.limit,
        remaining: Math.max(0, Math.floor(level + 1e-6)),
        resetMs: Math.max(0, Math.ceil(((state.limit - level) * QUOTA_PERIOD_MS) / state.limit - 1e-6)),
      };
    };
    const requests = estimate(this.atGrant.requests, this.left.requests);
    const tokens = estimate(this.atGrant.tokens, this.left.tokens);
    return { ...(requests ? { requests } : {}), ...(tokens ? { tokens } : {}) };
  }
}
