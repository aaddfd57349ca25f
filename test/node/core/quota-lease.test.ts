import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leaseWant, MIN_LEASED_REQUESTS, QuotaLease } from "../../../src/core/quota-lease";
import { QuotaLedger } from "../../../src/core/tenant-quota";
import { propertyRuns } from "../../support/property-runs";

describe("leaseWant", () => {
  it("asks for what each limited quota refills in the lease's time", () => {
    expect(leaseWant({ requestsPerMinute: 6000 }, 500, 1000)).toEqual({ requests: 100 });
    expect(leaseWant({ requestsPerMinute: 6000, tokensPerMinute: 600_000 }, 500, 1000)).toEqual({
      requests: 100,
      tokens: 10_000,
    });
  });

  it("a small tenant, a large request, no quota or no lease time: no lease (charged request by request)", () => {
    expect(leaseWant({ requestsPerMinute: 30 }, 10, 1000)).toBeUndefined();
    expect(leaseWant({ requestsPerMinute: 60 * (MIN_LEASED_REQUESTS - 1) }, 10, 1000)).toBeUndefined();
    expect(leaseWant({ requestsPerMinute: 60 * MIN_LEASED_REQUESTS }, 10, 1000)).toEqual({
      requests: MIN_LEASED_REQUESTS,
    });
    // 1000 tokens per minute refill 16 a second: not 4 requests of 100 tokens.
    expect(leaseWant({ tokensPerMinute: 1000 }, 100, 1000)).toBeUndefined();
    expect(leaseWant({}, 10, 1000)).toBeUndefined();
    expect(leaseWant({ requestsPerMinute: 6000 }, 10, 0)).toBeUndefined();
  });
});

describe("QuotaLedger leases", () => {
  it("grants what is available beside an admission, charged at once", () => {
    const ledger = new QuotaLedger();
    const limits = { requestsPerMinute: 10 };
    const verdict = ledger.admit(limits, 0, 0, { requests: 100 });
    expect(verdict.admitted).toBe(true);
    expect(verdict.lease).toEqual({ requests: 9 });
    expect(verdict.requests?.remaining).toBe(0);
    expect(ledger.admit(limits, 0, 0).admitted).toBe(false);
  });

  it("no lease when a limited quota has nothing left to lease, nor when refused", () => {
    const ledger = new QuotaLedger();
    const limits = { requestsPerMinute: 10, tokensPerMinute: 100 };
    const first = ledger.admit(limits, 100, 0, { requests: 5, tokens: 50 });
    expect(first.admitted).toBe(true);
    expect(first.lease).toBeUndefined();
    expect(first.requests?.remaining).toBe(9);
    expect(ledger.admit(limits, 1, 0, { requests: 5, tokens: 50 }).lease).toBeUndefined();
  });
});

describe("QuotaLease", () => {
  const limits = { requestsPerMinute: 6000, tokensPerMinute: 600_000 };

  function granted(now = 0) {
    const ledger = new QuotaLedger();
    const verdict = ledger.admit(limits, 100, now, { requests: 3, tokens: 1000 });
    return { ledger, verdict, lease: new QuotaLease(limits, verdict.lease ?? {}, verdict, now, now + 1000) };
  }

  it("admits locally while it covers a request, then says no", () => {
    const { lease } = granted();
    expect(lease.take(100, 1)?.admitted).toBe(true);
    expect(lease.take(100, 2)?.admitted).toBe(true);
    expect(lease.take(100, 3)?.admitted).toBe(true);
    expect(lease.take(100, 4)).toBeUndefined();
    expect(lease.close()).toEqual({
      leftover: { requests: 0, tokens: 700 },
      served: 3,
      tokensCharged: 300,
      tokensRefunded: 0,
    });
  });

  it("does not cover a request with more tokens than it holds", () => {
    const { lease } = granted();
    expect(lease.take(1001, 1)).toBeUndefined();
    expect(lease.close()).toEqual({
      leftover: { requests: 3, tokens: 1000 },
      served: 0,
      tokensCharged: 0,
      tokensRefunded: 0,
    });
  });

  it("expires, and closes only once", () => {
    const { lease } = granted();
    expect(lease.isOpen(999)).toBe(true);
    expect(lease.take(1, 1000)).toBeUndefined();
    expect(lease.correct(0, 10, 1000)).toBe(false);
    expect(lease.close().leftover).toEqual({ requests: 3, tokens: 1000 });
    expect(lease.close()).toEqual({
      leftover: { requests: 0, tokens: 0 },
      served: 0,
      tokensCharged: 0,
      tokensRefunded: 0,
    });
    expect(lease.isOpen(0)).toBe(false);
  });

  it("takes corrections while open; a charge beyond what it holds is refused untouched", () => {
    const { lease } = granted();
    lease.take(100, 1);
    lease.take(100, 1);
    expect(lease.correct(0, 60, 2)).toBe(true); // the first answer used 40 of 100
    expect(lease.correct(1, 100, 3)).toBe(true); // the second refunded whole
    expect(lease.correct(0, -2000, 4)).toBe(false);
    expect(lease.close()).toEqual({
      leftover: { requests: 2, tokens: 960 },
      served: 2,
      tokensCharged: 200,
      tokensRefunded: 160,
    });
  });

  it("refuses, untouched, a refund that would make it hold more than it was granted", () => {
    // A refund of an admission it did not serve (the quota object's, say) is the object's to take back: its
    // bucket caps it at the limit, whereas held here beyond the grant it could be spent on top of a full bucket.
    const { lease } = granted();
    expect(lease.correct(1, 0, 1)).toBe(false); // it holds all 3 requests it was granted
    expect(lease.correct(0, 1, 1)).toBe(false); // and all 1000 tokens
    lease.take(100, 2);
    expect(lease.correct(0, 150, 3)).toBe(false); // 900 + 150 > 1000
    expect(lease.correct(1, 100, 3)).toBe(true); // back to the grant exactly
    expect(lease.close()).toEqual({
      leftover: { requests: 3, tokens: 1000 },
      served: 1,
      tokensCharged: 100,
      tokensRefunded: 100,
    });
  });

  it("counts token charges and corrections even without a token quota (the tenant's token metrics)", () => {
    const requestsOnly = { requestsPerMinute: 6000 };
    const ledger = new QuotaLedger();
    const verdict = ledger.admit(requestsOnly, 100, 0, { requests: 10 });
    const lease = new QuotaLease(requestsOnly, verdict.lease ?? {}, verdict, 0, 1000);
    lease.take(100, 1);
    lease.take(100, 1);
    expect(lease.correct(0, 70, 2)).toBe(true); // used 30
    expect(lease.correct(0, -50, 2)).toBe(true); // used 150
    expect(lease.close()).toEqual({
      leftover: { requests: 8, tokens: 0 },
      served: 2,
      tokensCharged: 250,
      tokensRefunded: 70,
    });
  });

  it("is due for renewal with a quarter of its time left, or of a unit it was granted; never once closed", () => {
    const { lease } = granted(); // 3 requests and 1000 tokens for 1000 ms
    expect(lease.dueForRenewal(749)).toBe(false);
    expect(lease.dueForRenewal(750)).toBe(true);
    expect(lease.dueForRenewal(1000)).toBe(false); // expired: replaced, not renewed
    const spent = granted().lease;
    spent.take(10, 1);
    spent.take(10, 1);
    expect(spent.dueForRenewal(1)).toBe(false); // 1 of 3 requests left: more than a quarter
    const tokens = granted().lease;
    tokens.take(760, 1);
    expect(tokens.dueForRenewal(1)).toBe(true); // 240 of 1000 tokens left
    tokens.close();
    expect(tokens.dueForRenewal(1)).toBe(false);
  });

  it("its headers' states: the level at the grant, refilled since, plus what it holds", () => {
    const { verdict, lease } = granted();
    // After the request (1, 100) and the lease (3, 1000): 5996 requests and 598900 tokens left in the bucket.
    expect(verdict.requests?.remaining).toBe(5996);
    const at = lease.take(100, 0);
    expect(at?.requests).toEqual({ limit: 6000, remaining: 5998, resetMs: 20 });
    expect(at?.tokens).toEqual({ limit: 600_000, remaining: 599_800, resetMs: 20 });
    // 10 ms later the bucket refilled one request.
    expect(lease.take(100, 10)?.requests).toEqual({ limit: 6000, remaining: 5998, resetMs: 20 });
  });

  it("never admits beyond the quota: object and leases together stay within it (no refill)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 60 })), { maxLength: 400 }),
        (rpm, steps) => {
          const ledger = new QuotaLedger();
          const quota = { requestsPerMinute: rpm };
          // Three isolates, each with its own lease, all at t = 0 (nothing refills).
          const leases: (QuotaLease | undefined)[] = [undefined, undefined, undefined];
          let admitted = 0;
          for (const [isolate, want] of steps) {
            const i = isolate % 3;
            const local = leases[i]?.take(0, 0);
            if (local) {
              admitted += 1;
              continue;
            }
            const returned = leases[i]?.close();
            if (returned) ledger.adjust(quota, returned.leftover.requests, 0, 0);
            const verdict = ledger.admit(quota, 0, 0, want > 0 ? { requests: want } : undefined);
            leases[i] = verdict.lease ? new QuotaLease(quota, verdict.lease, verdict, 0, 1000) : undefined;
            if (verdict.admitted) admitted += 1;
            else expect(verdict.refusal?.retryAfterMs).toBeGreaterThan(0);
          }
          expect(admitted).toBeLessThanOrEqual(rpm);
        },
      ),
      propertyRuns(100, 20261207),
    );
  });
});
