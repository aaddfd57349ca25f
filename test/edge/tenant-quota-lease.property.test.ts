import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type LeaseReturn, leaseWant, type QuotaLease, RENEW_AHEAD_SHARE } from "../../src/core/quota-lease";
import { QuotaLedger, type QuotaLimits, type QuotaUnits, type QuotaVerdict } from "../../src/core/tenant-quota";
import type { OpenAIErrorBody } from "../../src/edge/openai-error";
import type { TenantPlan } from "../../src/edge/tenant-config";
import { chargeQuota, type QuotaCharge, type QuotaOutcome } from "../../src/edge/tenant-quota-charge";
import {
  closeLease,
  forgetLeasesForTesting,
  type LeaseSlot,
  leaseSlot,
  RENEWAL_STALE_MS,
} from "../../src/edge/tenant-quota-leases";
import type { TenantQuota } from "../../src/edge/tenant-quota-object";
import { EPS, fitsLevel, levelAt, type ModelBucketLine, NEAR, rate, refill } from "../support/model-bucket";
import { propertyRuns } from "../support/property-runs";

/**
 * The edge's charge of tenants' quotas with leases (`chargeQuota`, the isolate's lease slots), driven with arbitrary
 * sequences against the real QuotaLedger behind a fake quota namespace that logs every call ("the wire") and answers
 * an `admit` only when the test delivers it: so several requests are in flight at once (a renewal ahead while others
 * spend the open lease, misses meanwhile), with the clock moving (onto lease expiry, renewal and stale instants, give
 * or take 1 ms) while they are. The object decides either when called or when its answer is delivered (per run).
 * Corrections (refund, usage, none, and repeated ones) and other isolates' spending come in between.
 *
 * A model follows the documented behaviour (README "Tenants", the JSDoc of chargeQuota, QuotaLease and the lease
 * slots): per tenant its buckets, its leases (granted, held, served) and the renewal in flight. After every action:
 *
 * - the edge's calls are the documented ones: a request the isolate's open lease covers is served there with no call
 *   (unless it renews ahead); otherwise one `admit` asking for a lease iff none is being asked for, giving the old
 *   lease back (exactly its leftovers and counts) unless renewing ahead; a granted lease replaces the old one, whose
 *   leftovers go back then, exactly once; refusals come from the object only, and a renewal refused falls back on
 *   the open lease;
 * - nothing created or lost, per quota: what the object admitted and granted, less what came back and the
 *   corrections it got, is exactly what clients use (admitted, less refunds, plus overruns) plus what leases hold;
 * - never beyond the quota: admitted (by the object and leases, and by other isolates) less refunds is at most the
 *   limit plus the refill since the start; what the tenant can spend at an instant (bucket and open leases) is at most
 *   the limit plus those leases' grants; the ledger's level agrees with the model's bucket;
 * - at most one lease per isolate and tenant, two while a renewal is in flight (more only past RENEWAL_STALE_MS);
 * - a refusal is a 429 with `Retry-After` / `retry-after-ms` the exact wait per the ledger (fits then, not 1 ms
 *   before), or a 400 exactly when the request exceeds the token quota itself; a client retrying as told is admitted;
 *   and no request the open lease does not cover is refused while that lease, kept open to renew ahead, holds what
 *   the bucket lacks (README: such a request's call takes the old lease's leftovers back, so the refusal is exact);
 * - a correction goes onto the isolate's open lease when it takes it (open, holding between nothing and its grant),
 *   else to the object: one or the other, and only the first correction of an admission counts.
 *
 * Not covered: plan changes (a lease of other limits is dropped, not returned) and evicted lease slots (past 1024
 * tenants in an isolate).
 */

const SLACK = 1e-5; // for sums of float levels
const QUOTAS = ["requests", "tokens"] as const;
type Quota = (typeof QUOTAS)[number];
type Units = Record<Quota, number>;
const zero = (): Units => ({ requests: 0, tokens: 0 });

// ---------------------------------------------------------------------------------------------------------------
// The fake quota namespace: the real ledger, a call log, and `admit` answers delivered when the test says so.

type WireEvent =
  | {
      kind: "admitCall";
      tenant: string;
      id: number;
      limits: QuotaLimits;
      tokens: number;
      want: QuotaUnits | undefined;
      returned: LeaseReturn | undefined;
    }
  | { kind: "admitOp"; tenant: string; id: number; verdict: QuotaVerdict; atMs: number }
  | { kind: "adjust"; tenant: string; limits: QuotaLimits; requests: number; tokens: number; atMs: number }
  | { kind: "returnLease"; tenant: string; limits: QuotaLimits; returned: LeaseReturn; atMs: number };

/**
 * A quota namespace whose objects are the real ledger behind a call log, as in tenant-quota-lease.test.ts, except
 * that an `admit` is answered only by `deliver(id)`: the ledger decides when called (`decideAtCall`) or at delivery.
 */
function gatedQuotaNamespace(now: () => number, decideAtCall: boolean) {
  const ledgers = new Map<string, QuotaLedger>();
  const log: WireEvent[] = [];
  const undelivered = new Map<number, () => void>();
  let ids = 0;
  const ledgerOf = (name: string) => {
    const ledger = ledgers.get(name) ?? new QuotaLedger();
    ledgers.set(name, ledger);
    return ledger;
  };
  const namespace = {
    getByName(tenant: string) {
      const ledger = ledgerOf(tenant);
      const giveBack = (limits: QuotaLimits, returned: LeaseReturn) =>
        ledger.adjust(limits, returned.leftover.requests, returned.leftover.tokens, now());
      return {
        admit(limits: QuotaLimits, tokens: number, lease?: { want?: QuotaUnits; returned?: LeaseReturn }) {
          const id = ids++;
          log.push({ kind: "admitCall", tenant, id, limits, tokens, want: lease?.want, returned: lease?.returned });
          const decide = () => {
            if (lease?.returned) giveBack(limits, lease.returned);
            const verdict = ledger.admit(limits, tokens, now(), lease?.want);
            log.push({ kind: "admitOp", tenant, id, verdict, atMs: now() });
            return verdict;
          };
          const early = decideAtCall ? decide() : undefined;
          return new Promise<QuotaVerdict>((resolve) => undelivered.set(id, () => resolve(early ?? decide())));
        },
        async adjust(limits: QuotaLimits, requests: number, tokens: number) {
          log.push({ kind: "adjust", tenant, limits, requests, tokens, atMs: now() });
          return ledger.adjust(limits, requests, tokens, now());
        },
        async returnLease(limits: QuotaLimits, returned: LeaseReturn) {
          log.push({ kind: "returnLease", tenant, limits, returned, atMs: now() });
          giveBack(limits, returned);
        },
      };
    },
  };
  const deliver = (id: number) => {
    const answer = undelivered.get(id);
    undelivered.delete(id);
    answer?.();
  };
  const deliverAll = () => {
    for (const id of [...undelivered.keys()]) deliver(id);
  };
  return {
    namespace: namespace as unknown as DurableObjectNamespace<TenantQuota>,
    log,
    ledgerOf,
    deliver,
    deliverAll,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Plans and operations.

interface PlanSpec {
  rpm?: number;
  tpm?: number;
}

/** From one request every 2 s (never leased) to plans whose leases hold 4 to 100 requests a second. */
const PLANS: PlanSpec[] = [
  { rpm: 30 },
  { rpm: 240 },
  { rpm: 6000 },
  { rpm: 6000, tpm: 60_000 },
  { tpm: 600_000 },
  { rpm: 1200, tpm: 40_000 },
];

interface Settings {
  plans: PlanSpec[];
  leaseMs: number;
  decideAtCall: boolean;
}

const settingsArb: fc.Arbitrary<Settings> = fc.record({
  plans: fc.array(fc.constantFrom(...PLANS), { minLength: 1, maxLength: 2 }),
  leaseMs: fc.constantFrom(0, 250, 1000, 1000, 4000),
  decideAtCall: fc.boolean(),
});

interface Req {
  tenant: number;
  tokens: number;
  /** Instead of `tokens`: the tokens the tenant's lease holds now, give or take one (when it has one). */
  nearLease?: number;
}
type Correction = { kind: "refund" } | { kind: "settle"; usedPct: number | undefined };
type Mark = "expiry" | "renewal" | "stale";
type Until = { kind: "until"; tenant: number; mark: Mark; offsetMs: number };
type Correct = { kind: "correct"; pick: number; again: boolean; how: Correction };
type BatchEvent =
  | { kind: "start"; req: Req }
  | { kind: "deliver"; pick: number }
  | { kind: "tick"; ms: number }
  | Until
  | Correct;
type Step =
  | { kind: "wait"; ms: number }
  | Until
  | { kind: "request"; req: Req; retry: boolean }
  | Correct
  /** Other isolates spend this share of what the tenant's buckets hold now. */
  | { kind: "others"; tenant: number; pct: number }
  | { kind: "batch"; events: BatchEvent[]; reverse: boolean };

const reqArb: fc.Arbitrary<Req> = fc.record({
  tenant: fc.integer({ min: 0, max: 1 }),
  tokens: fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 250 }) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 6_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 700_000 }) },
  ),
  nearLease: fc.option(fc.integer({ min: -1, max: 1 }), { nil: undefined, freq: 4 }),
});
const untilArb: fc.Arbitrary<Until> = fc.record({
  kind: fc.constant("until" as const),
  tenant: fc.integer({ min: 0, max: 1 }),
  mark: fc.constantFrom<Mark>("expiry", "renewal", "renewal", "expiry", "stale"),
  offsetMs: fc.integer({ min: -1, max: 1 }),
});
const correctArb: fc.Arbitrary<Correct> = fc.record({
  kind: fc.constant("correct" as const),
  pick: fc.nat(),
  /** A correction of an admission already corrected (it must change nothing). */
  again: fc.boolean(),
  how: fc.oneof(
    fc.constant<Correction>({ kind: "refund" }),
    fc.record({
      kind: fc.constant("settle" as const),
      // The answer's usage as a share of the estimate (above 100: an overrun); undefined: no usage reported.
      usedPct: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
    }),
  ),
});
const eventArb: fc.Arbitrary<BatchEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("start" as const), req: reqArb }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("deliver" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("tick" as const),
      ms: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 50, max: 1_500 })),
    }),
  },
  { weight: 1, arbitrary: untilArb },
  { weight: 2, arbitrary: correctArb },
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        { weight: 2, arbitrary: fc.constant(0) },
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 100 }) },
        { weight: 3, arbitrary: fc.integer({ min: 100, max: 3_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 3_000, max: 90_000 }) },
      ),
    }),
  },
  { weight: 2, arbitrary: untilArb },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("request" as const), req: reqArb, retry: fc.boolean() }) },
  { weight: 4, arbitrary: correctArb },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("others" as const),
      tenant: fc.integer({ min: 0, max: 1 }),
      pct: fc.constantFrom(50, 100),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      events: fc.array(eventArb, { minLength: 2, maxLength: 14 }),
      reverse: fc.boolean(),
    }),
  },
);

// ---------------------------------------------------------------------------------------------------------------
// The model.

/** A bucket as documented: `limit` units per minute, continuously, holding at most `limit`; starts full. */
interface ModelBucket extends ModelBucketLine {
  startMs: number;
}
const floors = (x: number) => [Math.floor(x - NEAR), Math.floor(x + NEAR)];
const ceils = (x: number) => [Math.ceil(x - NEAR), Math.ceil(x + NEAR)];
const within = (value: number, [lo, hi]: number[]) => value >= (lo as number) && value <= (hi as number);

interface ModelLease {
  /** granting: charged by the object, its answer not yet delivered; returning: handed back with an admit in flight. */
  state: "granting" | "slot" | "returning" | "returned";
  real?: QuotaLease;
  granted: Units;
  left: Units;
  served: number;
  tokensCharged: number;
  tokensRefunded: number;
  grantedAtMs: number;
  expiresAtMs: number;
}

interface TenantModel {
  name: string;
  plan: TenantPlan;
  limits: QuotaLimits;
  buckets: Partial<Record<Quota, ModelBucket>>;
  slotLease: ModelLease | undefined;
  leases: ModelLease[];
  renewingSince: number | undefined;
  /** On the wire, per quota: admitted by the object (and by other isolates), granted, returned, corrections. */
  admittedAtObject: Units;
  grantedAtObject: Units;
  returnedAtObject: Units;
  adjustedAtObject: Units;
  /** What clients consumed: admitted, less refunds, plus overruns. */
  used: Units;
  admittedTotal: Units;
  refunded: Units;
  /** Counts the requests started and answered, corrections and other isolates' spending. */
  activity: number;
}

interface Call {
  T: TenantModel;
  tokens: number;
  askedAt: number;
  renewAhead: boolean;
  promise: Promise<QuotaOutcome>;
  id: number;
  want: QuotaUnits | undefined;
  returning: ModelLease | undefined;
  verdict?: QuotaVerdict;
  grant?: ModelLease;
  outcome?: QuotaOutcome;
  /** The tenant's activity count when it asked (nothing else happened to the tenant until its decision if equal). */
  activityAtAsk: number;
  /** Whether the isolate's open lease covered it when it asked. */
  coveredAtAsk: boolean;
  /** Refused by the object, though the bucket and the leftovers this isolate kept back would have fitted it. */
  idleFit?: string;
}

interface Admission {
  T: TenantModel;
  tokens: number;
  charge: QuotaCharge;
  done: boolean;
}

function plan(name: string, spec: PlanSpec): TenantPlan {
  return {
    name,
    weight: 1,
    priority: "interactive",
    allowPriorityTier: false,
    ...(spec.rpm !== undefined ? { requestsPerMinute: spec.rpm } : {}),
    ...(spec.tpm !== undefined ? { tokensPerMinute: spec.tpm } : {}),
  } as TenantPlan;
}

const returnOf = (l: ModelLease): LeaseReturn => ({
  leftover: { requests: l.left.requests, tokens: l.left.tokens },
  served: l.served,
  tokensCharged: l.tokensCharged,
  tokensRefunded: l.tokensRefunded,
});
const sameReturn = (a: LeaseReturn | undefined, b: LeaseReturn | undefined) =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.leftover.requests === b.leftover.requests &&
    a.leftover.tokens === b.leftover.tokens &&
    a.served === b.served &&
    a.tokensCharged === b.tokensCharged &&
    a.tokensRefunded === b.tokensRefunded);
const show = (x: unknown) => JSON.stringify(x);

class Run {
  clock = 0;
  private readonly quota: ReturnType<typeof gatedQuotaNamespace>;
  private readonly tenants: TenantModel[];
  private wireSeen = 0;
  private pending: Call[] = [];
  private readonly admissions: Admission[] = [];

  constructor(private readonly settings: Settings) {
    this.quota = gatedQuotaNamespace(() => this.clock, settings.decideAtCall);
    this.tenants = settings.plans.map((spec, i) => {
      const p = plan(`tenant-${i}`, spec);
      return {
        name: p.name,
        plan: p,
        limits: {
          ...(spec.rpm !== undefined ? { requestsPerMinute: spec.rpm } : {}),
          ...(spec.tpm !== undefined ? { tokensPerMinute: spec.tpm } : {}),
        },
        buckets: {},
        slotLease: undefined,
        leases: [],
        renewingSince: undefined,
        admittedAtObject: zero(),
        grantedAtObject: zero(),
        returnedAtObject: zero(),
        adjustedAtObject: zero(),
        used: zero(),
        admittedTotal: zero(),
        refunded: zero(),
        activity: 0,
      };
    });
  }

  fail(what: string): never {
    throw new Error(`t=${this.clock}: ${what}`);
  }

  private tenant(i: number): TenantModel {
    return this.tenants[i % this.tenants.length] as TenantModel;
  }

  private limited(T: TenantModel, q: Quota): boolean {
    return (q === "requests" ? T.limits.requestsPerMinute : T.limits.tokensPerMinute) !== undefined;
  }

  private need(q: Quota, tokens: number): number {
    return q === "requests" ? 1 : tokens;
  }

  /** The wire events since the last look. */
  private newWire(): WireEvent[] {
    const events = this.quota.log.slice(this.wireSeen);
    this.wireSeen = this.quota.log.length;
    return events;
  }

  private slot(T: TenantModel): LeaseSlot {
    // Two tenants at most: no slot is ever evicted.
    return leaseSlot(T.name, (evicted) => this.fail(`the lease slot of ${evicted} was evicted`));
  }

  /** The isolate's slot holds the modelled lease and renewal. */
  private checkSlot(T: TenantModel): void {
    const slot = this.slot(T);
    if (slot.lease !== T.slotLease?.real)
      this.fail(`${T.name}: the slot holds ${slot.lease ? "a lease" : "none"}, modelled ${show(T.slotLease)}`);
    if (slot.renewingSince !== T.renewingSince)
      this.fail(`${T.name}: renewing since ${slot.renewingSince}, modelled ${T.renewingSince}`);
  }

  private open(l: ModelLease, t: number): boolean {
    return l.state === "slot" && t < l.expiresAtMs;
  }

  /** Due for renewal: open, with a quarter of its time or of a unit it was granted left. */
  private due(l: ModelLease, t: number): boolean {
    if (!this.open(l, t)) return false;
    const lifetime = l.expiresAtMs - l.grantedAtMs;
    if (l.expiresAtMs - t <= lifetime * RENEW_AHEAD_SHARE) return true;
    return QUOTAS.some((q) => l.granted[q] > 0 && l.left[q] <= l.granted[q] * RENEW_AHEAD_SHARE);
  }

  private covers(T: TenantModel, l: ModelLease, tokens: number, t: number): boolean {
    return this.open(l, t) && QUOTAS.every((q) => !this.limited(T, q) || l.left[q] >= this.need(q, tokens));
  }

  /** An admission from a lease (the model's side of `QuotaLease.take`). */
  private takeFrom(T: TenantModel, l: ModelLease, tokens: number): void {
    for (const q of QUOTAS) {
      if (!this.limited(T, q)) continue;
      l.left[q] -= this.need(q, tokens);
      T.used[q] += this.need(q, tokens);
      T.admittedTotal[q] += this.need(q, tokens);
    }
    l.served += 1;
    l.tokensCharged += tokens;
  }

  /** A correction or leftovers reaching the object: refunds capped at the limit, charges even into debt. */
  private bucketAdjust(T: TenantModel, units: Units, t: number): void {
    for (const q of QUOTAS) {
      const b = T.buckets[q];
      if (!b || units[q] === 0) continue;
      refill(b, t);
      b.level = Math.min(b.limit, b.level + units[q]);
    }
  }

  private recordAdmission(T: TenantModel, tokens: number, outcome: QuotaOutcome): void {
    if (outcome.kind !== "charged") this.fail(`${T.name}(${tokens}): refused, modelled admitted`);
    this.admissions.push({ T, tokens, charge: outcome.charge, done: false });
  }

  /** The object's decision on an admit (and the leftovers it took back first), against the modelled buckets. */
  private onAdmitOp(call: Call, e: WireEvent): void {
    const { T, tokens } = call;
    if (e.kind !== "admitOp" || e.id !== call.id)
      this.fail(`expected the object's decision on call ${call.id}: ${show(e)}`);
    const t = e.atMs;
    if (call.returning) {
      const leftover = call.returning.left;
      this.bucketAdjust(T, leftover, t);
      for (const q of QUOTAS) if (this.limited(T, q)) T.returnedAtObject[q] += leftover[q];
      call.returning.state = "returned";
    }
    for (const q of QUOTAS) {
      const limit = q === "requests" ? T.limits.requestsPerMinute : T.limits.tokensPerMinute;
      if (limit !== undefined && !T.buckets[q]) T.buckets[q] = { limit, level: limit, atMs: t, startMs: t };
    }
    const what = `${T.name} admit(${tokens})`;
    const fits = QUOTAS.map((q) => {
      const b = T.buckets[q];
      if (!b) return "yes";
      refill(b, t);
      return fitsLevel(b.level, this.need(q, tokens));
    });
    const verdict = e.verdict;
    call.verdict = verdict;
    const expected = fits.includes("no") ? false : fits.every((f) => f === "yes") ? true : undefined;
    if (expected !== undefined && verdict.admitted !== expected)
      this.fail(`${what} ${verdict.admitted ? "admitted" : "refused"}; modelled fits ${fits}`);
    if (verdict.admitted) {
      for (const q of QUOTAS) {
        const b = T.buckets[q];
        if (!b) continue;
        b.level -= this.need(q, tokens);
        T.admittedAtObject[q] += this.need(q, tokens);
        T.used[q] += this.need(q, tokens);
        T.admittedTotal[q] += this.need(q, tokens);
      }
      const want = call.want;
      const granted = verdict.lease;
      if (granted && !want) this.fail(`${what}: a lease granted unasked`);
      if (want) {
        const allowed = (q: Quota) =>
          floors((T.buckets[q] as ModelBucket).level + EPS).map((v) => Math.max(0, Math.min(want[q] ?? 0, v)));
        const limitedQuotas = QUOTAS.filter((q) => this.limited(T, q));
        if (granted) {
          for (const q of limitedQuotas) {
            const units = granted[q];
            if (units === undefined || !Number.isInteger(units) || units <= 0 || !within(units, allowed(q)))
              this.fail(`${what}: leased ${units} ${q}, allowed ${allowed(q)} (want ${want[q]})`);
          }
          const g = { requests: granted.requests ?? 0, tokens: granted.tokens ?? 0 };
          for (const q of limitedQuotas) {
            const b = T.buckets[q] as ModelBucket;
            b.level -= g[q];
            T.grantedAtObject[q] += g[q];
          }
          const lease: ModelLease = {
            state: "granting",
            granted: g,
            left: { ...g },
            served: 0,
            tokensCharged: 0,
            tokensRefunded: 0,
            grantedAtMs: Number.NaN,
            expiresAtMs: Number.NaN,
          };
          T.leases.push(lease);
          call.grant = lease;
        } else if (!limitedQuotas.some((q) => (allowed(q)[0] as number) === 0))
          this.fail(`${what}: no lease, though ${limitedQuotas.map((q) => allowed(q)).join(" / ")} were available`);
      }
      for (const q of QUOTAS) {
        const b = T.buckets[q];
        if (b && b.level < -EPS - NEAR) this.fail(`${what} took ${q} below zero: ${b.level}`);
      }
      return;
    }
    if (verdict.lease) this.fail(`${what}: a refusal granted a lease`);
    const refusal = verdict.refusal;
    if (!refusal) this.fail(`${what}: a refusal without its reason`);
    const tooLarge = QUOTAS.some(
      (q) => this.limited(T, q) && this.need(q, tokens) > (T.buckets[q] as ModelBucket).limit,
    );
    if (refusal.neverFits !== tooLarge) this.fail(`${what}: neverFits ${refusal.neverFits}`);
    if (tooLarge) {
      if (refusal.quota !== "tokens") this.fail(`${what}: too large, refused on ${refusal.quota}`);
      return;
    }
    if (fits[0] !== "either" && refusal.quota !== (fits[0] === "no" ? "requests" : "tokens"))
      this.fail(`${what}: refused on ${refusal.quota}, modelled fits ${fits}`);
    const w = refusal.retryAfterMs;
    if (!Number.isInteger(w) || w < 1) this.fail(`${what}: retry after ${w}`);
    // The exact wait: at `w` every quota fits, a millisecond before one does not (nothing else happening).
    const at = (s: number) =>
      QUOTAS.map((q) => {
        const b = T.buckets[q];
        return b ? fitsLevel(levelAt(b, s), this.need(q, tokens)) : "yes";
      });
    if (at(t + w).includes("no")) this.fail(`${what}: still short ${w} ms later (${at(t + w)})`);
    if (at(t + w - 1).every((f) => f === "yes")) this.fail(`${what}: fits already ${w - 1} ms later`);
    // Had this isolate's own lease, kept open for a renewal ahead, gone back with the call (as for any request the
    // lease does not cover), would it fit now? (Only when nothing else happened to the tenant since the ask, so
    // that giving the leftovers back is the only difference.) Checked in deliver if the edge refuses it.
    const held = T.slotLease;
    if (call.renewAhead && !call.coveredAtAsk && held && T.activity === call.activityAtAsk + 1) {
      const withLeftovers = QUOTAS.map((q) => {
        const b = T.buckets[q];
        return b ? fitsLevel(b.level + held.left[q], this.need(q, tokens)) : "yes";
      });
      if (withLeftovers.every((f) => f === "yes"))
        call.idleFit = `the bucket (${QUOTAS.map((q) => T.buckets[q]?.level)}) with the open lease's ${show(held.left)}`;
    }
  }

  /** A refusal as the client sees it: a 429 with the ledger's exact wait, or a 400 for a request that never fits. */
  private async checkRefusal(call: Call, response: Response): Promise<void> {
    const { T, tokens } = call;
    const refusal = call.verdict?.refusal;
    if (!refusal) return this.fail(`${T.name}(${tokens}): refused by the edge, admitted by the object`);
    const body = (await response.json()) as OpenAIErrorBody;
    const what = `${T.name}(${tokens}) refusal`;
    for (const q of QUOTAS) {
      const limit = q === "requests" ? T.limits.requestsPerMinute : T.limits.tokensPerMinute;
      const header = response.headers.get(`x-ratelimit-limit-${q}`);
      if (header !== (limit === undefined ? null : String(limit)))
        this.fail(`${what}: x-ratelimit-limit-${q} ${header}`);
    }
    if (refusal.neverFits) {
      if (response.status !== 400 || body.error.code !== "tokens_exceed_quota" || body.error.param !== "max_tokens")
        this.fail(`${what}: never fits, answered ${response.status} ${show(body)}`);
      if (response.headers.get("retry-after") !== null) this.fail(`${what}: a 400 with a Retry-After`);
      return;
    }
    const ms = refusal.retryAfterMs;
    if (response.status !== 429 || body.error.code !== "tenant_quota_exceeded" || body.error.type !== refusal.quota)
      this.fail(`${what}: answered ${response.status} ${show(body)}, refused on ${refusal.quota}`);
    if (response.headers.get("retry-after-ms") !== String(ms))
      this.fail(`${what}: retry-after-ms ${response.headers.get("retry-after-ms")}, the ledger's wait ${ms}`);
    if (response.headers.get("retry-after") !== String(Math.ceil(ms / 1000)))
      this.fail(`${what}: retry-after ${response.headers.get("retry-after")} for ${ms} ms`);
  }

  /** Starts one request (its synchronous part: a lease admission, or the call to the object). */
  async start(req: Req): Promise<Call> {
    const T = this.tenant(req.tenant);
    const near = req.nearLease !== undefined && this.limited(T, "tokens") ? T.slotLease : undefined;
    const tokens = near ? Math.max(0, near.left.tokens + (req.nearLease ?? 0)) : req.tokens;
    const t = this.clock;
    this.checkSlot(T);
    const lease = T.slotLease;
    const renewing = T.renewingSince !== undefined && t - T.renewingSince < RENEWAL_STALE_MS;
    const due = lease !== undefined && this.due(lease, t) && !renewing;
    const covered = lease !== undefined && this.covers(T, lease, tokens, t);
    const local = !due && covered;
    const promise = chargeQuota({
      plan: T.plan,
      tokens,
      namespace: this.quota.namespace,
      leaseMs: this.settings.leaseMs,
      now: () => this.clock,
      waitUntil: () => {},
    });
    const wire = this.newWire();
    // A due lease that covers the request is renewed ahead by it (the lease stays open meanwhile). One that does not
    // cover it may be renewed ahead or given back with the call (a plain miss): the documentation reads both ways,
    // but a refusal must then not leave this isolate's own leftovers idle (see onAdmitOp).
    const renewAhead = due && (covered || this.slot(T).lease === lease?.real);
    const call: Call = {
      T,
      tokens,
      askedAt: t,
      renewAhead,
      promise,
      id: -1,
      want: undefined,
      returning: undefined,
      activityAtAsk: T.activity,
      coveredAtAsk: covered,
    };
    T.activity += 1;
    if (local) {
      // Served from the open lease that covers it: no call to the object.
      if (wire.length > 0) this.fail(`${T.name}(${tokens}): the open lease covers it, yet ${show(wire)}`);
      this.takeFrom(T, lease, tokens);
      call.outcome = await promise;
      this.recordAdmission(T, tokens, call.outcome);
      this.checkSlot(T);
      return call;
    }
    const [first, ...rest] = wire;
    if (first?.kind !== "admitCall" || first.tenant !== T.name)
      return this.fail(`${T.name}(${tokens}): expected one admit call, got ${show(wire)}`);
    // A lease is asked for iff none is being asked for; the old lease goes back with the call unless renewing ahead.
    const want = renewing ? undefined : leaseWant(T.limits, tokens, this.settings.leaseMs);
    if (show(first.want) !== show(want))
      this.fail(`${T.name}(${tokens}): asked for ${show(first.want)}, not ${show(want)}`);
    const returning = renewAhead ? undefined : lease;
    if (!sameReturn(first.returned, returning && returnOf(returning)))
      this.fail(
        `${T.name}(${tokens}): gave back ${show(first.returned)}, modelled ${show(returning && returnOf(returning))}`,
      );
    if (returning) {
      returning.state = "returning";
      T.slotLease = undefined;
    }
    if (want) T.renewingSince = t;
    Object.assign(call, { id: first.id, want, returning });
    if (this.settings.decideAtCall) {
      if (rest.length !== 1) this.fail(`${T.name}(${tokens}): expected the object's decision, got ${show(rest)}`);
      this.onAdmitOp(call, rest[0] as WireEvent);
    } else if (rest.length > 0) this.fail(`${T.name}(${tokens}): unexpected calls ${show(rest)}`);
    this.pending.push(call);
    this.checkSlot(T);
    return call;
  }

  /** Delivers the object's answer to a call in flight, and follows the request to its outcome. */
  async deliver(call: Call): Promise<void> {
    this.pending = this.pending.filter((c) => c !== call);
    const { T, tokens } = call;
    this.checkSlot(T);
    const previous = T.slotLease;
    this.quota.deliver(call.id);
    const outcome = await call.promise;
    call.outcome = outcome;
    const wire = this.newWire();
    let next = 0;
    if (!this.settings.decideAtCall) this.onAdmitOp(call, wire[next++] as WireEvent);
    const verdict = call.verdict as QuotaVerdict;
    if (call.want && T.renewingSince === call.askedAt) T.renewingSince = undefined;
    if (verdict.lease) {
      // The new lease replaces the old one, whose leftovers go back now (exactly once).
      if (previous) {
        const e = wire[next++];
        if (e?.kind !== "returnLease" || e.tenant !== T.name || !sameReturn(e.returned, returnOf(previous)))
          this.fail(`${T.name}: the replaced lease should go back as ${show(returnOf(previous))}, got ${show(e)}`);
        this.bucketAdjust(T, previous.left, this.clock);
        for (const q of QUOTAS) if (this.limited(T, q)) T.returnedAtObject[q] += previous.left[q];
        previous.state = "returned";
      }
      const real = this.slot(T).lease;
      if (!real || real === previous?.real) this.fail(`${T.name}: the lease granted was not installed`);
      // It lasts `leaseMs`, counted from the ask or from the answer's arrival (either reads the documentation).
      const { leaseMs } = this.settings;
      if (real.expiresAtMs < call.askedAt + leaseMs || real.expiresAtMs > this.clock + leaseMs)
        this.fail(
          `${T.name}: the lease expires at ${real.expiresAtMs}, asked at ${call.askedAt}, granted for ${leaseMs}`,
        );
      const lease = call.grant as ModelLease;
      Object.assign(lease, {
        state: "slot",
        real,
        grantedAtMs: real.expiresAtMs - leaseMs,
        expiresAtMs: real.expiresAtMs,
      });
      T.slotLease = lease;
    }
    if (next !== wire.length) this.fail(`${T.name}(${tokens}): unexpected calls ${show(wire.slice(next))}`);
    if (verdict.admitted) this.recordAdmission(T, tokens, outcome);
    else if (call.renewAhead && T.slotLease && this.covers(T, T.slotLease, tokens, this.clock)) {
      // Renewing ahead, a refusal falls back on what the open lease still holds.
      this.takeFrom(T, T.slotLease, tokens);
      this.recordAdmission(T, tokens, outcome);
    } else if (outcome.kind === "refused") {
      await this.checkRefusal(call, outcome.response);
      // A refusal while this isolate holds idle what the bucket lacks: its Retry-After is the wait for units this
      // isolate keeps back (README: a request the lease does not cover goes to the object, which takes the old
      // lease's leftovers back, so that its refusal's Retry-After stays exact).
      if (call.idleFit && T.activity === call.activityAtAsk + 1)
        this.fail(
          `${T.name}(${tokens}): refused (retry after ${call.verdict?.refusal?.retryAfterMs} ms) while renewing ` +
            `ahead, though it fits ${call.idleFit}`,
        );
    } else this.fail(`${T.name}(${tokens}): admitted, though the object refused and no open lease covers it`);
    T.activity += 1;
    this.checkSlot(T);
  }

  /** A refund or the answer's usage of an admission: onto the open lease if it takes it, else to the object. */
  correct(step: Correct): void {
    const pool = this.admissions.filter((a) => a.done === step.again);
    if (pool.length === 0) return;
    const admission = pool[step.pick % pool.length] as Admission;
    const { T, tokens } = admission;
    const { how } = step;
    const used =
      how.kind === "settle" && how.usedPct !== undefined ? Math.round((tokens * how.usedPct) / 100) : undefined;
    const back: Units =
      how.kind === "refund" ? { requests: 1, tokens } : { requests: 0, tokens: used === undefined ? 0 : tokens - used };
    const effective = !admission.done && (back.requests !== 0 || back.tokens !== 0);
    T.activity += 1;
    admission.done = true;
    this.checkSlot(T);
    const lease = T.slotLease;
    const after = (q: Quota) => (lease && this.limited(T, q) ? lease.left[q] + back[q] : 0);
    const onLease =
      effective &&
      lease !== undefined &&
      this.open(lease, this.clock) &&
      QUOTAS.every((q) => after(q) >= 0 && after(q) <= (lease as ModelLease).granted[q]);
    if (how.kind === "refund") admission.charge.refund();
    else admission.charge.settle(used);
    const wire = this.newWire();
    const what = `${T.name}: correction (${back.requests}, ${back.tokens}) of an admission of ${tokens}`;
    if (!effective || onLease) {
      if (wire.length > 0)
        this.fail(
          `${what}${effective ? ", taken by the open lease," : " (none, or not the first)"} sent ${show(wire)}`,
        );
    } else {
      const e = wire[0];
      if (
        wire.length !== 1 ||
        e?.kind !== "adjust" ||
        e.tenant !== T.name ||
        e.requests !== back.requests ||
        e.tokens !== back.tokens ||
        show(e.limits) !== show(T.limits)
      )
        this.fail(`${what}: expected one adjust to the object, got ${show(wire)}`);
      this.bucketAdjust(T, back, this.clock);
      for (const q of QUOTAS) if (this.limited(T, q)) T.adjustedAtObject[q] += back[q];
    }
    if (!effective) return;
    if (onLease && lease) {
      for (const q of QUOTAS) if (this.limited(T, q)) lease.left[q] += back[q];
      if (back.tokens > 0) lease.tokensRefunded += back.tokens;
      else lease.tokensCharged -= back.tokens;
    }
    for (const q of QUOTAS) {
      if (!this.limited(T, q)) continue;
      T.used[q] -= back[q];
      T.refunded[q] += Math.max(0, back[q]);
    }
  }

  until(step: Until): void {
    const T = this.tenant(step.tenant);
    const lease = T.slotLease;
    let mark: number | undefined;
    if (step.mark === "stale") mark = T.renewingSince === undefined ? undefined : T.renewingSince + RENEWAL_STALE_MS;
    else if (lease)
      mark =
        step.mark === "expiry"
          ? lease.expiresAtMs
          : lease.expiresAtMs - (lease.expiresAtMs - lease.grantedAtMs) * RENEW_AHEAD_SHARE;
    if (mark !== undefined) this.clock = Math.max(this.clock, Math.ceil(mark) + step.offsetMs);
  }

  /** Other isolates spend a share of what the tenant's buckets hold (their admissions count towards the quota). */
  others(tenantIndex: number, pct: number): void {
    const T = this.tenant(tenantIndex);
    const taken = zero();
    for (const q of QUOTAS) {
      const b = T.buckets[q];
      if (!b) continue;
      refill(b, this.clock);
      taken[q] = Math.floor((Math.max(0, b.level) * pct) / 100);
    }
    if (taken.requests === 0 && taken.tokens === 0) return;
    T.activity += 1;
    this.quota.ledgerOf(T.name).adjust(T.limits, -taken.requests, -taken.tokens, this.clock);
    this.bucketAdjust(T, { requests: -taken.requests, tokens: -taken.tokens }, this.clock);
    for (const q of QUOTAS) {
      T.admittedAtObject[q] += taken[q];
      T.used[q] += taken[q];
      T.admittedTotal[q] += taken[q];
    }
  }

  /** The invariants that hold at every instant. */
  check(): void {
    if (this.newWire().length > 0) this.fail("calls to the quota object that no request made");
    for (const T of this.tenants) {
      this.checkSlot(T);
      const state = this.quota.ledgerOf(T.name).adjust(T.limits, 0, 0, this.clock);
      const held = T.leases.filter((l) => l.state === "granting" || l.state === "slot" || l.state === "returning");
      const spendable = T.leases.filter((l) => this.open(l, this.clock));
      for (const q of QUOTAS) {
        if (!this.limited(T, q)) continue;
        const b = T.buckets[q];
        if (!b) {
          if (T.used[q] !== 0 || held.length > 0) this.fail(`${T.name}: ${q} used before the object was asked`);
          continue;
        }
        refill(b, this.clock);
        const s = state[q];
        if (!s) this.fail(`${T.name}: no ${q} state`);
        // The ledger agrees with the modelled bucket.
        const remaining = floors(b.level + EPS).map((v) => Math.max(0, v));
        const missing = b.limit - b.level;
        const reset = missing > EPS + NEAR ? ceils(missing / rate(b) - EPS) : missing < EPS - NEAR ? [0, 0] : [0, 1];
        if (s.limit !== b.limit || !within(s.remaining, remaining) || !within(s.resetMs, reset))
          this.fail(`${T.name}: ${q} state ${show(s)}, modelled level ${b.level}`);
        // Nothing created or lost: the object's charges, less what came back, are what clients use and leases hold.
        const inLeases = held.reduce((sum, l) => sum + l.left[q], 0);
        const net = T.admittedAtObject[q] + T.grantedAtObject[q] - T.returnedAtObject[q] - T.adjustedAtObject[q];
        if (net !== T.used[q] + inLeases)
          this.fail(
            `${T.name}: ${q} charged at the object, net ${net}, but used ${T.used[q]} + held by leases ${inLeases}`,
          );
        // Never beyond the quota: the limit plus its refill since the start (the documented slack aside).
        const supplied = b.limit + (this.clock - b.startMs) * rate(b);
        const realLevel = Math.max(
          s.limit - (s.resetMs + EPS) * rate(b),
          s.remaining > 0 ? s.remaining - EPS : -Infinity,
        );
        if (T.used[q] + inLeases + realLevel > supplied + SLACK)
          this.fail(`${T.name}: ${q} used ${T.used[q]} + held ${inLeases} + level ${realLevel} > supplied ${supplied}`);
        if (T.admittedTotal[q] - T.refunded[q] > supplied + SLACK)
          this.fail(
            `${T.name}: ${q} admitted ${T.admittedTotal[q]} less refunds ${T.refunded[q]} > supplied ${supplied}`,
          );
        const inOpen = spendable.reduce((sum, l) => sum + l.left[q], 0);
        const grantedOpen = spendable.reduce((sum, l) => sum + l.granted[q], 0);
        if (Math.max(0, b.level) + inOpen > b.limit + grantedOpen + SLACK)
          this.fail(`${T.name}: ${q} bucket ${b.level} + open leases ${inOpen} > ${b.limit} + granted ${grantedOpen}`);
        if (held.some((l) => l.left[q] < 0 || l.left[q] > l.granted[q]))
          this.fail(`${T.name}: a lease holds ${q} outside [0, its grant]`);
      }
      // One lease per isolate and tenant, two while a renewal is in flight (another only once that one is stale).
      const leasesHere = T.leases.filter((l) => l.state === "granting" || l.state === "slot").length;
      const asking = this.pending.filter((c) => c.T === T && c.want !== undefined).map((c) => c.askedAt);
      if (leasesHere > 1 + asking.length)
        this.fail(`${T.name}: ${leasesHere} leases in this isolate, ${asking.length} renewals in flight`);
      for (let i = 1; i < asking.length; i++)
        if ((asking[i] as number) - (asking[i - 1] as number) < RENEWAL_STALE_MS)
          this.fail(`${T.name}: two lease calls in flight within ${RENEWAL_STALE_MS} ms: ${asking}`);
      if (T.leases.some((l) => l.state === "returning" && !this.pending.some((c) => c.returning === l)))
        this.fail(`${T.name}: a lease given back with no call in flight`);
    }
  }

  async step(s: Step): Promise<void> {
    if (s.kind === "wait") this.clock += s.ms;
    else if (s.kind === "until") this.until(s);
    else if (s.kind === "correct") this.correct(s);
    else if (s.kind === "others") this.others(s.tenant, s.pct);
    else if (s.kind === "request") {
      const call = await this.start(s.req);
      if (this.pending.includes(call)) await this.deliver(call);
      const outcome = call.outcome;
      const wait = call.verdict?.refusal?.retryAfterMs;
      if (s.retry && outcome?.kind === "refused" && wait !== undefined && Number.isFinite(wait)) {
        this.check();
        // The client retries as told, nothing else happening meanwhile: it is admitted.
        this.clock += wait;
        const again = await this.start({ tenant: s.req.tenant, tokens: call.tokens });
        if (this.pending.includes(again)) await this.deliver(again);
        if (again.outcome?.kind !== "charged") this.fail(`a retry ${wait} ms later, as told, was refused`);
      }
    } else {
      for (const e of s.events) {
        if (e.kind === "start") await this.start(e.req);
        else if (e.kind === "deliver") {
          const call = this.pending[e.pick % Math.max(1, this.pending.length)];
          if (call) await this.deliver(call);
        } else if (e.kind === "tick") this.clock += e.ms;
        else if (e.kind === "until") this.until(e);
        else this.correct(e);
        this.check();
      }
      const rest = s.reverse ? [...this.pending].reverse() : [...this.pending];
      for (const call of rest) {
        await this.deliver(call);
        this.check();
      }
    }
    this.check();
  }

  /** The end: each slot's lease closes with exactly what the model says it holds; every other one went back. */
  finish(): void {
    for (const T of this.tenants) {
      const lease = T.slotLease;
      const returned = closeLease(this.slot(T), T.limits);
      if (!sameReturn(returned, lease && returnOf(lease)))
        this.fail(
          `${T.name}: the last lease closed with ${show(returned)}, modelled ${show(lease && returnOf(lease))}`,
        );
      if (lease) lease.state = "returned";
      if (T.leases.some((l) => l.state !== "returned")) this.fail(`${T.name}: a lease was never given back`);
    }
  }
}

describe("chargeQuota with leases under arbitrary requests, corrections, concurrency and time", () => {
  it("admits within the quota, gives every lease back exactly once, refuses exactly, corrects once", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 5, maxLength: 80, size: "max" }),
        settingsArb,
        async (steps, settings) => {
          forgetLeasesForTesting();
          const run = new Run(settings);
          for (const s of steps) await run.step(s);
          run.finish();
          forgetLeasesForTesting();
        },
      ),
      propertyRuns(100, 20261205),
    );
  });

  // The property's minimal counterexample, as found (shrunk by hand from the property's runs at seeds 1-4).
  it("renewing ahead, a request the open lease does not cover is not refused for units that lease holds idle", async () => {
    // A tenant of 600 000 tokens a minute: a lease holds 10 000 tokens (a second's refill), here untouched; other
    // isolates spend the rest of the bucket. At 749 ms a request of 10 001 tokens (more than the lease holds) gives
    // the lease back with its call and is admitted (7490 + 10 000 tokens). At 750 ms a quarter of the lease's time
    // is left: it renews ahead, the lease stays open, and the object alone (7500 tokens) must not refuse it with a
    // Retry-After of 251 ms while this isolate holds 10 000 tokens idle.
    for (const askedAt of [749, 750]) {
      forgetLeasesForTesting();
      let clock = 0;
      const quota = gatedQuotaNamespace(() => clock, true);
      const tenant = plan("t", { tpm: 600_000 });
      const charge = (tokens: number) => {
        const outcome = chargeQuota({
          plan: tenant,
          tokens,
          namespace: quota.namespace,
          leaseMs: 1000,
          now: () => clock,
          waitUntil: () => {},
        });
        quota.deliverAll();
        return outcome;
      };
      expect((await charge(0)).kind).toBe("charged"); // granted a lease of 10 000 tokens until 1000 ms
      const limits = { tokensPerMinute: 600_000 };
      const ledger = quota.ledgerOf("t");
      ledger.adjust(limits, 0, -(ledger.adjust(limits, 0, 0, 0).tokens?.remaining ?? 0), 0);
      clock = askedAt;
      const outcome = await charge(10_001);
      const refusal = outcome.kind === "refused" ? outcome.response.headers.get("retry-after-ms") : undefined;
      expect({ askedAt, kind: outcome.kind, retryAfterMs: refusal }).toEqual({
        askedAt,
        kind: "charged",
        retryAfterMs: undefined,
      });
    }
    forgetLeasesForTesting();
  });
});
