import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { QuotaLedger } from "../../../src/core/tenant-quota";
import { TokenBucket } from "../../../src/core/token-bucket";
import { propertyRuns } from "../../support/property-runs";

describe("TokenBucket", () => {
  it("starts full, refills continuously and says how long until an amount fits", () => {
    const bucket = new TokenBucket({ limit: 30, periodMs: 60_000 }, 0);
    expect(bucket.take(30, 0)).toBe(true);
    expect(bucket.take(1, 0)).toBe(false);
    expect(bucket.waitMs(1, 0)).toBe(2000);
    expect(bucket.resetMs(0)).toBe(60_000);
    expect(bucket.take(1, 1999)).toBe(false);
    expect(bucket.take(1, 2000)).toBe(true);
    expect(bucket.available(62_000)).toBe(30);
  });

  it("never says an amount fits now that take refuses (a shortfall the float slack rounds to no wait)", () => {
    // 2.5 units a millisecond: 1.2e-6 units short is 4.8e-7 ms, which used to read as a wait of 0 (-0).
    const bucket = new TokenBucket({ limit: 150_000, periodMs: 60_000 }, 0);
    bucket.take(150_000, 0);
    const at = 39.99999952;
    expect(bucket.waitMs(100, at)).toBe(1);
    expect(bucket.take(100, at)).toBe(false);
    // The ledger refuses it then (it used to admit it without charging it), and admits it a millisecond later.
    const ledger = new QuotaLedger();
    const limits = { tokensPerMinute: 150_000 };
    ledger.admit(limits, 150_000, 0);
    expect(ledger.admit(limits, 100, at).refusal?.retryAfterMs).toBe(1);
    expect(ledger.admit(limits, 100, at + 1).admitted).toBe(true);
  });

  it("a charge corrected upwards is a debt the refill repays first", () => {
    const bucket = new TokenBucket({ limit: 100, periodMs: 60_000 }, 0);
    bucket.take(100, 0);
    bucket.adjust(-50, 0);
    expect(bucket.available(0)).toBe(-50);
    expect(bucket.waitMs(10, 0)).toBe(36_000);
  });

  it("an amount above the limit never fits", () => {
    expect(new TokenBucket({ limit: 10, periodMs: 1000 }, 0).waitMs(11, 0)).toBe(Number.POSITIVE_INFINITY);
  });

  it("the wait it names is exact: the amount fits at that instant and not a millisecond before", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 100_000 })), {
          maxLength: 20,
        }),
        (limit, steps) => {
          const bucket = new TokenBucket({ limit, periodMs: 60_000 }, 0);
          let now = 0;
          for (const [dt, raw] of steps) {
            now += dt;
            const amount = 1 + (raw % limit);
            const wait = bucket.waitMs(amount, now);
            if (wait === 0) {
              expect(bucket.take(amount, now)).toBe(true);
              continue;
            }
            if (wait > 1) expect(bucket.take(amount, now + wait - 1)).toBe(false);
            expect(bucket.take(amount, now + wait)).toBe(true);
            now += wait;
          }
        },
      ),
      propertyRuns(100, 20261207),
    );
  });
});

describe("QuotaLedger", () => {
  const limits = { requestsPerMinute: 30, tokensPerMinute: 10_000 };

  it("admits while both quotas fit, then refuses with the request quota's exact wait", () => {
    const ledger = new QuotaLedger();
    for (let i = 0; i < 30; i++) expect(ledger.admit(limits, 100, i * 10).admitted).toBe(true);
    const refused = ledger.admit(limits, 100, 300);
    expect(refused.admitted).toBe(false);
    expect(refused.refusal).toEqual({ quota: "requests", retryAfterMs: 1700, neverFits: false });
    expect(refused.requests).toEqual({ limit: 30, remaining: 0, resetMs: 59_700 });
    expect(refused.tokens?.remaining).toBe(7050); // 300 ms of refill: 50 tokens
    // The refused request charged nothing.
    expect(ledger.admit(limits, 100, 2000).admitted).toBe(true);
  });

  it("refuses on tokens alone, charging neither quota, and waits for the larger shortfall", () => {
    const ledger = new QuotaLedger();
    expect(ledger.admit(limits, 9_000, 0).admitted).toBe(true);
    const refused = ledger.admit(limits, 2_000, 0);
    expect(refused.refusal).toEqual({ quota: "tokens", retryAfterMs: 6000, neverFits: false });
    expect(refused.requests?.remaining).toBe(29);
  });

  it("a request larger than the token quota never fits", () => {
    const refused = new QuotaLedger().admit(limits, 10_001, 0);
    expect(refused.refusal?.neverFits).toBe(true);
  });

  it("a request larger than the token quota is refused on tokens even while the requests quota is short too", () => {
    // Otherwise the edge's 400 would tell the client its request is too large for the requests quota (of 1 request).
    const ledger = new QuotaLedger();
    for (let i = 0; i < 30; i++) ledger.admit(limits, 10, 0);
    expect(ledger.admit(limits, 10, 0).refusal).toEqual({ quota: "requests", retryAfterMs: 2000, neverFits: false });
    expect(ledger.admit(limits, 10_001, 0).refusal).toEqual({
      quota: "tokens",
      retryAfterMs: Number.POSITIVE_INFINITY,
      neverFits: true,
    });
  });

  it("corrects a charge with the usage: a refund gives tokens back, an overrun is owed", () => {
    const ledger = new QuotaLedger();
    ledger.admit(limits, 5000, 0);
    expect(ledger.adjust(limits, 0, 4000, 0).tokens?.remaining).toBe(9000);
    expect(ledger.adjust(limits, 0, -9500, 0).tokens?.remaining).toBe(0);
    expect(ledger.admit(limits, 1, 0).refusal?.retryAfterMs).toBe(Math.ceil((501 * 60_000) / 10_000));
  });

  it("a correction made under the plan before a change goes to the bucket as it is, not back to the old plan", () => {
    // Admissions still running when a plan changes are corrected with the limits they were charged under; each
    // correction used to switch the bucket back to the old limit, full, and the next admission to the new one, full.
    const ledger = new QuotaLedger();
    const before = { tokensPerMinute: 1000 };
    const after = { tokensPerMinute: 2000 };
    ledger.admit(before, 500, 0); // still running when the plan changes
    expect(ledger.admit(after, 1500, 0).tokens).toEqual({ limit: 2000, remaining: 500, resetMs: 45_000 });
    expect(ledger.adjust(before, 0, 100, 0).tokens).toEqual({ limit: 2000, remaining: 600, resetMs: 42_000 });
    expect(ledger.admit(after, 1000, 0).refusal?.quota).toBe("tokens");
    // A correction under a plan without the quota leaves the bucket alone too.
    expect(ledger.adjust({}, 0, -100, 0).tokens?.remaining).toBe(500);
  });

  it("an unlimited quota has no state; a changed limit starts a fresh bucket", () => {
    const ledger = new QuotaLedger();
    const verdict = ledger.admit({ requestsPerMinute: 2 }, 10, 0);
    expect(verdict.tokens).toBeUndefined();
    expect(verdict.requests?.remaining).toBe(1);
    expect(ledger.admit({ requestsPerMinute: 5 }, 0, 0).requests?.remaining).toBe(4);
  });
});
