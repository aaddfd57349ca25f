import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leaseWant, QuotaLease } from "../../../src/core/quota-lease";
import {
  QUOTA_PERIOD_MS,
  QuotaLedger,
  type QuotaLimits,
  type QuotaState,
  type QuotaVerdict,
} from "../../../src/core/tenant-quota";
import { openAIDuration, rateLimitHeaders } from "../../../src/edge/rate-limit-headers";
import { propertyRuns } from "../../support/property-runs";

/**
 * The rate-limit headers a tenant with quotas gets (`rateLimitHeaders`), and the duration text of
 * `x-ratelimit-reset-*` and of a quota refusal's "Please try again in …" (`openAIDuration`), read the way a client
 * reads them: with a parser of Go's duration syntax (what OpenAI sends: `6m0s`, `1s`, `17ms`, `1.5s`) and of the
 * IETF fields (draft-ietf-httpapi-ratelimit-headers: structured-field lists), both written here.
 *
 * - `openAIDuration(ms)`, for any finite ms (fractions, negatives, 0, up to 2^53): the text is the canonical Go
 *   spelling the JSDoc names (`Nms` under a second, else `[Hh][Mm]S[.fff]s` with minutes and seconds under 60, no
 *   leading or trailing zeros, minutes written once there are hours), and it reads back as a whole number of ms
 *   that is never less than `ms` and less than 1 ms above it (0 for ms <= 0): a client told to wait that long is
 *   never early. Longer waits never read shorter.
 * - `rateLimitHeaders`, for any states of either quota: exactly OpenAI's three `x-ratelimit-*-{quota}` headers per
 *   quota present, plus `RateLimit-Policy` and `RateLimit` when any is (nothing at all without quotas); limit and
 *   remaining are the states' non-negative integers; `RateLimit-Policy` lists each present quota (requests first)
 *   with `q` its limit and `w` 60; `RateLimit` its `r` remaining and `t` the whole seconds to reset, never under
 *   the reset and less than 1 s above it.
 * - Driven by the real producers (the quota ledger over arbitrary admissions, corrections, debts and time, and the
 *   leases it grants): every state they report satisfies the above with remaining a non-negative integer; waiting
 *   the `x-ratelimit-reset-*` a quota sent finds that quota full by the ledger's own account, and a refused request
 *   that waits the refusal's "try again in" text is admitted.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);

// ---------------------------------------------------------------------------------------------------------------
// Go's duration syntax (time.ParseDuration), as a client reads it: a sequence of decimal numbers, each with an
// optional fraction and a unit. Exact, in nanoseconds (Go truncates a fraction finer than its unit's ns).

const UNIT_NS: Record<string, bigint> = {
  h: 3_600_000_000_000n,
  m: 60_000_000_000n,
  s: 1_000_000_000n,
  ms: 1_000_000n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ns: 1n,
};

function parseGoDuration(text: string): bigint {
  if (text === "0") return 0n;
  const part = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0n;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m || (m[1] === "" && (m[2] ?? "") === "")) throw new Error(`not a Go duration: ${JSON.stringify(text)}`);
    const unit = UNIT_NS[m[3] as string] as bigint;
    const fraction = m[2] ?? "";
    total +=
      BigInt(m[1] || "0") * unit + (fraction === "" ? 0n : (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length));
    at = part.lastIndex;
  }
  if (text.length === 0) throw new Error("empty duration");
  return total;
}

/** Whole milliseconds of a Go duration (throws when it is not whole ms: this writer never sends finer). */
function durationMs(text: string): number {
  const ns = parseGoDuration(text);
  if (ns % 1_000_000n !== 0n) throw new Error(`${text} is not whole milliseconds`);
  return Number(ns / 1_000_000n);
}

const NO_LEADING_ZERO = /^(?:0|[1-9]\d*)$/;

/** Go's `Duration.String()` spelling of a whole number of ms (with "0ms" for 0, as the JSDoc writes under 1 s). */
function checkCanonical(text: string): void {
  const short = /^(\d+)ms$/.exec(text);
  if (short) {
    const n = short[1] as string;
    if (!NO_LEADING_ZERO.test(n) || Number(n) >= 1000) throw new Error(`bad ms form ${text}`);
    return;
  }
  const long = /^(?:(\d+)h)?(?:(\d+)m)?(\d+)(?:\.(\d+))?s$/.exec(text);
  if (!long) throw new Error(`not Go's spelling: ${text}`);
  const [, h, m, s, frac] = long;
  if (h !== undefined && (!NO_LEADING_ZERO.test(h) || h === "0")) throw new Error(`bad hours in ${text}`);
  if (h !== undefined && m === undefined) throw new Error(`hours without minutes in ${text}`);
  if (m !== undefined && (!NO_LEADING_ZERO.test(m) || Number(m) >= 60)) throw new Error(`bad minutes in ${text}`);
  if (m === "0" && h === undefined) throw new Error(`0m without hours in ${text}`);
  if (!NO_LEADING_ZERO.test(s as string) || Number(s) >= 60) throw new Error(`bad seconds in ${text}`);
  if (frac !== undefined && !/^\d{0,2}[1-9]$/.test(frac)) throw new Error(`bad fraction in ${text}`);
  if (h === undefined && m === undefined && s === "0") throw new Error(`under a second in s form: ${text}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Structured-field lists (RFC 8941) of the IETF fields: `"name";k=int;k=int, ...`.

interface SfItem {
  name: string;
  params: Map<string, number>;
}

function parseSfList(text: string): SfItem[] {
  const items: SfItem[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at ${i} in ${JSON.stringify(text)}`);
  };
  for (;;) {
    if (text[i] !== '"') fail("expected an sf-string");
    i++;
    let name = "";
    for (;;) {
      const c = text[i++];
      if (c === undefined) fail("unterminated string");
      if (c === '"') break;
      if (c === "\\") {
        const e = text[i++];
        if (e !== '"' && e !== "\\") fail("bad escape");
        name += e;
      } else if ((c as string) < " " || (c as string) > "~") fail("non-ASCII in string");
      else name += c;
    }
    const params = new Map<string, number>();
    while (text[i] === ";") {
      i++;
      const key = /^[a-z*][a-z0-9_\-.*]*/.exec(text.slice(i))?.[0] ?? fail("bad key");
      i += key.length;
      if (text[i++] !== "=") fail("expected =");
      const int = /^-?\d{1,15}(?![\d.])/.exec(text.slice(i))?.[0] ?? fail("expected an sf-integer");
      i += int.length;
      if (params.has(key)) fail(`parameter ${key} twice`);
      params.set(key, Number(int));
    }
    items.push({ name, params });
    if (i === text.length) return items;
    while (text[i] === " " || text[i] === "\t") i++;
    if (text[i++] !== ",") fail("expected ,");
    while (text[i] === " " || text[i] === "\t") i++;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The checks of one verdict's headers.

const QUOTAS = ["requests", "tokens"] as const;

function checkHeaders(verdict: Pick<QuotaVerdict, "requests" | "tokens">): Record<string, string> {
  const headers = rateLimitHeaders(verdict);
  const present = QUOTAS.filter((q) => verdict[q] !== undefined);
  const expectedKeys = present.flatMap((q) => ["limit", "remaining", "reset"].map((k) => `x-ratelimit-${k}-${q}`));
  if (present.length > 0) expectedKeys.push("ratelimit-policy", "ratelimit");
  expect(Object.keys(headers).sort()).toEqual(expectedKeys.sort());
  if (present.length === 0) return headers;

  const policy = parseSfList(headers["ratelimit-policy"] as string);
  const state = parseSfList(headers.ratelimit as string);
  expect(policy.map((p) => p.name)).toEqual(present);
  expect(state.map((p) => p.name)).toEqual(present);
  present.forEach((q, index) => {
    const s = verdict[q] as QuotaState;
    const limit = headers[`x-ratelimit-limit-${q}`] as string;
    const remaining = headers[`x-ratelimit-remaining-${q}`] as string;
    expect(limit).toMatch(NO_LEADING_ZERO);
    expect(Number(limit)).toBe(s.limit);
    expect(remaining, `remaining ${q}`).toMatch(NO_LEADING_ZERO);
    expect(Number(remaining)).toBe(s.remaining);

    const reset = headers[`x-ratelimit-reset-${q}`] as string;
    checkCanonical(reset);
    const resetMs = durationMs(reset);
    expect(resetMs >= s.resetMs, `${q}: reset ${reset} under ${s.resetMs} ms`).toBe(true);
    // Less than 1 ms above (as `resetMs - 1 < x`: exact for whole ms, where `x + 1` would round).
    expect(resetMs === 0 || resetMs - 1 < s.resetMs, `${q}: reset ${reset} for ${s.resetMs} ms`).toBe(true);

    const p = policy[index] as SfItem;
    expect([...p.params.keys()].sort()).toEqual(["q", "w"]);
    expect(p.params.get("q")).toBe(s.limit);
    expect(p.params.get("w")).toBe(QUOTA_PERIOD_MS / 1000);
    const r = state[index] as SfItem;
    expect([...r.params.keys()].sort()).toEqual(["r", "t"]);
    expect(r.params.get("r")).toBe(s.remaining);
    const t = r.params.get("t") as number;
    expect(t >= 0 && t * 1000 >= s.resetMs, `${q}: t=${t} under ${s.resetMs} ms`).toBe(true);
    expect(t === 0 || t * 1000 - 1000 < s.resetMs, `${q}: t=${t} for ${s.resetMs} ms`).toBe(true);
  });
  return headers;
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries.

/** Milliseconds around every boundary of the format (ms/s, s/m, m/h), fractions and the far ends. */
const anyMs = fc.oneof(
  fc.integer({ min: 0, max: 4_000_000 }),
  fc.double({ min: -1e6, max: Number.MAX_SAFE_INTEGER, noNaN: true }),
  fc
    .tuple(
      fc.constantFrom(1, 1000, 60_000, 3_600_000, 86_400_000),
      fc.nat({ max: 100 }),
      fc.constantFrom(-1, -1e-9, -0.5, 0, 1e-9, 0.5, 1),
    )
    .map(([unit, k, d]) => unit * k + d),
  fc.constantFrom(0, -0, 999, 999.000001, 999.5, 1000, 59_999.5, 60_000, 3_599_999.9, Number.MIN_VALUE),
);

const quotaState: fc.Arbitrary<QuotaState> = fc.record({
  limit: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 999_999_999_999 })),
  remaining: fc.oneof(fc.nat({ max: 1000 }), fc.nat()),
  // Whole ms, as the ledger and leases give it, or any fraction; not subnormals, whose thousandth (seconds for
  // `RateLimit`'s t) underflows to 0, and which no producer gives.
  resetMs: fc.oneof(
    fc.nat({ max: 120_000 }),
    anyMs.filter((ms) => ms === 0 || ms >= 1e-300),
  ),
});

type Op =
  | { kind: "wait"; ms: number }
  | { kind: "admit"; tokens: number; leaseMs: number }
  | { kind: "adjust"; requests: number; tokens: number }
  | { kind: "leaseTake"; tokens: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 0, max: 90_000 }),
        fc.double({ min: 0, max: 5_000, noNaN: true }),
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("admit" as const),
      tokens: fc.oneof(fc.nat({ max: 100 }), fc.nat({ max: 2_000 }), fc.nat({ max: 200_000 })),
      leaseMs: fc.constantFrom(0, 1_000, 5_000, 20_000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("adjust" as const),
      requests: fc.constantFrom(-1, 0, 0, 1),
      tokens: fc.integer({ min: -100_000, max: 5_000 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("leaseTake" as const), tokens: fc.nat({ max: 2_000 }) }),
  },
);

const limitsArb: fc.Arbitrary<QuotaLimits> = fc.record(
  {
    requestsPerMinute: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1, max: 100_000 })),
    tokensPerMinute: fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 10_000, max: 10_000_000 })),
  },
  { requiredKeys: [] },
);

/** The ledger after `ops`, and the clock then. */
function replay(limits: QuotaLimits, ops: readonly Op[]): { ledger: QuotaLedger; now: number } {
  const ledger = new QuotaLedger();
  let now = 0;
  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "admit") ledger.admit(limits, o.tokens, now, leaseWant(limits, o.tokens, o.leaseMs));
    else if (o.kind === "adjust") ledger.adjust(limits, o.requests, o.tokens, now);
  }
  return { ledger, now };
}

describe("openAIDuration", () => {
  it("writes Go's canonical spelling, read back never under the wait and less than 1 ms above it", () => {
    fc.assert(
      fc.property(anyMs, (ms) => {
        const text = openAIDuration(ms);
        checkCanonical(text);
        const back = durationMs(text);
        if (ms <= 0) expect(back).toBe(0);
        else {
          expect(back >= ms, `${text} for ${ms} ms`).toBe(true);
          expect(back - 1 < ms, `${text} for ${ms} ms`).toBe(true); // exact: back is whole
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("never reads shorter for a longer wait", () => {
    fc.assert(
      fc.property(anyMs, anyMs, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(durationMs(openAIDuration(lo)) <= durationMs(openAIDuration(hi))).toBe(true);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("rateLimitHeaders", () => {
  it("carries exactly the documented headers, with non-negative integers and resets never early", () => {
    fc.assert(
      fc.property(fc.option(quotaState, { nil: undefined }), fc.option(quotaState, { nil: undefined }), (r, t) => {
        checkHeaders({ ...(r ? { requests: r } : {}), ...(t ? { tokens: t } : {}) });
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("tells the ledger's and leases' states truly: full after the reset, admitted after the refusal's wait", () => {
    fc.assert(
      fc.property(limitsArb, fc.array(op, { maxLength: 30, size: "max" }), (limits, ops) => {
        const ledger = new QuotaLedger();
        let now = 0;
        let lease: QuotaLease | undefined;
        ops.forEach((o, index) => {
          let verdict: QuotaVerdict | undefined;
          if (o.kind === "wait") now += o.ms;
          else if (o.kind === "admit") {
            verdict = ledger.admit(limits, o.tokens, now, leaseWant(limits, o.tokens, o.leaseMs));
            if (verdict.lease) lease = new QuotaLease(limits, verdict.lease, verdict, now, now + o.leaseMs);
          } else if (o.kind === "adjust") verdict = ledger.adjust(limits, o.requests, o.tokens, now);
          else verdict = lease?.take(o.tokens, now);
          if (!verdict) return;
          const headers = checkHeaders(verdict);
          if (o.kind === "leaseTake") return; // a lease's states are estimates (other isolates' spending unseen)

          // Waiting the reset a quota sent finds it full (by the ledger's own account: nothing left to wait).
          for (const q of QUOTAS) {
            if (!verdict[q]) continue;
            const wait = durationMs(headers[`x-ratelimit-reset-${q}`] as string);
            const later = replay(limits, ops.slice(0, index + 1));
            const state = later.ledger.adjust(limits, 0, 0, later.now + wait)[q] as QuotaState;
            expect(
              state.resetMs,
              `${q} not full ${wait} ms after ${headers[`x-ratelimit-reset-${q}`]}`,
            ).toBeLessThanOrEqual(0);
          }
          // A refused request that waits what the refusal says is admitted then.
          if (o.kind === "admit" && verdict.refusal && !verdict.refusal.neverFits) {
            const wait = durationMs(openAIDuration(verdict.refusal.retryAfterMs));
            const later = replay(limits, ops.slice(0, index + 1));
            const again = later.ledger.admit(limits, o.tokens, later.now + wait);
            expect(
              again.admitted,
              `refused again ${wait} ms after a refusal for ${verdict.refusal.retryAfterMs} ms`,
            ).toBe(true);
          }
        });
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
