import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leaseWant, MIN_LEASED_REQUESTS, QuotaLease, RENEW_AHEAD_SHARE } from "../../../src/core/quota-lease";
import { QUOTA_PERIOD_MS, type QuotaLimits, type QuotaState, type QuotaVerdict } from "../../../src/core/tenant-quota";
import { propertyRuns } from "../../support/property-runs";

/**
 * One `QuotaLease` (a share of a tenant's quotas spent locally until it expires) on its own, driven by arbitrary
 * operation sequences - takes, covers, corrections of its own admissions and of others' (refunds, usage, overruns,
 * arbitrary amounts either way), views, renewal checks, closes (early, at expiry, twice) - on a clock the test moves
 * forward, back, and onto (or 1 ms either side of) its expiry and its renewal mark, against a model written from the
 * JSDoc (what it was granted, what it holds, what it served and was charged and refunded). After every operation:
 *
 * - `isOpen` iff not closed and the clock is before `expiresAtMs`; `covers(t)` iff open and it holds one request
 *   and `t` tokens of the quotas it has; `take(t)` admits iff `covers(t)`, and then spends exactly that;
 * - `correct` is taken iff open, no charge exceeds what it holds and no refund makes it hold more than it was
 *   granted (per quota it has); else nothing changes (the caller sends it to the quota object);
 * - it never hands out more than it was granted plus what was put back on it: what it holds stays in [0, granted];
 * - `dueForRenewal` iff open and at most a quarter of its time, or of a unit it was granted, is left;
 * - its view (and each take's) is the documented estimate: the level at the grant, refilled since, plus what it
 *   holds, capped at the limit (remaining: whole units, reset: time until full);
 * - `close` hands back exactly what it holds, what it served, charged and refunded, once (then zeros); and per
 *   quota it has, everything comes back exactly once: what was consumed (taken, less every correction) plus what
 *   went back to the object (the leftovers, and the corrections it refused) is exactly what it was granted.
 */

const runs = propertyRuns(300, 20261205);

const QUOTAS = ["requests", "tokens"] as const;
type Quota = (typeof QUOTAS)[number];

type Op =
  | { kind: "wait"; ms: number }
  | { kind: "back"; ms: number }
  /** To the lease's expiry or its renewal mark (a quarter of its time left), ± delta ms. */
  | { kind: "until"; mark: "expiry" | "renewal"; delta: number }
  | { kind: "take"; tokens: Tokens }
  | { kind: "covers"; tokens: Tokens }
  /** The end of one of its own admissions: refunded whole, or its usage (a share of the estimate; above 100 an overrun). */
  | { kind: "settle"; pick: number; refund: boolean; usedPct: number }
  /** A correction of an admission it did not serve (the object's, an earlier lease's): any amounts either way. */
  | { kind: "foreign"; requests: number; tokens: number }
  | { kind: "view" }
  | { kind: "close" };

/** A request's tokens: a share of what the lease was granted (above 1: more than it holds), or a small number. */
type Tokens = { share: number } | { n: number };

const tokensArb: fc.Arbitrary<Tokens> = fc.oneof(
  fc.record({
    share: fc.oneof(fc.constantFrom(0, 0.25, 0.5, 0.75, 1, 1.01), fc.double({ min: 0, max: 1.2, noNaN: true })),
  }),
  fc.record({ n: fc.oneof(fc.constantFrom(0, 1), fc.integer({ min: 0, max: 500 })) }),
);

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(0, 1) },
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 200 }) },
        { weight: 1, arbitrary: fc.integer({ min: 200, max: 90_000 }) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("back" as const),
      ms: fc.oneof(fc.constantFrom(1), fc.integer({ min: 1, max: 500 }), fc.integer({ min: 500, max: 90_000 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("until" as const),
      mark: fc.constantFrom("expiry" as const, "renewal" as const),
      delta: fc.constantFrom(-1, 0, 1),
    }),
  },
  { weight: 16, arbitrary: fc.record({ kind: fc.constant("take" as const), tokens: tokensArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("covers" as const), tokens: tokensArb }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      pick: fc.nat(),
      refund: fc.boolean(),
      usedPct: fc.oneof(fc.constantFrom(0, 100), fc.integer({ min: 0, max: 300 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("foreign" as const),
      requests: fc.constantFrom(0, 0, 1, -1, 2),
      tokens: fc.oneof(fc.constant(0), fc.integer({ min: -2_000, max: 2_000 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("view" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const) }) },
);

interface Setup {
  limits: QuotaLimits;
  /** Per quota the lease has: whole units granted (at least one, as the ledger grants). */
  granted: Record<Quota, number>;
  /** The bucket's whole units left at the grant (after the request and the lease were charged). */
  remainingAtGrant: Record<Quota, number>;
  start: number;
  leaseMs: number;
}

const grantArb = fc.oneof(
  fc.record({ units: fc.constantFrom(1, 2, 3, 4, 8, 12, 1_000) }),
  fc.record({ share: fc.double({ min: 0, max: 0.1, noNaN: true }) }),
);

const setupArb: fc.Arbitrary<Setup> = fc
  .record({
    rpm: fc.constantFrom(undefined, 240, 6_000, 60_000),
    tpm: fc.constantFrom(undefined, 10_000, 600_000, 30_000_000),
    // Whole units granted: a few (a quarter of them a whole number, or not), or a share of the limit.
    grant: fc.record({ requests: grantArb, tokens: grantArb }),
    remainingShare: fc.record({
      requests: fc.double({ min: 0, max: 1, noNaN: true }),
      tokens: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    start: fc.oneof(fc.integer({ min: -1_000, max: 1_000 }), fc.integer({ min: 1.7e12, max: 1.8e12 })),
    leaseMs: fc.oneof(
      { weight: 1, arbitrary: fc.constantFrom(1, 4) },
      { weight: 4, arbitrary: fc.constantFrom(250, 1_000, 4_000, 10_000) },
    ),
  })
  .filter((s) => s.rpm !== undefined || s.tpm !== undefined)
  .map(({ rpm, tpm, grant, remainingShare, start, leaseMs }) => {
    const limitOf = { requests: rpm, tokens: tpm };
    const units = (q: Quota, g: { units: number } | { share: number }) => {
      const limit = limitOf[q];
      if (limit === undefined) return 0;
      return Math.max(1, Math.min(limit, "units" in g ? g.units : Math.floor(limit * g.share)));
    };
    return {
      limits: {
        ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}),
        ...(tpm !== undefined ? { tokensPerMinute: tpm } : {}),
      },
      granted: { requests: units("requests", grant.requests), tokens: units("tokens", grant.tokens) },
      remainingAtGrant: {
        requests: limitOf.requests === undefined ? 0 : Math.floor(limitOf.requests * remainingShare.requests),
        tokens: limitOf.tokens === undefined ? 0 : Math.floor(limitOf.tokens * remainingShare.tokens),
      },
      start,
      leaseMs,
    };
  });

/** The acceptable results of `floor` / `ceil` of a value computed elsewhere in floats: both sides of a boundary. */
const NEAR = 1e-7;
const floors = (x: number) => [Math.floor(x - NEAR), Math.floor(x + NEAR)];
const ceils = (x: number) => [Math.ceil(x - NEAR), Math.ceil(x + NEAR)];
const within = (value: number, [lo, hi]: number[]) => value >= (lo as number) && value <= (hi as number);

function run(setup: Setup, ops: readonly Op[]): string[] {
  const { limits, granted, remainingAtGrant, start, leaseMs } = setup;
  const limitOf: Record<Quota, number | undefined> = {
    requests: limits.requestsPerMinute,
    tokens: limits.tokensPerMinute,
  };
  const has = (q: Quota) => limitOf[q] !== undefined;
  // The verdict of the admission that brought the lease: the states after the request and the lease were charged.
  const state = (q: Quota): QuotaState | undefined => {
    const limit = limitOf[q];
    if (limit === undefined) return undefined;
    const remaining = remainingAtGrant[q];
    return { limit, remaining, resetMs: Math.ceil(((limit - remaining) * QUOTA_PERIOD_MS) / limit) };
  };
  const atGrant: Pick<QuotaVerdict, "requests" | "tokens"> = {
    ...(state("requests") ? { requests: state("requests") } : {}),
    ...(state("tokens") ? { tokens: state("tokens") } : {}),
  };
  const grantedUnits = {
    ...(has("requests") ? { requests: granted.requests } : {}),
    ...(has("tokens") ? { tokens: granted.tokens } : {}),
  };
  const expiresAtMs = start + leaseMs;
  const lease = new QuotaLease(limits, grantedUnits, atGrant, start, expiresAtMs);

  // The model.
  let now = start;
  let closed = false;
  const left = { ...granted };
  let served = 0;
  let tokensCharged = 0;
  let tokensRefunded = 0;
  /** Its admissions not yet settled (their tokens). */
  const inflight: number[] = [];
  /** Per quota: units taken by admissions, corrections it took, and corrections it refused (to the object). */
  const taken = { requests: 0, tokens: 0 };
  const accepted = { requests: 0, tokens: 0 };
  const refused = { requests: 0, tokens: 0 };
  let returned: { requests: number; tokens: number } | undefined;

  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now} (${start}..${expiresAtMs}): ${what}`);
  const open = () => !closed && now < expiresAtMs;
  const need = (q: Quota, tokens: number) => (q === "requests" ? 1 : tokens);
  const covers = (tokens: number) => open() && QUOTAS.every((q) => !has(q) || left[q] >= need(q, tokens));
  const resolve = (t: Tokens) => ("n" in t ? t.n : t.share * (granted.tokens || 1000));

  const checkView = (verdict: QuotaVerdict | undefined, what: string) => {
    if (!verdict?.admitted) {
      fail(`${what}: not an admission (${JSON.stringify(verdict)})`);
      return;
    }
    for (const q of QUOTAS) {
      const at = atGrant[q];
      const s = verdict[q];
      if (!at || !s) {
        if (at || s) fail(`${what}: a ${q} state ${JSON.stringify(s)} for a ${q} quota ${at ? "it has" : "it lacks"}`);
        continue;
      }
      const perMs = at.limit / QUOTA_PERIOD_MS;
      const level = Math.min(at.limit, at.remaining + Math.max(0, now - start) * perMs + left[q]);
      if (s.limit !== at.limit) fail(`${what}: ${q} limit ${s.limit}`);
      if (
        !within(
          s.remaining,
          floors(level + 1e-6).map((v) => Math.max(0, v)),
        )
      )
        fail(`${what}: ${q} remaining ${s.remaining}, estimated level ${level} (holding ${left[q]})`);
      if (
        !within(
          s.resetMs,
          ceils((at.limit - level) / perMs - 1e-6).map((v) => Math.max(0, v)),
        )
      )
        fail(`${what}: ${q} reset ${s.resetMs}, estimated level ${level}`);
    }
  };

  const take = (tokens: number) => {
    const expected = covers(tokens);
    const verdict = lease.take(tokens, now);
    if ((verdict !== undefined) !== expected) {
      fail(
        `take(${tokens}) ${verdict ? "admitted" : "refused"}; modelled: holds ${JSON.stringify(left)}, open ${open()}`,
      );
      return;
    }
    if (!verdict) return;
    for (const q of QUOTAS) {
      if (!has(q)) continue;
      left[q] -= need(q, tokens);
      taken[q] += need(q, tokens);
    }
    served += 1;
    tokensCharged += tokens;
    inflight.push(tokens);
    checkView(verdict, `take(${tokens})`);
  };

  const correct = (back: Record<Quota, number>) => {
    const after = (q: Quota) => left[q] + back[q];
    const expected = open() && QUOTAS.every((q) => !has(q) || (after(q) >= 0 && after(q) <= granted[q]));
    const took = lease.correct(back.requests, back.tokens, now);
    if (took !== expected)
      fail(
        `correct(${back.requests}, ${back.tokens}) ${took}; modelled: holds ${JSON.stringify(left)}, open ${open()}`,
      );
    for (const q of QUOTAS) {
      if (!has(q)) continue;
      if (took) {
        left[q] += back[q];
        accepted[q] += back[q];
      } else refused[q] += back[q];
    }
    if (took) {
      if (back.tokens > 0) tokensRefunded += back.tokens;
      else tokensCharged -= back.tokens;
    }
  };

  const close = () => {
    const result = lease.close();
    const expected = closed
      ? { leftover: { requests: 0, tokens: 0 }, served: 0, tokensCharged: 0, tokensRefunded: 0 }
      : { leftover: { requests: left.requests, tokens: left.tokens }, served, tokensCharged, tokensRefunded };
    if (JSON.stringify(result) !== JSON.stringify(expected))
      fail(`close() ${JSON.stringify(result)}, modelled ${JSON.stringify(expected)}`);
    if (!closed) returned = { ...result.leftover };
    closed = true;
  };

  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "back") now -= o.ms;
    else if (o.kind === "until") {
      const mark = o.mark === "expiry" ? expiresAtMs : expiresAtMs - leaseMs * RENEW_AHEAD_SHARE;
      now = Math.ceil(mark) + o.delta;
    } else if (o.kind === "take") take(resolve(o.tokens));
    else if (o.kind === "covers") {
      const tokens = resolve(o.tokens);
      if (lease.covers(tokens, now) !== covers(tokens))
        fail(`covers(${tokens}) ${lease.covers(tokens, now)}; modelled: holds ${JSON.stringify(left)}, open ${open()}`);
    } else if (o.kind === "settle") {
      if (inflight.length === 0) continue;
      const [tokens] = inflight.splice(o.pick % inflight.length, 1) as [number];
      const back = o.refund
        ? { requests: 1, tokens }
        : { requests: 0, tokens: tokens - Math.round((tokens * o.usedPct) / 100) };
      if (back.requests !== 0 || back.tokens !== 0) correct(back);
    } else if (o.kind === "foreign") correct({ requests: o.requests, tokens: o.tokens });
    else if (o.kind === "view") {
      if (!closed) checkView(lease.view(now), "view");
    } else close();

    // After every operation: open, due, and what it holds within [0, granted] (seen through its view).
    if (lease.isOpen(now) !== open()) fail(`isOpen ${lease.isOpen(now)}, modelled ${open()}`);
    const due =
      open() &&
      (expiresAtMs - now <= leaseMs * RENEW_AHEAD_SHARE ||
        QUOTAS.some((q) => has(q) && left[q] <= granted[q] * RENEW_AHEAD_SHARE));
    if (lease.dueForRenewal(now) !== due) fail(`dueForRenewal ${lease.dueForRenewal(now)}, modelled ${due}`);
    for (const q of QUOTAS)
      if (has(q) && (left[q] < 0 || left[q] > granted[q]))
        fail(`modelled ${q} held ${left[q]} out of [0, ${granted[q]}]`);
    if (!closed) checkView(lease.view(now), "view");
    if (violations.length > 0) return violations;
  }
  if (!closed) close();
  close(); // once: a second close hands back nothing
  // Everything comes back exactly once: consumed (taken, less every correction) + back to the object = granted.
  for (const q of QUOTAS) {
    if (!has(q) || !returned) continue;
    const consumed = taken[q] - accepted[q] - refused[q];
    const back = returned[q] + refused[q];
    if (Math.abs(consumed + back - granted[q]) > 1e-6)
      fail(`${q}: consumed ${consumed} + given back ${back} != granted ${granted[q]}`);
  }
  return violations;
}

describe("QuotaLease against a model of its grant", () => {
  it("spends, corrects, expires and hands back exactly what its JSDoc says, under any clock", () => {
    fc.assert(
      fc.property(setupArb, fc.array(op, { minLength: 5, maxLength: 80, size: "max" }), (setup, ops) => {
        expect(run(setup, ops)).toEqual([]);
      }),
      runs,
    );
  });

  it("leaseWant asks for what each limited quota refills in the lease's time, or nothing below the minimum", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 100_000_000 }), { nil: undefined }),
        fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: 0, max: 200_000 })),
        fc.oneof(fc.constantFrom(0, -1, 1, 1_000), fc.integer({ min: 0, max: 60_000 })),
        (rpm, tpm, tokens, leaseMs) => {
          const limits = {
            ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}),
            ...(tpm !== undefined ? { tokensPerMinute: tpm } : {}),
          };
          const share = (limit: number | undefined) =>
            limit === undefined ? undefined : Math.floor((limit * leaseMs) / QUOTA_PERIOD_MS);
          const requests = share(rpm);
          const tokenUnits = share(tpm);
          const worth =
            leaseMs > 0 &&
            (rpm !== undefined || tpm !== undefined) &&
            (requests === undefined || requests >= MIN_LEASED_REQUESTS) &&
            (tokenUnits === undefined || tokenUnits >= MIN_LEASED_REQUESTS * Math.max(1, tokens));
          const want = leaseWant(limits, tokens, leaseMs);
          if (!worth) expect(want).toBeUndefined();
          else
            expect(want).toEqual({
              ...(requests !== undefined ? { requests } : {}),
              ...(tokenUnits !== undefined ? { tokens: tokenUnits } : {}),
            });
        },
      ),
      runs,
    );
  });
});
