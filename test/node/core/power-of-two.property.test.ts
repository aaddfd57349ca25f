import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chooseTwo, pickShortestAccepting } from "../../../src/core/power-of-two";
import { propertyRuns } from "../../support/property-runs";

/**
 * Power of two choices (the spec's "Routing" paragraph, /work/shared/spec/retry-after.md) against its rule:
 *
 * - `chooseTwo`: every replica when there are at most two (drawing nothing); else two distinct replicas, the first
 *   at `floor(u1 * n)`, the second the `floor(u2 * (n - 1))`-th of the others in order (two draws exactly), for
 *   every draw in [0, 1) (0, and the largest double below 1, included); over a grid of draws every ordered pair of
 *   distinct replicas comes up equally often (uniform);
 * - `pickShortestAccepting`: of the candidates that accept, the one with the shortest queue, the first of equals;
 *   `undefined` when none accepts (unknown queue lengths are `Infinity`, as `RouterCore` passes them).
 */

const runs = propertyRuns(500, 20261206);

/** The largest double below 1 (`Math.random`'s upper end). */
const BELOW_ONE = 1 - 2 ** -53;
const draw = fc.oneof(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.constantFrom(0, BELOW_ONE));

describe("chooseTwo", () => {
  it("picks the documented pair of distinct replicas from two draws", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), draw, draw, (n, u1, u2) => {
        const replicas = Array.from({ length: n }, (_, i) => `r${i}`);
        const draws = [u1, u2];
        let drawn = 0;
        const pair = chooseTwo(replicas, () => {
          drawn += 1;
          return draws.shift() ?? 0;
        });
        if (n <= 2) {
          expect(pair).toEqual(replicas);
          expect(drawn).toBe(0);
          return;
        }
        const first = Math.floor(u1 * n);
        const others = replicas.filter((_, i) => i !== first);
        expect(pair).toEqual([replicas[first], others[Math.floor(u2 * (n - 1))]]);
        expect(new Set(pair).size).toBe(2);
        expect(drawn).toBe(2);
      }),
      runs,
    );
  });

  it("is uniform over ordered pairs of distinct replicas", () => {
    for (let n = 3; n <= 7; n++) {
      const replicas = Array.from({ length: n }, (_, i) => `r${i}`);
      const seen = new Map<string, number>();
      // Each first draw in the middle of one of n equal cells, each second in one of n - 1.
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n - 1; j++) {
          const draws = [(i + 0.5) / n, (j + 0.5) / (n - 1)];
          const key = chooseTwo(replicas, () => draws.shift() as number).join(",");
          seen.set(key, (seen.get(key) ?? 0) + 1);
        }
      expect(seen.size).toBe(n * (n - 1));
      expect([...seen.values()].every((count) => count === 1)).toBe(true);
    }
  });
});

describe("pickShortestAccepting", () => {
  it("takes the first accepting candidate with the shortest queue, none when none accepts", () => {
    const length = fc.oneof(fc.nat(5), fc.constant(Number.POSITIVE_INFINITY));
    fc.assert(
      fc.property(fc.array(fc.tuple(length, fc.boolean()), { maxLength: 6 }), (candidates) => {
        const names = candidates.map((_, i) => `r${i}`);
        const lengthOf = (r: string) => (candidates[Number(r.slice(1))] as [number, boolean])[0];
        const accepts = (r: string) => (candidates[Number(r.slice(1))] as [number, boolean])[1];
        const accepting = names.filter(accepts);
        const shortest = Math.min(...accepting.map(lengthOf));
        expect(pickShortestAccepting(names, lengthOf, accepts)).toBe(accepting.find((r) => lengthOf(r) === shortest));
      }),
      runs,
    );
  });
});
