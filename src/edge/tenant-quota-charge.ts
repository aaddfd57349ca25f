import { leaseWant, QuotaLease } from "../core/quota-lease";
import type { QuotaLimits, QuotaVerdict } from "../core/tenant-quota";
import { openAIError } from "./openai-error";
import { openAIDuration, rateLimitHeaders } from "./rate-limit-headers";
import type { TenantPlan } from "./tenant-config";
import { closeLease, type LeaseSlot, leaseSlot, renewing, sameLimits } from "./tenant-quota-leases";
import type { TenantQuota } from "./tenant-quota-object";

/** An admitted request's quota charge: the headers to send, and the corrections to make when it ends. */
export interface QuotaCharge {
  /** `x-ratelimit-*` and `RateLimit-Policy` / `RateLimit`; empty for a tenant without quotas. */
  headers: Record<string, string>;
  /** Whether `settle` wants the answer's usage (false without quotas: the answer need not be read for it). */
  wantsUsage: boolean;
  /** The request was not served (refused for capacity, or failed before reaching an engine): give it all back. */
  refund(): void;
  /** The response ended; `totalTokens` from its `usage` replaces the estimate (`undefined`: keep the estimate). */
  settle(totalTokens: number | undefined): void;
}

/** The quota's answer: a charge to carry, or the refusal to send. */
export type QuotaOutcome = { kind: "charged"; charge: QuotaCharge } | { kind: "refused"; response: Response };

/** What charging needs from the Worker. */
export interface QuotaRequest {
  plan: TenantPlan;
  /** Tokens charged at admission: estimated prompt tokens + `max_tokens`. */
  tokens: number;
  /**
   * The `max_tokens` assumed in `tokens` for a request that set none (`tenants.defaultMaxTokens`); absent when the
   * request set it. A refusal says so, since the client never wrote the number that made its request too large.
   */
  assumedMaxTokens?: number;
  namespace: DurableObjectNamespace<TenantQuota> | undefined;
  /** How long a quota lease lasts (`tenants.quotaLeaseMs`); 0 or absent: every request asks the quota object. */
  leaseMs?: number;
  /** The isolate's clock for leases; default `Date.now`. */
  now?: () => number;
  /** Keeps a correction running after the response (`ctx.waitUntil`). */
  waitUntil: (promise: Promise<unknown>) => void;
}

const NO_CHARGE: QuotaCharge = { headers: {}, wantsUsage: false, refund() {}, settle() {} };

/**
 * The tokens a request is charged at admission, as Azure OpenAI does: its prompt, estimated at 4 characters a
 * token over the whole body (an overestimate, corrected with `usage` at the end), plus the completions it may
 * produce (`max_tokens`, or the configured default when it sets none, for each of its `completions`: `n`, or
 * `best_of`; the engine generates each in full).
 *
 * @example
 * ```ts
 * estimateTokens('{"model":"m","messages":[]}'.length, 100, 1024); // 7 + 100
 * estimateTokens('{"model":"m","messages":[],"n":3}'.length, 100, 1024, 3); // 9 + 300
 * ```
 *
 * @param bodyTextLength the body's text length in UTF-16 code units (`AcceptedBody.textLength`), not its bytes.
 */
export function estimateTokens(
  bodyTextLength: number,
  maxTokens: number | undefined,
  defaultMaxTokens: number,
  completions = 1,
): number {
  return Math.ceil(bodyTextLength / 4) + (maxTokens ?? defaultMaxTokens) * completions;
}

/**
 * Charges a request to its tenant's quotas (none for a tenant without quotas). A refusal is a 429 whose
 * `Retry-After` / `retry-after-ms` is the exact time until the request fits, with an error body naming the
 * tenant's quota (code `tenant_quota_exceeded`, unlike a capacity refusal's `rate_limit_exceeded`), and a
 * request that can never fit (more tokens than a minute's quota) is a 400.
 *
 * The charge is one RPC to the tenant's Durable Object, except for a tenant large enough to lease
 * (`leaseWant`, `tenants.quotaLeaseMs`): its admissions are then mostly served from this isolate's lease (units
 * the object charged up front) with no round trip, and only a request the lease does not cover asks the object
 * (returning the old lease's leftovers and taking a new one). A lease with a quarter of its time or units left
 * is renewed ahead by the one request that notices and that it covers, while the others keep spending it; its
 * leftovers go back when the new one arrives. Refusals always come from the object, so their Retry-After stays exact.
 *
 * @example
 * ```ts
 * const quota = await chargeQuota({ plan, tokens, namespace: env.TENANT_QUOTA, leaseMs: 1000,
 *   waitUntil: (p) => ctx.waitUntil(p) });
 * if (quota.kind === "refused") return quota.response;
 * ```
 */
export async function chargeQuota(request: QuotaRequest): Promise<QuotaOutcome> {
  const { plan, tokens, namespace, waitUntil, now = Date.now } = request;
  const limits: QuotaLimits = {
    ...(plan.requestsPerMinute !== undefined ? { requestsPerMinute: plan.requestsPerMinute } : {}),
    ...(plan.tokensPerMinute !== undefined ? { tokensPerMinute: plan.tokensPerMinute } : {}),
  };
  if (limits.requestsPerMinute === undefined && limits.tokensPerMinute === undefined)
    return { kind: "charged", charge: NO_CHARGE };
  if (!namespace) throw new Error(`tenant ${plan.name} has quotas but the TENANT_QUOTA binding is missing`);
  const stub = () => namespace.getByName(plan.name);
  const adjust = (requestsBack: number, tokensBack: number) =>
    waitUntil(stub().adjust(limits, requestsBack, tokensBack));
  const slot = leaseSlot(plan.name, (evictedTenant, lease) =>
    waitUntil(namespace.getByName(evictedTenant).returnLease(lease.limits, lease.close())),
  );

  const askedAt = now();
  // A lease near its end is renewed ahead by the request that notices (one call), while the requests arriving
  // meanwhile keep spending it; only one renewal at a time per tenant and isolate. A request the lease does not
  // cover is a plain miss instead: its leftovers go back with the call, so that the object does not refuse it, or
  // tell it to wait, for units this isolate would keep idle.
  const open = slot.lease;
  const renewAhead =
    open !== undefined &&
    sameLimits(open.limits, limits) &&
    open.dueForRenewal(askedAt) &&
    open.covers(tokens, askedAt) &&
    !renewing(slot, askedAt);
  if (!renewAhead) {
    const local = takeFromLease(slot, limits, tokens, askedAt);
    if (local) return charged(local.verdict, tokens, slot, limits, adjust, now);
  }

  // A miss while a lease call is in flight is charged exactly, without waiting for it (a promise of another
  // request is not awaited across requests in a Worker).
  const want = renewing(slot, askedAt) ? undefined : leaseWant(limits, tokens, request.leaseMs ?? 0);
  // An open lease stays open while its successor is asked for; a spent or expired one goes back with the call.
  const returned = renewAhead ? undefined : closeLease(slot, limits);
  if (want) slot.renewingSince = askedAt;
  let verdict: QuotaVerdict;
  let lease: QuotaLease | undefined;
  try {
    verdict = await stub().admit(limits, tokens, want || returned ? { want, returned } : undefined);
    if (verdict.lease) {
      const grantedAt = now();
      const previous = closeLease(slot, limits);
      if (previous) waitUntil(stub().returnLease(limits, previous));
      lease = new QuotaLease(limits, verdict.lease, verdict, grantedAt, grantedAt + (request.leaseMs ?? 0));
      slot.lease = lease;
    }
  } finally {
    if (want && slot.renewingSince === askedAt) slot.renewingSince = undefined;
  }
  if (!verdict.admitted) {
    // Renewing ahead, the object may refuse what this isolate's own open lease still covers.
    const local = renewAhead ? takeFromLease(slot, limits, tokens, now()) : undefined;
    if (local) return charged(local.verdict, tokens, slot, limits, adjust, now);
    return {
      kind: "refused",
      response: quotaRefusal(plan, tokens, verdict, rateLimitHeaders(verdict), request.assumedMaxTokens),
    };
  }
  // The request that brought a lease: its headers count what the lease holds.
  return charged(lease ? lease.view(now()) : verdict, tokens, slot, limits, adjust, now);
}

/** An admission from this isolate's open lease of the same limits, if it covers the request. */
function takeFromLease(
  slot: LeaseSlot,
  limits: QuotaLimits,
  tokens: number,
  nowMs: number,
): { verdict: QuotaVerdict; lease: QuotaLease } | undefined {
  const lease = slot.lease;
  if (!lease || !sameLimits(lease.limits, limits)) return undefined;
  const verdict = lease.take(tokens, nowMs);
  return verdict && { verdict, lease };
}

/**
 * The charge of an admitted request. Its corrections (a refund, the answer's usage) go onto this isolate's open
 * lease of the tenant, whichever admitted it (the units all go back to the same buckets, at the latest when that
 * lease closes), while the lease holds no more than it was granted; else to the quota object in the background,
 * whose bucket caps a refund at its limit. So the admissions still running when their lease was renewed cost no
 * call each once the new lease has spent as much, and a refund never lets a tenant spend beyond a full bucket plus
 * its leases' grants.
 */
function charged(
  verdict: QuotaVerdict,
  tokens: number,
  slot: LeaseSlot,
  limits: QuotaLimits,
  adjust: (requestsBack: number, tokensBack: number) => void,
  now: () => number,
): QuotaOutcome {
  let done = false;
  const correct = (requestsBack: number, tokensBack: number) => {
    if (done) return;
    done = true;
    if (requestsBack === 0 && tokensBack === 0) return;
    const lease = slot.lease;
    const onLease =
      lease !== undefined && sameLimits(lease.limits, limits) && lease.correct(requestsBack, tokensBack, now());
    if (!onLease) adjust(requestsBack, tokensBack);
  };
  return {
    kind: "charged",
    charge: {
      headers: rateLimitHeaders(verdict),
      wantsUsage: true,
      refund: () => correct(1, tokens),
      // Corrected even without a token quota: the tenant's token count (metrics) is then the answers' usage.
      settle: (used) => correct(0, used === undefined ? 0 : tokens - used),
    },
  };
}

function quotaRefusal(
  plan: TenantPlan,
  tokens: number,
  verdict: QuotaVerdict,
  headers: Record<string, string>,
  assumedMaxTokens: number | undefined,
): Response {
  const refusal = verdict.refusal as NonNullable<QuotaVerdict["refusal"]>;
  const state = verdict[refusal.quota];
  const limit = state?.limit ?? 0;
  const unit = refusal.quota === "requests" ? "requests per minute (RPM)" : "tokens per minute (TPM)";
  const requested = refusal.quota === "requests" ? 1 : tokens;
  if (refusal.neverFits) {
    const advice =
      assumedMaxTokens === undefined
        ? "Lower max_tokens or the prompt."
        : `The request sets no max_tokens, so ${assumedMaxTokens} are assumed: set a lower max_tokens or shorten the prompt.`;
    return openAIError(
      400,
      `Request too large for tenant ${plan.name} on ${unit}: Limit ${limit}, Requested ${requested}. ${advice}`,
      "invalid_request_error",
      "tokens_exceed_quota",
      headers,
      "max_tokens",
    );
  }
  const ms = refusal.retryAfterMs;
  return openAIError(
    429,
    `Rate limit reached for tenant ${plan.name} on ${unit}: Limit ${limit}, Remaining ${state?.remaining ?? 0}, Requested ${requested}. Please try again in ${openAIDuration(ms)}.`,
    refusal.quota,
    "tenant_quota_exceeded",
    { ...headers, "retry-after": String(Math.ceil(ms / 1000)), "retry-after-ms": String(ms) },
  );
}
