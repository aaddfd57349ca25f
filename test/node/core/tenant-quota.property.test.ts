import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leaseWant, MIN_LEASED_REQUESTS, QuotaLease, RENEW_AHEAD_SHARE } from "../../../src/core/quota-lease";
import {
  QUOTA_PERIOD_MS,
  QuotaLedger,
  type QuotaLimits,
  type QuotaState,
  type QuotaUnits,
  type QuotaVerdict,
} from "../../../src/core/tenant-quota";
import { EPS, fitsLevel, levelAt, type ModelBucketLine, NEAR, rate, refill } from "../../support/model-bucket";
import { propertyRuns } from "../../support/property-runs";

/**
 * One tenant's quotas (requests and tokens per minute) driven the way the edge drives them
 * (src/edge/tenant-quota-charge.ts): isolates admit from their own lease while it covers a request, otherwise ask
 * the quota object (giving the old lease's leftovers back, asking for a new lease, renewing one ahead), correct
 * every admission with its usage or a refund (onto the isolate's open lease if it takes it, else the object), give
 * leases back or lose them with the isolate, under arbitrary time steps. A small model is kept beside the real
 * objects: per quota the exact bucket (`limit` per minute, holding at most `limit`, starting full), the units used
 * (admitted, minus refunds, plus overruns), and per lease what it was granted and holds. After every operation:
 *
 * - the ledger's states are the modelled bucket's (remaining = whole units now, reset = time until full again);
 * - an admission happens iff one request and its estimate both fit (both charged or neither); a level below zero
 *   only ever comes from an overrun charged after the fact, never from an admission or a lease;
 * - a refusal names the short quota (requests first; tokens for a request too large for them), its retry-after is
 *   the exact wait (it does not fit a millisecond before, it is admitted at that instant) and never-fits is exactly
 *   an amount above its limit;
 * - a lease grants min(want, whole units available) of each limited quota, taken from the bucket; it asks for no
 *   more than `leaseMs` of refill; it covers a request iff open and holding enough; corrections, leftovers and
 *   counts add up (what it hands back is what it was granted, less what it spent, plus what was put back);
 * - conservation: per quota, used + held by leases + bucket level <= limit + refill since start (nothing created),
 *   and what the tenant can spend at any instant (bucket + open leases) <= the bucket's capacity + what those
 *   leases were granted: a lease never holds more than the bucket would have let it (a refund put on it is not
 *   capped by the bucket's limit).
 */

const QUOTAS = ["requests", "tokens"] as const;
type Quota = (typeof QUOTAS)[number];

type Op =
  | { kind: "wait"; ms: number }
  /** To an instant of an isolate's lease (its end, or where a quarter of its time is left), give or take 1 ms. */
  | { kind: "until"; isolate: number; mark: "expiry" | "renewal"; offsetMs: number }
  | { kind: "request"; isolate: number; tokens: number; retry: boolean }
  | { kind: "settle"; pick: number; refund: boolean; usedPct: number | undefined }
  | { kind: "return"; isolate: number }
  | { kind: "crash"; isolate: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        { weight: 2, arbitrary: fc.constant(0) },
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 100 }) },
        { weight: 2, arbitrary: fc.integer({ min: 100, max: 3_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 3_000, max: 90_000 }) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("until" as const),
      isolate: fc.integer({ min: 0, max: 2 }),
      mark: fc.constantFrom("expiry" as const, "renewal" as const),
      offsetMs: fc.integer({ min: -1, max: 1 }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("request" as const),
      isolate: fc.integer({ min: 0, max: 2 }),
      tokens: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0, max: 250 }) },
        { weight: 3, arbitrary: fc.integer({ min: 0, max: 6_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 700_000 }) },
      ),
      retry: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      pick: fc.nat(),
      refund: fc.boolean(),
      // The answer's usage as a share of the estimate (above 100: an overrun); undefined: no usage reported.
      usedPct: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("return" as const), isolate: fc.integer({ min: 0, max: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("crash" as const), isolate: fc.integer({ min: 0, max: 2 }) }) },
);

interface Settings {
  limits: QuotaLimits;
  leaseMs: number;
  isolates: number;
}

/** Plans from one request every 30 s to ones that lease, and lease times from none to several seconds. */
const settings: fc.Arbitrary<Settings> = fc
  .record({
    rpm: fc.constantFrom(undefined, 2, 30, 240, 1_200),
    tpm: fc.constantFrom(undefined, 1_000, 60_000, 600_000),
    leaseMs: fc.constantFrom(0, 250, 1_000, 4_000),
    isolates: fc.integer({ min: 1, max: 3 }),
  })
  .filter((s) => s.rpm !== undefined || s.tpm !== undefined)
  .map(({ rpm, tpm, leaseMs, isolates }) => ({
    limits: {
      ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}),
      ...(tpm !== undefined ? { tokensPerMinute: tpm } : {}),
    },
    leaseMs,
    isolates,
  }));

/** The acceptable results of `floor` / `ceil` of a value computed elsewhere in floats: both sides of a boundary. */
const floors = (x: number) => [Math.floor(x - NEAR), Math.floor(x + NEAR)];
const ceils = (x: number) => [Math.ceil(x - NEAR), Math.ceil(x + NEAR)];
const within = (value: number, [lo, hi]: number[]) => value >= (lo as number) && value <= (hi as number);

/** A bucket as documented: `limit` units per minute, continuously, holding at most `limit`; starts full. */
interface ModelBucket extends ModelBucketLine {
  startMs: number;
  /** Units admitted (by the object or a lease), less refunds, plus overruns: what the tenant consumed. */
  used: number;
}

interface ModelLease {
  real: QuotaLease;
  granted: Record<Quota, number>;
  left: Record<Quota, number>;
  served: number;
  tokensCharged: number;
  tokensRefunded: number;
  grantedAtMs: number;
  expiresAtMs: number;
  atGrant: QuotaVerdict;
}

interface Admission {
  isolate: number;
  tokens: number;
}

/** Runs the ops; returns the violations seen (none expected). */
function run(ops: readonly Op[], { limits, leaseMs, isolates }: Settings): string[] {
  let now = 10_000;
  const ledger = new QuotaLedger();
  const limitOf: Record<Quota, number | undefined> = {
    requests: limits.requestsPerMinute,
    tokens: limits.tokensPerMinute,
  };
  const model: Partial<Record<Quota, ModelBucket>> = {};
  for (const q of QUOTAS) {
    const limit = limitOf[q];
    if (limit !== undefined) model[q] = { limit, level: limit, atMs: now, startMs: now, used: 0 };
  }
  /** The ledger creates its buckets on its first call; until then it reports no state. */
  let created = false;
  const slots: (ModelLease | undefined)[] = Array.from({ length: isolates }, () => undefined);
  const inflight: Admission[] = [];
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  const need = (q: Quota, tokens: number) => (q === "requests" ? 1 : tokens);
  const limited = (q: Quota) => model[q] !== undefined;
  const open = (l: ModelLease) => now < l.expiresAtMs;

  /** A verdict's states against the modelled buckets (at `now`, after its charges). */
  const checkStates = (verdict: QuotaVerdict, what: string) => {
    for (const q of QUOTAS) {
      const b = model[q];
      const state = verdict[q];
      if (!b || !created) {
        if (state !== undefined) fail(`${what}: a ${q} state without a ${q} bucket`);
        continue;
      }
      if (!state) {
        fail(`${what}: no ${q} state`);
        continue;
      }
      refill(b, now);
      const remaining = floors(b.level + EPS).map((v) => Math.max(0, v));
      const missing = b.limit - b.level;
      const reset = missing > EPS + NEAR ? ceils(missing / rate(b) - EPS) : missing < EPS - NEAR ? [0, 0] : [0, 1];
      if (state.limit !== b.limit) fail(`${what}: ${q} limit ${state.limit}, not ${b.limit}`);
      if (!within(state.remaining, remaining))
        fail(`${what}: ${q} remaining ${state.remaining}, modelled level ${b.level}`);
      if (!within(state.resetMs, reset)) fail(`${what}: ${q} reset ${state.resetMs} ms, modelled level ${b.level}`);
    }
  };

  /** A correction (or a lease's leftovers) to the object: refunds capped at the limit, charges even into debt. */
  const adjustAtObject = (units: Record<Quota, number>, what: string) => {
    const verdict = ledger.adjust(limits, units.requests, units.tokens, now);
    for (const q of QUOTAS) {
      const b = model[q];
      if (!b || units[q] === 0) continue;
      refill(b, now);
      b.level = Math.min(b.limit, b.level + units[q]);
    }
    if (QUOTAS.some((q) => limited(q) && units[q] !== 0)) created = true;
    checkStates(verdict, what);
  };

  /** Closes an isolate's lease: its leftovers and counts are what it was granted, spent and was given back. */
  const closeLease = (isolate: number, giveBack: boolean) => {
    const lease = slots[isolate];
    if (!lease) return;
    slots[isolate] = undefined;
    const returned = lease.real.close();
    const expected = {
      leftover: { requests: lease.left.requests, tokens: lease.left.tokens },
      served: lease.served,
      tokensCharged: lease.tokensCharged,
      tokensRefunded: lease.tokensRefunded,
    };
    if (JSON.stringify(returned) !== JSON.stringify(expected))
      fail(`lease closed with ${JSON.stringify(returned)}, modelled ${JSON.stringify(expected)}`);
    const again = lease.real.close();
    if (again.leftover.requests !== 0 || again.leftover.tokens !== 0 || again.served !== 0)
      fail(`a lease closed twice handed back ${JSON.stringify(again)}`);
    if (giveBack) adjustAtObject(returned.leftover, "return");
  };

  /** The headers' estimate of a lease's admission: level at the grant, refilled since, plus what it holds. */
  const checkLeaseView = (lease: ModelLease, verdict: QuotaVerdict) => {
    for (const q of QUOTAS) {
      const atGrant = lease.atGrant[q] as QuotaState | undefined;
      const state = verdict[q];
      if (!atGrant) {
        if (state) fail(`lease view: a ${q} state without a ${q} quota`);
        continue;
      }
      if (!state) {
        fail(`lease view: no ${q} state`);
        continue;
      }
      const r = atGrant.limit / QUOTA_PERIOD_MS;
      const level = Math.min(atGrant.limit, atGrant.remaining + (now - lease.grantedAtMs) * r + lease.left[q]);
      if (
        !within(
          state.remaining,
          floors(level + EPS).map((v) => Math.max(0, v)),
        )
      )
        fail(`lease view: ${q} remaining ${state.remaining}, estimated level ${level}`);
      if (
        !within(
          state.resetMs,
          ceils((atGrant.limit - level) / r - EPS).map((v) => Math.max(0, v)),
        )
      )
        fail(`lease view: ${q} reset ${state.resetMs}, estimated level ${level}`);
    }
  };

  /** An admission from the isolate's lease, if it is open and covers one request and `tokens`. */
  const takeFromLease = (isolate: number, tokens: number): boolean => {
    const lease = slots[isolate];
    if (!lease) return false;
    const covers = open(lease) && QUOTAS.every((q) => !limited(q) || lease.left[q] >= need(q, tokens));
    const verdict = lease.real.take(tokens, now);
    if ((verdict !== undefined) !== covers) fail(`lease take(${tokens}) ${verdict ? "admitted" : "refused"}`);
    if (!verdict) return false;
    for (const q of QUOTAS) {
      const b = model[q];
      if (!b) continue;
      lease.left[q] -= need(q, tokens);
      b.used += need(q, tokens);
    }
    lease.served += 1;
    lease.tokensCharged += tokens;
    checkLeaseView(lease, verdict);
    inflight.push({ isolate, tokens });
    return true;
  };

  /** An admission by the object: both fit or neither is charged; a lease beside it takes what is available. */
  const admitAtObject = (tokens: number, want: QuotaUnits | undefined, what: string): QuotaVerdict => {
    const fits = QUOTAS.map((q) => {
      const b = model[q];
      if (!b) return "yes";
      refill(b, now);
      return fitsLevel(b.level, need(q, tokens));
    });
    const verdict = ledger.admit(limits, tokens, now, want);
    created = true;
    const expected = fits.includes("no") ? false : fits.every((f) => f === "yes") ? true : undefined;
    if (expected !== undefined && verdict.admitted !== expected)
      fail(`${what}(${tokens}) ${verdict.admitted ? "admitted" : "refused"}; modelled fits ${fits}`);
    if (verdict.admitted) {
      for (const q of QUOTAS) {
        const b = model[q];
        if (!b) continue;
        b.level -= need(q, tokens);
        b.used += need(q, tokens);
        if (b.level < -EPS - NEAR) fail(`${what}(${tokens}) took ${q} below zero: ${b.level}`);
      }
      const granted = verdict.lease;
      if (!want && granted) fail(`${what}: a lease granted unasked`);
      if (want) {
        // Per limited quota: min(want, whole units available now); none at all when any of them has none.
        const allowed = (q: Quota) =>
          floors((model[q] as ModelBucket).level + EPS).map((v) => Math.max(0, Math.min(want[q] ?? 0, v)));
        const limitedQuotas = QUOTAS.filter(limited);
        if (granted) {
          for (const q of QUOTAS) {
            const units = granted[q];
            if (!limited(q)) {
              if (units !== undefined) fail(`${what}: leased ${units} ${q} without a ${q} quota`);
              continue;
            }
            if (units === undefined || !Number.isInteger(units) || units <= 0 || !within(units, allowed(q)))
              fail(`${what}: leased ${units} ${q}, allowed ${allowed(q)} (want ${want[q]})`);
          }
        } else if (!limitedQuotas.some((q) => (allowed(q)[0] as number) === 0))
          fail(`${what}: no lease, though ${limitedQuotas.map((q) => allowed(q)).join(" / ")} were available`);
        for (const q of QUOTAS) {
          const b = model[q];
          if (!b || !granted) continue;
          b.level -= granted[q] ?? 0;
          if (b.level < -EPS - NEAR) fail(`${what}: the lease took ${q} below zero: ${b.level}`);
        }
      }
    } else {
      if (verdict.lease) fail(`${what}: a refusal granted a lease`);
      const refusal = verdict.refusal;
      if (!refusal) fail(`${what}: a refusal without its reason`);
      else {
        const tooLarge = QUOTAS.some((q) => limited(q) && need(q, tokens) > (model[q] as ModelBucket).limit);
        if (refusal.neverFits !== tooLarge) fail(`${what}(${tokens}): neverFits ${refusal.neverFits}`);
        if (Number.isFinite(refusal.retryAfterMs) === tooLarge) fail(`${what}: retry after ${refusal.retryAfterMs}`);
        // The short quota, requests first, but a request too large for the token quota is refused on tokens.
        if (
          tooLarge
            ? refusal.quota !== "tokens"
            : fits[0] !== "either" && refusal.quota !== (fits[0] === "no" ? "requests" : "tokens")
        )
          fail(`${what}: refused on ${refusal.quota}, modelled fits ${fits}`);
        if (!tooLarge) {
          const w = refusal.retryAfterMs;
          if (!Number.isInteger(w) || w < 1) fail(`${what}: retry after ${w}`);
          // The exact wait: at `w` every quota fits, a millisecond before one does not (nothing else happening).
          const at = (t: number) =>
            QUOTAS.map((q) => {
              const b = model[q];
              return b ? fitsLevel(levelAt(b, t), need(q, tokens)) : "yes";
            });
          if (at(now + w).includes("no")) fail(`${what}: still short ${w} ms later (${at(now + w)})`);
          if (at(now + w - 1).every((f) => f === "yes")) fail(`${what}: fits already ${w - 1} ms later`);
        }
      }
    }
    checkStates(verdict, what);
    return verdict;
  };

  /** The edge's charge of one request (chargeQuota without its network: every call answers at once). */
  const request = (isolate: number, tokens: number, retry: boolean) => {
    const lease = slots[isolate];
    const renewAhead = lease?.real.dueForRenewal(now) === true;
    if (lease) {
      // Due with a quarter of its time, or of a unit it was granted, left; never once expired.
      const lifetime = lease.expiresAtMs - lease.grantedAtMs;
      const due =
        open(lease) &&
        (lease.expiresAtMs - now <= lifetime * RENEW_AHEAD_SHARE ||
          QUOTAS.some((q) => lease.granted[q] > 0 && lease.left[q] <= lease.granted[q] * RENEW_AHEAD_SHARE));
      if (due !== renewAhead) fail(`dueForRenewal ${renewAhead}, modelled ${due}`);
    }
    if (!renewAhead && takeFromLease(isolate, tokens)) return;
    const want = leaseWant(limits, tokens, leaseMs);
    // What each limited quota refills in `leaseMs`, in whole units; none for fewer than MIN_LEASED_REQUESTS such.
    const share = (q: Quota) => {
      const limit = limitOf[q];
      return limit === undefined ? undefined : Math.floor((limit * leaseMs) / QUOTA_PERIOD_MS);
    };
    const worth =
      leaseMs > 0 &&
      QUOTAS.every((q) => {
        const s = share(q);
        return s === undefined || s >= MIN_LEASED_REQUESTS * (q === "requests" ? 1 : Math.max(1, tokens));
      });
    if (worth !== (want !== undefined) || (want && QUOTAS.some((q) => want[q] !== share(q))))
      fail(`leaseWant(${tokens}) = ${JSON.stringify(want)}`);
    if (!renewAhead) closeLease(isolate, true);
    const verdict = admitAtObject(tokens, want, "admit");
    if (verdict.admitted) {
      if (verdict.lease) {
        closeLease(isolate, true);
        const granted = { requests: verdict.lease.requests ?? 0, tokens: verdict.lease.tokens ?? 0 };
        slots[isolate] = {
          real: new QuotaLease(limits, verdict.lease, verdict, now, now + leaseMs),
          granted,
          left: { ...granted },
          served: 0,
          tokensCharged: 0,
          tokensRefunded: 0,
          grantedAtMs: now,
          expiresAtMs: now + leaseMs,
          atGrant: verdict,
        };
      }
      inflight.push({ isolate, tokens });
      return;
    }
    // Renewing ahead, a refusal by the object falls back on what the open lease still holds.
    if (renewAhead && takeFromLease(isolate, tokens)) return;
    const w = verdict.refusal?.retryAfterMs ?? Number.POSITIVE_INFINITY;
    if (!retry || !Number.isFinite(w)) return;
    // The client retries as told: a millisecond early it is refused (1 ms to go), on time it is admitted.
    now += w - 1;
    const early = admitAtObject(tokens, undefined, "early retry");
    if (early.admitted) inflight.push({ isolate, tokens });
    else if (early.refusal?.retryAfterMs !== 1) fail(`early retry told to wait ${early.refusal?.retryAfterMs} ms`);
    now += 1;
    const onTime = admitAtObject(tokens, undefined, "retry");
    if (onTime.admitted) inflight.push({ isolate, tokens });
    else fail(`retry after ${w} ms refused again`);
  };

  /** An admission's refund or usage: onto its isolate's lease if that takes it, else to the object. */
  const settle = (pick: number, refund: boolean, usedPct: number | undefined) => {
    if (inflight.length === 0) return;
    const [admission] = inflight.splice(pick % inflight.length, 1) as [Admission];
    const { isolate, tokens } = admission;
    const back: Record<Quota, number> = refund
      ? { requests: 1, tokens }
      : { requests: 0, tokens: usedPct === undefined ? 0 : tokens - Math.round((tokens * usedPct) / 100) };
    if (back.requests === 0 && back.tokens === 0) return;
    for (const q of QUOTAS) {
      const b = model[q];
      if (b) b.used -= back[q];
    }
    const lease = slots[isolate];
    if (lease) {
      // Taken iff open and what it holds stays at least zero; one that would make it hold more than it was
      // granted may go either way (to the object, or onto the lease if the supply bound below still holds).
      const after = (q: Quota) => (limited(q) ? lease.left[q] + back[q] : 0);
      const takes = open(lease) && QUOTAS.every((q) => after(q) >= 0);
      const beyondGrant = QUOTAS.some((q) => after(q) > lease.granted[q]);
      const took = lease.real.correct(back.requests, back.tokens, now);
      if (took !== takes && !(takes && beyondGrant))
        fail(`lease correct(${back.requests}, ${back.tokens}) ${took}, modelled ${takes}`);
      if (took) {
        for (const q of QUOTAS) if (limited(q)) lease.left[q] += back[q];
        if (back.tokens > 0) lease.tokensRefunded += back.tokens;
        else lease.tokensCharged -= back.tokens;
        return;
      }
    }
    adjustAtObject(back, refund ? "refund" : "usage");
  };

  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "until") {
      const lease = slots[o.isolate % isolates];
      if (lease) {
        const lifetime = lease.expiresAtMs - lease.grantedAtMs;
        const mark = o.mark === "expiry" ? lease.expiresAtMs : lease.expiresAtMs - lifetime * RENEW_AHEAD_SHARE;
        now = Math.max(now, Math.ceil(mark) + o.offsetMs);
      }
    } else if (o.kind === "request") request(o.isolate % isolates, o.tokens, o.retry);
    else if (o.kind === "settle") settle(o.pick, o.refund, o.usedPct);
    else if (o.kind === "return") closeLease(o.isolate % isolates, true);
    else {
      // An isolate gone: its lease's leftovers are lost (charged, never an excess), its requests never settle.
      closeLease(o.isolate % isolates, false);
      for (let i = inflight.length - 1; i >= 0; i--)
        if (inflight[i]?.isolate === o.isolate % isolates) inflight.splice(i, 1);
    }
    // The ledger's state now (a correction of nothing charges nothing).
    const state = ledger.adjust(limits, 0, 0, now);
    checkStates(state, "state");
    const leases = slots.filter((l): l is ModelLease => l !== undefined);
    for (const q of QUOTAS) {
      const b = model[q];
      if (!b) continue;
      refill(b, now);
      if (b.level > b.limit + NEAR) fail(`${q} level ${b.level} above its limit ${b.limit}`);
      const held = leases.reduce((sum, l) => sum + l.left[q], 0);
      const spendable = leases.filter(open);
      const inOpen = spendable.reduce((sum, l) => sum + l.left[q], 0);
      const granted = spendable.reduce((sum, l) => sum + l.granted[q], 0);
      if (leases.some((l) => l.left[q] < 0)) fail(`a lease holds fewer than no ${q}`);
      // Nothing created: the real bucket's level (at least what its reset time says) plus what was consumed and
      // what leases hold is at most the bucket's capacity plus its refill since it started.
      const s = state[q];
      const realLevel = s
        ? Math.max(s.limit - (s.resetMs + EPS) * rate(b), s.remaining > 0 ? s.remaining - EPS : -Infinity)
        : b.limit;
      const supplied = b.limit + (now - b.startMs) * rate(b);
      if (b.used + held + realLevel > supplied + 1e-5)
        fail(`${q}: used ${b.used} + held ${held} + level ${realLevel} > capacity and refill ${supplied}`);
      // What the tenant can spend at this instant (its bucket and its open leases) is at most the bucket's
      // capacity plus what those leases were granted (each at most `leaseMs` of refill).
      if (Math.max(0, b.level) + inOpen > b.limit + granted + 1e-5)
        fail(
          `${q}: ${Math.max(0, b.level)} in the bucket + ${inOpen} in open leases > ${b.limit} + ${granted} granted`,
        );
    }
    if (violations.length > 0) break;
  }
  return violations;
}

describe("the tenant quota (buckets and leases) under arbitrary admissions, corrections and time", () => {
  it("admits and refuses exactly by the buckets, and leases create no units", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 150, size: "max" }), settings, (ops, drawn) => {
        expect(run(ops, drawn)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});
