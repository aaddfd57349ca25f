import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OTHER_TENANTS, type TenantCount, TenantCounters, topTenants } from "../../../src/core/tenant-counters";
import { propertyRuns } from "../../support/property-runs";

/**
 * `TenantCounters` and `topTenants` (the per-tenant admitted / shed counts a router keeps and the metrics show)
 * against models written from their JSDoc:
 *
 * - the first `maxTenants` tenants get their own entry, every later one is counted under `other`, as is a tenant
 *   named `other` (it has no entry of its own, so it takes no tenant's place); so at most `maxTenants + 1` entries;
 * - a snapshot is the counts as they are, and a copy (changing it changes nothing);
 * - `topTenants(counts, k)`: `k` tenants none of which has fewer decisions than any left out (ties either way),
 *   with their counts as they are, and every other count - the left-out tenants' and `other`'s - summed under
 *   `other` (absent when there is nothing to sum); nothing is lost or counted twice.
 */

const runs = propertyRuns(300, 20261205);

/** A few names (so they repeat), `other` among them, and names of Object.prototype's members. */
const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("a", "b", "c", "d", "e", "f") },
  { weight: 1, arbitrary: fc.constant(OTHER_TENANTS) },
  { weight: 1, arbitrary: fc.constantFrom("constructor", "toString", "__proto__", "") },
);
const kindArb = fc.constantFrom("admitted" as const, "shed" as const);

describe("TenantCounters against a model of its bound", () => {
  it("counts each of the first maxTenants tenants on its own, everything else under other", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.array(fc.tuple(nameArb, kindArb), { maxLength: 60, size: "max" }),
        (maxTenants, adds) => {
          const counters = new TenantCounters(maxTenants);
          const own: string[] = [];
          const model = new Map<string, TenantCount>();
          for (const [name, kind] of adds) {
            counters.add(name, kind);
            if (name !== OTHER_TENANTS && !own.includes(name) && own.length < maxTenants) own.push(name);
            const key = own.includes(name) ? name : OTHER_TENANTS;
            const count = model.get(key) ?? { admitted: 0, shed: 0 };
            count[kind] += 1;
            model.set(key, count);
            const snapshot = counters.snapshot();
            expect(new Map(Object.entries(snapshot))).toEqual(model);
            expect(Object.keys(snapshot).length).toBeLessThanOrEqual(maxTenants + 1);
            // A copy: changing it changes nothing.
            for (const count of Object.values(snapshot)) count.admitted += 100;
            expect(new Map(Object.entries(counters.snapshot()))).toEqual(model);
          }
        },
      ),
      runs,
    );
  });

  it('a tenant named other takes no tenant\'s place (it used to: with room for 1, "a" after "other" went under other)', () => {
    const counts = new TenantCounters(1);
    counts.add(OTHER_TENANTS, "admitted");
    counts.add("a", "shed");
    counts.add("b", "shed");
    expect(counts.snapshot()).toEqual({ other: { admitted: 1, shed: 1 }, a: { admitted: 0, shed: 1 } });
  });
});

describe("topTenants against a model of its ranking", () => {
  const countArb = fc.record({ admitted: fc.nat(20), shed: fc.nat(20) });

  it("keeps k tenants none busier left out, and sums every other count under other", () => {
    fc.assert(
      fc.property(fc.dictionary(nameArb, countArb, { maxKeys: 8 }), fc.integer({ min: 0, max: 10 }), (counts, k) => {
        const before = structuredClone(counts);
        const top = topTenants(counts, k);
        expect(counts).toEqual(before); // its input untouched
        const named = Object.keys(counts).filter((n) => n !== OTHER_TENANTS);
        const kept = Object.keys(top).filter((n) => n !== OTHER_TENANTS);
        const left = named.filter((n) => !kept.includes(n));
        const total = (c: TenantCount | undefined) => (c ? c.admitted + c.shed : 0);
        expect(kept.length).toBe(Math.min(k, named.length));
        for (const n of kept) {
          expect(named).toContain(n);
          expect(top[n]).toEqual(counts[n]);
          for (const l of left) expect(total(counts[n])).toBeGreaterThanOrEqual(total(counts[l]));
        }
        const rest = [
          ...left.map((n) => counts[n] as TenantCount),
          ...(counts[OTHER_TENANTS] ? [counts[OTHER_TENANTS]] : []),
        ];
        if (rest.length === 0) expect(Object.hasOwn(top, OTHER_TENANTS)).toBe(false);
        else
          expect(top[OTHER_TENANTS]).toEqual({
            admitted: rest.reduce((s, c) => s + c.admitted, 0),
            shed: rest.reduce((s, c) => s + c.shed, 0),
          });
        // Nothing lost or counted twice.
        const sum = (r: Record<string, TenantCount>, kind: keyof TenantCount) =>
          Object.values(r).reduce((s, c) => s + c[kind], 0);
        expect(sum(top, "admitted")).toBe(sum(counts, "admitted"));
        expect(sum(top, "shed")).toBe(sum(counts, "shed"));
      }),
      runs,
    );
  });
});
