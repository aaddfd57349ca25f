import { describe, expect, it } from "vitest";
import { tenantsSchema } from "../../src/edge/tenant-config";
import { bearerKey, hashApiKey, PlanCache, type PlanStore, resolveTenant } from "../../src/edge/tenant-resolver";

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
});
