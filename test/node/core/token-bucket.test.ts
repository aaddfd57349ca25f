import { describe, expect, it } from "vitest";
import { QuotaLedger } from "../../../src/core/tenant-quota";
import { TokenBucket } from "../../../src/core/token-bucket";

/**
 * Regressions found by test/node/core/token-bucket.property.test.ts: `waitMs` and `take` disagreed on the instant an
 * amount fits (the wait's slack was 1e-6 ms, take's 1e-6 units), on a clock that went back, and on an amount a hair
 * above the limit. (The bucket's other examples are in tenant-quota.test.ts.)
 */
describe("TokenBucket: the wait it names is when take takes it", () => {
  it("at a fast refill, the wait is not a millisecond short (10 units a ms, 5e-6 units past a whole ms)", () => {
    const bucket = new TokenBucket({ limit: 600_000, periodMs: 60_000 }, 0);
    bucket.take(600_000, 0);
    const amount = 100 + 5e-6;
    // It used to say 10 ms, when 4e-6 units are still missing, more than the slack: take refused it then.
    expect(bucket.waitMs(amount, 0)).toBe(11);
    expect(bucket.take(amount, 10)).toBe(false);
    expect(bucket.take(amount, 11)).toBe(true);
  });

  it("at a slow refill, the wait is not a millisecond long (0.0005 units a ms, 4e-7 units past 2000 ms)", () => {
    const bucket = new TokenBucket({ limit: 30, periodMs: 60_000 }, 0);
    bucket.take(30, 0);
    const amount = 1 + 4e-7;
    // It used to say 2001 ms, when take already takes it at 2000 (4e-7 units short: within the slack).
    expect(bucket.waitMs(amount, 0)).toBe(2000);
    expect(bucket.take(amount, 1999)).toBe(false);
    expect(bucket.take(amount, 2000)).toBe(true);
  });

  it("on a clock that went back, the wait counts from that clock (it refills nothing until past the latest instant)", () => {
    const bucket = new TokenBucket({ limit: 30, periodMs: 60_000 }, 0);
    bucket.take(30, 1000);
    // It used to say 2000 ms, counted from 1000: told at 500, a retry at 2500 was refused.
    expect(bucket.waitMs(1, 500)).toBe(2500);
    expect(bucket.resetMs(500)).toBe(60_500);
    expect(bucket.take(1, 2999)).toBe(false);
    expect(bucket.take(1, 3000)).toBe(true);
    // The quota ledger's retry-after is that wait.
    const ledger = new QuotaLedger();
    const limits = { requestsPerMinute: 30 };
    for (let i = 0; i < 30; i++) ledger.admit(limits, 0, 1000);
    expect(ledger.admit(limits, 0, 500).refusal?.retryAfterMs).toBe(2500);
    expect(ledger.admit(limits, 0, 2999).admitted).toBe(false);
    expect(ledger.admit(limits, 0, 3000).admitted).toBe(true);
  });

  it("far behind, a fraction of a millisecond of refill is not lost to the whole milliseconds behind", () => {
    const bucket = new TokenBucket({ limit: 1000, periodMs: 1 }, 0);
    bucket.take(1, 0);
    // 1e-7 units beyond the slack: 1e-10 ms of refill, which 1048576 + 1e-10 rounds away.
    const amount = 999 + 1.1e-6;
    expect(bucket.waitMs(amount, -1_048_576)).toBe(1_048_577);
    expect(bucket.take(amount, 0)).toBe(false);
    expect(bucket.take(amount, 1)).toBe(true);
  });

  it("an amount above the limit, however close, is never taken (waitMs says Infinity)", () => {
    const bucket = new TokenBucket({ limit: 30, periodMs: 60_000 }, 0);
    expect(bucket.waitMs(30 + 5e-7, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(bucket.take(30 + 5e-7, 0)).toBe(false);
    expect(bucket.available(0)).toBe(30);
    expect(bucket.take(30, 0)).toBe(true);
  });
});
