import { describe, expect, it, vi } from "vitest";
import { tenantsSchema } from "../../src/edge/tenant-config";
import {
  bearerKey,
  hashApiKey,
  PLAN_READ_STALE_MS,
  PlanCache,
  type PlanStore,
  resolveTenant,
} from "../../src/edge/tenant-resolver";

function countingStore(records: Record<string, string>): PlanStore & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    async get(key) {
      reads.push(key);
      return Object.hasOwn(records, key) ? (records[key] as string) : null;
    },
  };
}

/**
 * A KV namespace whose reads wait for the test: each `get` is counted and held until the test calls `release()`
 * (which answers the held reads with the records, and every later one at once) or `fail(error)` (which fails the
 * held reads; later ones are held again).
 */
function gatedStore(records: Record<string, string>) {
  const reads: string[] = [];
  const held: { answer: () => void; fail: (error: Error) => void }[] = [];
  let open = false;
  return {
    reads,
    get(key: string): Promise<string | null> {
      reads.push(key);
      return new Promise((resolve, reject) => {
        const answer = () => resolve(Object.hasOwn(records, key) ? (records[key] as string) : null);
        if (open) answer();
        else held.push({ answer, fail: reject });
      });
    },
    release() {
      open = true;
      for (const read of held.splice(0)) read.answer();
    },
    fail(error: Error) {
      for (const read of held.splice(0)) read.fail(error);
    },
  };
}

describe("tenant resolver", () => {
  it("hashes with SHA-256 in lower-case hex (the digest sha256sum prints)", async () => {
    expect(await hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("reads a bearer key; anything else is no key (undefined) or not a key (null)", () => {
    expect(bearerKey("Bearer sk-1")).toBe("sk-1");
    expect(bearerKey("bearer  sk-1 ")).toBe("sk-1");
    expect(bearerKey(undefined)).toBeUndefined();
    for (const bad of ["Basic abc", "Bearer", "Bearer ", "Bearer a b", `Bearer ${"k".repeat(513)}`, "Bearer \u00e9"])
      expect(bearerKey(bad)).toBeNull();
  });

  it("config keys first, then KV (cached for the TTL, unknown keys too); malformed KV records are unknown", async () => {
    const acme = await hashApiKey("sk-acme");
    const broken = await hashApiKey("sk-broken");
    const configured = await hashApiKey("sk-config");
    const tenants = tenantsSchema.parse({ keys: { [configured]: { name: "configured" } }, kvCacheTtlS: 30 });
    const store = countingStore({ [acme]: JSON.stringify({ name: "acme", weight: 2 }), [broken]: "{not json" });
    const cache = new PlanCache();
    const resolve = (key: string, now: number) => resolveTenant(`Bearer ${key}`, tenants, store, now, cache);

    expect(await resolve("sk-config", 0)).toMatchObject({ kind: "tenant", plan: { name: "configured" } });
    expect(store.reads).toHaveLength(0);
    expect(await resolve("sk-acme", 0)).toMatchObject({ kind: "tenant", plan: { name: "acme", weight: 2 } });
    expect(await resolve("sk-acme", 29_000)).toMatchObject({ plan: { name: "acme" } });
    expect(store.reads).toEqual([acme]);
    await resolve("sk-acme", 30_001);
    expect(store.reads).toEqual([acme, acme]);
    expect(await resolve("sk-broken", 0)).toMatchObject({ plan: { name: "anonymous" } });
    await resolve("sk-broken", 1);
    expect(store.reads.filter((k) => k === broken)).toHaveLength(1);
    // Only digests are ever looked up.
    for (const key of store.reads) expect(key).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a malformed KV record is an unknown key, and one error line says why, naming the field, not the hash", async () => {
    const spaced = await hashApiKey("sk-spaced");
    const broken = await hashApiKey("sk-broken");
    const store = countingStore({ [spaced]: JSON.stringify({ name: "acme corp" }), [broken]: "{not json" });
    const tenants = tenantsSchema.parse({ requireKey: true, kvCacheTtlS: 30 });
    const cache = new PlanCache();
    const printed: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => printed.push(String(line)));
    try {
      for (const now of [0, 1]) {
        expect((await resolveTenant("Bearer sk-spaced", tenants, store, now, cache)).kind).toBe("unauthorized");
        expect((await resolveTenant("Bearer sk-broken", tenants, store, now, cache)).kind).toBe("unauthorized");
      }
    } finally {
      spy.mockRestore();
    }
    // One line per read (the unknown key is then cached for the TTL), each naming what is wrong.
    expect(printed.map((line) => JSON.parse(line))).toEqual([
      {
        event: "spillway.tenant_record_invalid",
        keyHashPrefix: spaced.slice(0, 8),
        message: expect.stringMatching(/^name: tenant names use/),
      },
      {
        event: "spillway.tenant_record_invalid",
        keyHashPrefix: broken.slice(0, 8),
        message: expect.stringMatching(/^not JSON: /),
      },
    ]);
    for (const line of printed) for (const hash of [spaced, broken]) expect(line).not.toContain(hash);
    // A record that is simply absent is no one's mistake: no line.
    await resolveTenant("Bearer sk-absent", tenants, store, 0, cache);
    expect(printed).toHaveLength(2);
  });

  it("keys required: a missing or unknown key is unauthorized, and the message never echoes the key", async () => {
    const tenants = tenantsSchema.parse({ requireKey: true });
    const none = await resolveTenant(undefined, tenants, undefined);
    expect(none.kind).toBe("unauthorized");
    const unknown = await resolveTenant("Bearer sk-secret-123", tenants, undefined);
    expect(unknown.kind === "unauthorized" && unknown.message).not.toContain("sk-secret-123");
  });

  it("the plan cache stays bounded", async () => {
    const cache = new PlanCache(3);
    const store = countingStore({});
    for (const hash of ["a", "b", "c", "d"]) await cache.get(store, hash, 0, 60_000);
    await cache.get(store, "a", 1, 60_000);
    expect(store.reads).toEqual(["a", "b", "c", "d", "a"]);
  });

  it.each([
    ["a key KV knows (a new customer's burst)", true],
    ["a key KV does not know", false],
  ])("concurrent lookups of one uncached key share one KV read: %s", async (_, known) => {
    const hash = await hashApiKey("sk-newcomer");
    const tenants = tenantsSchema.parse({ kvCacheTtlS: 30 });
    const store = gatedStore(known ? { [hash]: JSON.stringify({ name: "newcomer" }) } : {});
    const cache = new PlanCache();
    const burst = Array.from({ length: 20 }, () => resolveTenant("Bearer sk-newcomer", tenants, store, 0, cache));
    // Let the burst hash its key and reach the cache before the read is answered (a lookup that came later would
    // find the answer cached: one read either way).
    await Promise.all(burst.map(() => hashApiKey("sk-newcomer")));
    store.release();
    const name = known ? "newcomer" : "anonymous";
    for (const who of await Promise.all(burst)) expect(who).toMatchObject({ kind: "tenant", plan: { name } });
    expect(store.reads).toEqual([hash]);
    // The shared read's answer is cached for the TTL like any other.
    await resolveTenant("Bearer sk-newcomer", tenants, store, 29_000, cache);
    expect(store.reads).toEqual([hash]);
  });

  it("a failed KV read fails every lookup waiting on it, is not cached, and the next lookup reads again", async () => {
    const hash = await hashApiKey("sk-acme");
    const tenants = tenantsSchema.parse({ kvCacheTtlS: 30 });
    const store = gatedStore({ [hash]: JSON.stringify({ name: "acme" }) });
    const cache = new PlanCache();
    const resolve = () => resolveTenant("Bearer sk-acme", tenants, store, 0, cache);
    const burst = Array.from({ length: 5 }, resolve);
    await Promise.all(burst.map(() => hashApiKey("sk-acme")));
    store.fail(new Error("KV GET failed: 503"));
    for (const result of await Promise.allSettled(burst))
      expect(result).toMatchObject({ status: "rejected", reason: { message: "KV GET failed: 503" } });
    expect(store.reads).toEqual([hash]);

    const retry = resolve();
    store.release();
    expect(await retry).toMatchObject({ kind: "tenant", plan: { name: "acme" } });
    expect(store.reads).toEqual([hash, hash]);
    expect(await resolve()).toMatchObject({ kind: "tenant", plan: { name: "acme" } });
    expect(store.reads).toEqual([hash, hash]);
  });

  it("a KV store that throws instead of rejecting does not poison later lookups either", async () => {
    let reads = 0;
    const store: PlanStore = {
      get() {
        reads++;
        if (reads === 1) throw new Error("binding gone");
        return Promise.resolve(null);
      },
    };
    const cache = new PlanCache();
    await expect(cache.get(store, "a", 0, 30_000)).rejects.toThrow("binding gone");
    expect(await cache.get(store, "a", 0, 30_000)).toBeUndefined();
    expect(await cache.get(store, "a", 1, 30_000)).toBeUndefined();
    expect(reads).toBe(2);
  });

  // workerd never settles the I/O of a request that was cancelled (its client went away): a KV read that request
  // started, shared with later lookups of its key, stays pending for good.
  const hungThenAnswering = (records: Record<string, string>) => {
    const reads: string[] = [];
    const store: PlanStore = {
      get(key) {
        reads.push(key);
        const answered = reads.filter((k) => k === key).length > 1;
        return answered ? Promise.resolve(records[key] ?? null) : new Promise(() => {});
      },
    };
    return { reads, store };
  };
  /** The promise's value once every microtask has run, or "pending". */
  const settledValue = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), 0))]);

  it("a KV read that never settles holds later lookups of its key for PLAN_READ_STALE_MS at most", async () => {
    const { reads, store } = hungThenAnswering({ a: JSON.stringify({ name: "acme" }) });
    const cache = new PlanCache();
    expect(await settledValue(cache.get(store, "a", 0, 30_000))).toBe("pending");
    expect(await settledValue(cache.get(store, "a", PLAN_READ_STALE_MS - 1, 30_000))).toBe("pending");
    expect(reads).toEqual(["a"]); // shared while it may still be a slow read
    expect(await settledValue(cache.get(store, "a", PLAN_READ_STALE_MS, 30_000))).toMatchObject({ name: "acme" });
    expect(reads).toEqual(["a", "a"]);
    expect(cache.readsInFlight).toBe(0);
  });

  it("reads that never settle do not pile up: too old or past the bound, they are forgotten", async () => {
    const { store } = hungThenAnswering({});
    const small = new PlanCache(8, 4);
    for (let i = 0; i < 100; i++) void small.get(store, `bad-${i}`, 0, 30_000);
    expect(small.readsInFlight).toBe(4);
    const cache = new PlanCache(); // the isolate's size
    for (let i = 0; i < 500; i++) void cache.get(store, `bad-${i}`, i, 30_000);
    expect(cache.readsInFlight).toBe(500);
    // A lookup of another key after PLAN_READ_STALE_MS: every read older than that is gone.
    void cache.get(store, "later", 499 + PLAN_READ_STALE_MS, 30_000);
    expect(cache.readsInFlight).toBe(1);
  });

  it("a flood of more distinct unknown keys than the cache holds does not evict a known tenant", async () => {
    const acme = await hashApiKey("sk-acme");
    const tenants = tenantsSchema.parse({ requireKey: true, kvCacheTtlS: 30 });
    const store = countingStore({ [acme]: JSON.stringify({ name: "acme" }) });
    const cache = new PlanCache(); // the isolate's size: 4096
    expect(await resolveTenant("Bearer sk-acme", tenants, store, 0, cache)).toMatchObject({ plan: { name: "acme" } });
    for (let i = 0; i < 5000; i++) {
      const who = await resolveTenant(`Bearer sk-bad-${i}`, tenants, store, 1, cache);
      expect(who.kind).toBe("unauthorized");
    }
    expect(store.reads).toHaveLength(5001);
    expect(await resolveTenant("Bearer sk-acme", tenants, store, 2, cache)).toMatchObject({ plan: { name: "acme" } });
    expect(store.reads.filter((hash) => hash === acme)).toHaveLength(1);
    // The latest unknown keys are still remembered: a bad key repeated at once costs no read.
    await resolveTenant("Bearer sk-bad-4999", tenants, store, 3, cache);
    expect(store.reads).toHaveLength(5001);
  });
});
