import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MinHeap } from "../../../src/core/min-heap";
import { propertyRuns } from "../../support/property-runs";

describe("MinHeap", () => {
  it("pops any pushed keys in ascending order, interleaved pushes and pops included", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant("pop" as const))), (ops) => {
        const heap = new MinHeap<{ key: number }>((item) => item.key);
        const model: number[] = [];
        for (const op of ops) {
          if (op === "pop") {
            model.sort((a, b) => a - b);
            expect(heap.pop()?.key).toBe(model.shift());
          } else {
            heap.push({ key: op });
            model.push(op);
          }
          expect(heap.size).toBe(model.length);
          expect(heap.peek()?.key).toBe(model.length > 0 ? Math.min(...model) : undefined);
        }
      }),
      propertyRuns(100, 20261207),
    );
  });
});

describe("MinHeap and keys that do not order", () => {
  it("refuses a NaN key with a RangeError and keeps its order", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 })), fc.nat(), (keys, at) => {
        const heap = new MinHeap<number>((key) => key);
        const before = keys.slice(0, at % (keys.length + 1));
        for (const key of before) heap.push(key);
        expect(() => heap.push(Number.NaN)).toThrow(RangeError);
        for (const key of keys.slice(before.length)) heap.push(key);
        expect(heap.size).toBe(keys.length);
        const popped: number[] = [];
        for (let item = heap.pop(); item !== undefined; item = heap.pop()) popped.push(item);
        expect(popped).toEqual([...keys].sort((a, b) => a - b));
      }),
      propertyRuns(100, 20261207),
    );
  });

  it("orders the infinities like any other key", () => {
    const heap = new MinHeap<number>((key) => key);
    for (const key of [3, Number.POSITIVE_INFINITY, -2, Number.NEGATIVE_INFINITY, 0]) heap.push(key);
    const popped: number[] = [];
    for (let item = heap.pop(); item !== undefined; item = heap.pop()) popped.push(item);
    expect(popped).toEqual([Number.NEGATIVE_INFINITY, -2, 0, 3, Number.POSITIVE_INFINITY]);
  });
});
