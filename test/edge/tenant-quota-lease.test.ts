import { beforeEach, describe, expect, it } from "vitest";
import type { LeaseReturn } from "../../src/core/quota-lease";
import { QuotaLedger, type QuotaLimits, type QuotaUnits } from "../../src/core/tenant-quota";
import type { TenantPlan } from "../../src/edge/tenant-config";
import { chargeQuota, type QuotaCharge, type QuotaOutcome } from "../../src/edge/tenant-quota-charge";
import { forgetLeasesForTesting } from "../../src/edge/tenant-quota-leases";
import type { TenantQuota } from "../../src/edge/tenant-quota-object";

/**
 * A quota namespace whose objects are the real ledger behind a call log: what `TenantQuota` does, minus the
 * Durable Object (its RPC is what leases save, so the tests count the calls).
 */
function fakeQuotaNamespace(now: () => number) {
  const ledgers = new Map<string, QuotaLedger>();
  const calls: { method: "admit" | "adjust" | "returnLease"; args: unknown[] }[] = [];
  const ledgerOf = (name: string) => {
    const ledger = ledgers.get(name) ?? new QuotaLedger();
    ledgers.set(name, ledger);
    return ledger;
  };
  const namespace = {
    getByName(name: string) {
      const ledger = ledgerOf(name);
      const giveBack = (limits: QuotaLimits, returned: LeaseReturn) =>
        ledger.adjust(limits, returned.leftover.requests, returned.leftover.tokens, now());
      return {
        async admit(limits: QuotaLimits, tokens: number, lease?: { want?: QuotaUnits; returned?: LeaseReturn }) {
          calls.push({ method: "admit", args: [limits, tokens, lease] });
          if (lease?.returned) giveBack(limits, lease.returned);
          return ledger.admit(limits, tokens, now(), lease?.want);
        },
        async adjust(limits: QuotaLimits, requests: number, tokens: number) {
          calls.push({ method: "adjust", args: [limits, requests, tokens] });
          return ledger.adjust(limits, requests, tokens, now());
        },
        async returnLease(limits: QuotaLimits, returned: LeaseReturn) {
          calls.push({ method: "returnLease", args: [limits, returned] });
          giveBack(limits, returned);
        },
      };
    },
  };
  const count = (method: string) => calls.filter((call) => call.method === method).length;
  /** The lease argument (`want`, `returned`) of the n-th `admit` call. */
  const leaseArgOfAdmit = (n: number) =>
    (calls.filter((call) => call.method === "admit")[n]?.args[2] ?? {}) as {
      want?: QuotaUnits;
      returned?: LeaseReturn;
    };
  return {
    namespace: namespace as unknown as DurableObjectNamespace<TenantQuota>,
    calls,
    count,
    ledgerOf,
    leaseArgOfAdmit,
  };
}

function plan(name: string, requestsPerMinute?: number, tokensPerMinute?: number): TenantPlan {
  return {
    name,
    weight: 1,
    priority: "interactive",
    allowPriorityTier: false,
    ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}),
    ...(tokensPerMinute !== undefined ? { tokensPerMinute } : {}),
  } as TenantPlan;
}

function charged(outcome: QuotaOutcome): QuotaCharge {
  if (outcome.kind !== "charged") throw new Error(`refused: ${outcome.response.status}`);
  return outcome.charge;
}

describe("chargeQuota with leases", () => {
  let quota: ReturnType<typeof fakeQuotaNamespace>;
  let pending: Promise<unknown>[];
  let clockMs = 0;
  const now = () => clockMs;
  const charge = (p: TenantPlan, tokens: number, leaseMs = 1000) =>
    chargeQuota({ plan: p, tokens, namespace: quota.namespace, leaseMs, now, waitUntil: (x) => pending.push(x) });

  beforeEach(() => {
    clockMs = 0;
    forgetLeasesForTesting();
    quota = fakeQuotaNamespace(now);
    pending = [];
  });

  it("a large tenant's admissions are served from the lease: one quota call for many requests", async () => {
    const big = plan("big", 6000);
    const remaining: number[] = [];
    for (let i = 0; i < 50; i++)
      remaining.push(Number(charged(await charge(big, 10)).headers["x-ratelimit-remaining-requests"]));
    expect(quota.count("admit")).toBe(1);
    // The headers count down as the lease is spent (the bucket's level plus what the lease holds).
    expect(remaining[0]).toBe(5999);
    expect(remaining[49]).toBe(5950);
  });

  it("a small tenant (30 per minute) is charged request by request; the 31st is refused exactly", async () => {
    const small = plan("small", 30);
    for (let i = 0; i < 30; i++) charged(await charge(small, 10));
    const refused = await charge(small, 10);
    expect(quota.count("admit")).toBe(31);
    expect(refused.kind).toBe("refused");
    if (refused.kind !== "refused") return;
    expect(refused.response.status).toBe(429);
    expect(refused.response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(refused.response.headers.get("retry-after-ms")).toBe("2000");
    expect(refused.response.headers.get("retry-after")).toBe("2");
  });

  it("a leased tenant is admitted exactly up to its quota, and refused by the object with the exact wait", async () => {
    const leased = plan("leased", 240); // a lease of 4 requests a second
    let admitted = 0;
    let refusal: Response | undefined;
    for (let i = 0; i < 300 && !refusal; i++) {
      const outcome = await charge(leased, 0);
      if (outcome.kind === "charged") admitted += 1;
      else refusal = outcome.response;
    }
    expect(admitted).toBe(240);
    expect(refusal?.status).toBe(429);
    expect(refusal?.headers.get("retry-after-ms")).toBe("250");
    expect(refusal?.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(quota.count("admit")).toBeLessThan(100);
  });

  it("a refund or a usage correction of a leased admission goes onto the lease, not to the object", async () => {
    const big = plan("big", 6000, 6_000_000);
    const first = charged(await charge(big, 500));
    charged(await charge(big, 500)); // the second, served from the lease and kept
    const third = charged(await charge(big, 500));
    third.refund();
    first.settle(200);
    expect(quota.count("adjust")).toBe(0);
    expect(pending).toHaveLength(0);
    // The lease's leftovers (refund and correction included) go back when it expires and the next request asks.
    clockMs = 1000;
    charged(await charge(big, 500));
    // Granted 100 requests / 100000 tokens beside the first request; the second and third were served from it
    // (500 each), the third refunded (+1, +500); the first's answer used 200 of its 500 (+300).
    expect(quota.leaseArgOfAdmit(1).returned).toEqual({
      leftover: { requests: 99, tokens: 99_800 },
      served: 2,
      tokensCharged: 1000,
      tokensRefunded: 800,
    });
  });

  it("a refund that would make the lease hold more than its grant goes to the object, whose bucket caps it", async () => {
    // A tenant of 60000 tokens a minute: a lease holds 1000 (a second's refill). A 30000-token request is too
    // large to lease beside, so the object admits it; its answer uses nothing. Parked on the lease, the refund
    // would let the tenant spend 30000 tokens beyond a full bucket and the lease's grant.
    const tenant = plan("t", 6000, 60_000);
    const large = charged(await charge(tenant, 30_000));
    clockMs = 40_000; // the bucket is full again
    charged(await charge(tenant, 10)); // brings a lease of 1000 tokens, untouched
    large.settle(0);
    expect(quota.count("adjust")).toBe(1);
    expect(quota.calls.at(-1)?.args).toEqual([{ requestsPerMinute: 6000, tokensPerMinute: 60_000 }, 0, 30_000]);
    // The lease still holds what it was granted, no more: a 20000-token request is the object's to admit.
    charged(await charge(tenant, 20_000));
    expect(quota.count("admit")).toBe(3);
  });

  it("a correction after the lease expired goes to the object", async () => {
    const big = plan("big", 6000);
    const admittedCharge = charged(await charge(big, 10));
    clockMs = 5000;
    admittedCharge.refund();
    expect(quota.count("adjust")).toBe(1);
    expect(quota.calls.at(-1)?.args).toEqual([{ requestsPerMinute: 6000 }, 1, 10]);
  });

  it("a request the lease does not cover gives its leftovers back and is charged by the object", async () => {
    const big = plan("big", 6000, 60_000); // a lease of 1000 tokens a second
    charged(await charge(big, 100)); // granted: 100 requests, 1000 tokens
    charged(await charge(big, 100)); // from the lease
    const outcome = await charge(big, 5000); // more than the lease holds
    expect(outcome.kind).toBe("charged");
    expect(quota.count("admit")).toBe(2);
    expect(quota.leaseArgOfAdmit(1).returned).toEqual({
      leftover: { requests: 99, tokens: 900 },
      served: 1,
      tokensCharged: 100,
      tokensRefunded: 0,
    });
    // 60000 - 100 (the first) - 1000 (its lease) + 900 (returned) - 5000; a 5000-token request is too large to
    // lease beside (leaseWant), so none is taken with it.
    expect(
      quota.ledgerOf("big").adjust({ requestsPerMinute: 6000, tokensPerMinute: 60_000 }, 0, 0, 0).tokens?.remaining,
    ).toBe(54_800);
  });

  it("a changed plan drops the old lease: the new limits are charged afresh", async () => {
    charged(await charge(plan("big", 6000), 10));
    charged(await charge(plan("big", 12_000), 10));
    expect(quota.count("admit")).toBe(2);
    expect(quota.leaseArgOfAdmit(1).returned).toBeUndefined();
  });

  it("misses while a lease call is in flight are charged exactly, without asking for another lease", async () => {
    const big = plan("big", 6000);
    const outcomes = await Promise.all([charge(big, 10), charge(big, 10), charge(big, 10)]);
    for (const outcome of outcomes) expect(outcome.kind).toBe("charged");
    expect(quota.count("admit")).toBe(3);
    expect(quota.leaseArgOfAdmit(0).want).toEqual({ requests: 100 });
    expect(quota.leaseArgOfAdmit(1).want).toBeUndefined();
    expect(quota.leaseArgOfAdmit(2).want).toBeUndefined();
    // The one lease granted serves what comes next.
    charged(await charge(big, 10));
    expect(quota.count("admit")).toBe(3);
  });

  it("a lease call that never answered (its request cancelled) stops blocking new leases after a while", async () => {
    const big = plan("big", 6000);
    const stuck = { ...quota.namespace.getByName("big"), admit: () => new Promise<never>(() => {}) };
    const hanging = chargeQuota({
      plan: big,
      tokens: 10,
      namespace: { getByName: () => stuck } as unknown as DurableObjectNamespace<TenantQuota>,
      leaseMs: 1000,
      now,
      waitUntil: (x) => pending.push(x),
    });
    void hanging;
    charged(await charge(big, 10));
    expect(quota.leaseArgOfAdmit(0).want).toBeUndefined();
    clockMs = 10_000;
    charged(await charge(big, 10));
    expect(quota.leaseArgOfAdmit(1).want).toEqual({ requests: 100 });
  });

  it("a lease near its end is renewed ahead by one request while the others keep spending it", async () => {
    const big = plan("big", 6000);
    charged(await charge(big, 10)); // granted 100 requests until 1000 ms
    clockMs = 800; // a quarter of its time left
    const renewal = charge(big, 10); // asks for the next lease, the open one staying open
    const meanwhile = await Promise.all([charge(big, 10), charge(big, 10)]);
    for (const outcome of meanwhile) charged(outcome);
    charged(await renewal);
    expect(quota.count("admit")).toBe(2);
    expect(quota.leaseArgOfAdmit(1)).toEqual({ want: { requests: 100 }, returned: undefined });
    // The old lease's leftovers went back when the new one arrived: 100 - the two served meanwhile.
    expect(quota.count("returnLease")).toBe(1);
    expect(quota.calls.find((call) => call.method === "returnLease")?.args[1]).toEqual({
      leftover: { requests: 98, tokens: 0 },
      served: 2,
      tokensCharged: 20,
      tokensRefunded: 0,
    });
    // The new lease serves what comes next, past the old one's end.
    clockMs = 1500;
    charged(await charge(big, 10));
    expect(quota.count("admit")).toBe(2);
  });

  it("a correction of an admission whose lease was renewed goes onto the new lease, not to the object", async () => {
    const big = plan("big", 6000, 6_000_000);
    const early = charged(await charge(big, 500)); // brought the first lease
    const onOldLease = charged(await charge(big, 500));
    clockMs = 800;
    charged(await charge(big, 500)); // renewed ahead: a new lease, the old one closed
    charged(await charge(big, 500)); // served from the new lease, as the next one is
    charged(await charge(big, 500));
    onOldLease.settle(200);
    early.refund();
    expect(quota.count("adjust")).toBe(0);
    // They went back with the new lease, when it closed: 100 requests / 100000 tokens granted, two of 500 served
    // from it, then +300 tokens (used 200 of 500), +1 request and 500 (never more than it was granted).
    clockMs = 5000;
    charged(await charge(big, 500));
    expect(quota.leaseArgOfAdmit(2).returned).toMatchObject({
      leftover: { requests: 99, tokens: 99_800 },
      tokensRefunded: 800,
    });
  });

  it("renewing ahead, a refusal by the object falls back on what the open lease still holds", async () => {
    const big = plan("big", 6000);
    const limits = { requestsPerMinute: 6000 };
    charged(await charge(big, 10)); // granted 100 requests until 1000 ms
    clockMs = 800;
    // Other isolates take everything left in the bucket.
    const ledger = quota.ledgerOf("big");
    ledger.adjust(limits, -(ledger.adjust(limits, 0, 0, clockMs).requests?.remaining ?? 0), 0, clockMs);
    const outcome = await charge(big, 10);
    expect(quota.count("admit")).toBe(2);
    expect(outcome.kind).toBe("charged");
    expect(quota.count("returnLease")).toBe(0);
  });

  it("without lease time every request asks the object", async () => {
    const big = plan("big", 6000);
    for (let i = 0; i < 5; i++) charged(await charge(big, 10, 0));
    expect(quota.count("admit")).toBe(5);
  });
});
