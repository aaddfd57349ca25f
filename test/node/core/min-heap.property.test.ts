import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MinHeap } from "../../../src/core/min-heap";
import { propertyRuns } from "../../support/property-runs";

/**
 * `MinHeap` (the due instants of the core's schedules) against a plain list: under arbitrary pushes, pops and peeks
 * of items whose keys repeat, sit at the edges of the number line (`-Infinity`, `Infinity`, -0, fractions, the
 * largest safe integers), `peek` is an item of the smallest key left in place, `pop` removes and returns one such
 * item (the very object pushed; of equal keys any, as documented), `size` counts what is left, and an empty heap
 * answers `undefined`. Every item pushed comes out exactly once, unless `retain` dropped it first.
 */

const runs = propertyRuns(300, 20261206);

const key = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  fc.constantFrom(
    Number.NEGATIVE_INFINITY,
    Number.POSITIVE_INFINITY,
    -0,
    0,
    0.1,
    0.30000000000000004,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
  ),
);
/** A key as compared (-0 and 0 are the same key: `<` does not tell them apart, `Object.is` would). */
const asCompared = (k: number | undefined) => (k === 0 ? 0 : k);

type Op =
  | { kind: "push"; key: number }
  | { kind: "pop" }
  | { kind: "peek" }
  /** `retain` of the items whose id is not `drop` modulo `mod`. */
  | { kind: "retain"; mod: number; drop: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("push" as const), key }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("pop" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("peek" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("retain" as const),
      mod: fc.integer({ min: 1, max: 4 }),
      drop: fc.integer({ min: 0, max: 3 }),
    }),
  },
);

describe("MinHeap against a list", () => {
  it("peeks and pops an item of the smallest key, each pushed item exactly once (or never, once `retain` drops it)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200, size: "max" }), (ops) => {
        const heap = new MinHeap<{ key: number; id: number }>((item) => item.key);
        let left: { key: number; id: number }[] = [];
        let id = 0;
        const popped = new Set<number>();
        for (const o of ops) {
          const smallest = asCompared(left.length === 0 ? undefined : Math.min(...left.map((item) => item.key)));
          if (o.kind === "push") {
            const item = { key: o.key, id: id++ };
            heap.push(item);
            left.push(item);
          } else if (o.kind === "retain") {
            const keep = (item: { id: number }) => item.id % o.mod !== o.drop;
            heap.retain(keep);
            left = left.filter(keep);
          } else if (o.kind === "peek") {
            const top = heap.peek();
            expect(asCompared(top?.key)).toBe(smallest);
            if (top !== undefined) expect(left).toContain(top);
          } else {
            const top = heap.pop();
            expect(asCompared(top?.key)).toBe(smallest);
            if (top !== undefined) {
              expect(left).toContain(top);
              expect(popped.has(top.id)).toBe(false);
              popped.add(top.id);
              left = left.filter((item) => item !== top);
            }
          }
          expect(heap.size).toBe(left.length);
        }
        // What is left comes out in order, then nothing.
        const rest: number[] = [];
        for (let top = heap.pop(); top !== undefined; top = heap.pop()) rest.push(asCompared(top.key) as number);
        expect(rest).toEqual(left.map((item) => asCompared(item.key) as number).sort((a, b) => a - b));
        expect(heap.size).toBe(0);
        expect(heap.peek()).toBeUndefined();
      }),
      runs,
    );
  });
});
