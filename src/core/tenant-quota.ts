import { TokenBucket } from "./token-bucket";

/** One minute: the period of requests-per-minute and tokens-per-minute quotas. */
export const QUOTA_PERIOD_MS = 60_000;

/** A tenant's quotas; an absent one is unlimited. */
export interface QuotaLimits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}

/** One quota's state after a decision, in the terms OpenAI's `x-ratelimit-*` headers use. */
export interface QuotaState {
  limit: number;
  /** Whole units left now (0 while in debt). */
  remaining: number;
  /** Milliseconds until the quota is full again. */
  resetMs: number;
}

/** The answer to an admission: its state per quota, and, when refused, the exact wait until it would fit. */
export interface QuotaVerdict {
  admitted: boolean;
  /**
   * Refused: the quota that is short (`requests` first when both are, except that a request larger than the token
   * quota names `tokens`: it never fits, whatever the requests quota does), and the milliseconds until both fit.
   */
  refusal?: { quota: "requests" | "tokens"; retryAfterMs: number; neverFits: boolean };
  requests?: QuotaState;
  tokens?: QuotaState;
  /** Admitted with a lease asked for: the units taken beyond this request, for the asker to spend locally. */
  lease?: QuotaUnits;
}

/** Amounts of each quota (a lease asked for or granted, leftovers given back); absent: none of that quota. */
export interface QuotaUnits {
  requests?: number;
  tokens?: number;
}

/**
 * One tenant's request and token quotas, charged together: a request is admitted only if one request and its
 * token estimate both fit now (both are taken, or neither); when it does not fit, the refusal carries the
 * exact time until both will (a fact of the refill line, not an estimate). A token charge is corrected with
 * `adjust` when the response's `usage` is known. Limits are passed on every admission, so a changed plan applies
 * at once (a bucket whose limit changed starts full at the new limit); corrections go to the bucket as it is.
 *
 * Pure: the clock is a parameter.
 *
 * @example
 * ```ts
 * const ledger = new QuotaLedger();
 * const limits = { requestsPerMinute: 30, tokensPerMinute: 10_000 };
 * ledger.admit(limits, 1200, 0).admitted;   // true
 * ledger.adjust(limits, 0, 400, 0);         // the response used 800 tokens, not 1200: 400 back
 * ```
 */
export class QuotaLedger {
  private requests: TokenBucket | undefined;
  private tokens: TokenBucket | undefined;

  /**
   * Charges one request and `tokens` if both fit now; otherwise charges nothing and says when they will. When
   * admitted and `lease` is given, it also takes up to that much more of each limited quota (what is available
   * now, whole units) and returns it as `verdict.lease`: units charged now, for the caller to spend locally. No
   * lease is granted when any limited quota has nothing left to lease. The states are those after both charges.
   */
  admit(limits: QuotaLimits, tokens: number, nowMs: number, lease?: QuotaUnits): QuotaVerdict {
    const requests = this.bucket("requests", limits.requestsPerMinute, nowMs);
    const tokenBucket = this.bucket("tokens", limits.tokensPerMinute, nowMs);
    const requestWait = requests?.waitMs(1, nowMs) ?? 0;
    const tokenWait = tokenBucket?.waitMs(tokens, nowMs) ?? 0;
    if (requestWait === 0 && tokenWait === 0) {
      requests?.take(1, nowMs);
      tokenBucket?.take(tokens, nowMs);
      const granted = lease && this.grant(requests, tokenBucket, lease, nowMs);
      return { admitted: true, ...this.states(nowMs), ...(granted ? { lease: granted } : {}) };
    }
    const retryAfterMs = Math.max(requestWait, tokenWait);
    // A request that can never fit is refused for what it asks of the token quota (a 400 naming it), not for a
    // requests quota that is only short for now.
    const quota = requestWait > 0 && Number.isFinite(tokenWait) ? "requests" : "tokens";
    return {
      admitted: false,
      refusal: { quota, retryAfterMs, neverFits: !Number.isFinite(retryAfterMs) },
      ...this.states(nowMs),
    };
  }

  /**
   * Corrects an earlier charge: positive amounts are refunds, negative ones further charges. It goes to the
   * tenant's bucket as it is (`limits`, those of the charge, only make one when there is none): a correction made
   * under the plan before a change must not switch the bucket back, or each one would start it full again.
   */
  adjust(limits: QuotaLimits, requests: number, tokens: number, nowMs: number): QuotaVerdict {
    if (requests !== 0) this.current("requests", limits.requestsPerMinute, nowMs)?.adjust(requests, nowMs);
    if (tokens !== 0) this.current("tokens", limits.tokensPerMinute, nowMs)?.adjust(tokens, nowMs);
    return { admitted: true, ...this.states(nowMs) };
  }

  /** The bucket of `kind` as it is, or, without one, the bucket `limit` makes. */
  private current(kind: "requests" | "tokens", limit: number | undefined, nowMs: number): TokenBucket | undefined {
    return this[kind] ?? this.bucket(kind, limit, nowMs);
  }

  /** Takes a lease from the buckets: every limited quota must have at least one whole unit to lease. */
  private grant(
    requests: TokenBucket | undefined,
    tokens: TokenBucket | undefined,
    want: QuotaUnits,
    nowMs: number,
  ): QuotaUnits | undefined {
    const leasable = (bucket: TokenBucket | undefined, wanted: number | undefined) =>
      bucket && Math.max(0, Math.min(wanted ?? 0, Math.floor(bucket.available(nowMs) + 1e-6)));
    const requestUnits = leasable(requests, want.requests);
    const tokenUnits = leasable(tokens, want.tokens);
    if (requestUnits === 0 || tokenUnits === 0 || (requestUnits === undefined && tokenUnits === undefined))
      return undefined;
    if (requestUnits !== undefined) requests?.adjust(-requestUnits, nowMs);
    if (tokenUnits !== undefined) tokens?.adjust(-tokenUnits, nowMs);
    return {
      ...(requestUnits !== undefined ? { requests: requestUnits } : {}),
      ...(tokenUnits !== undefined ? { tokens: tokenUnits } : {}),
    };
  }

  private bucket(kind: "requests" | "tokens", limit: number | undefined, nowMs: number): TokenBucket | undefined {
    const current = this[kind];
    if (limit === undefined) {
      this[kind] = undefined;
      return undefined;
    }
    if (current?.rate.limit === limit) return current;
    const fresh = new TokenBucket({ limit, periodMs: QUOTA_PERIOD_MS }, nowMs);
    this[kind] = fresh;
    return fresh;
  }

  private states(nowMs: number): Pick<QuotaVerdict, "requests" | "tokens"> {
    const state = (bucket: TokenBucket | undefined): QuotaState | undefined =>
      bucket && {
        limit: bucket.rate.limit,
        remaining: Math.max(0, Math.floor(bucket.available(nowMs) + 1e-6)),
        resetMs: bucket.resetMs(nowMs),
      };
    const requests = state(this.requests);
    const tokens = state(this.tokens);
    return { ...(requests ? { requests } : {}), ...(tokens ? { tokens } : {}) };
  }
}
