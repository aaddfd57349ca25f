import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MinHeap } from "../../../src/core/min-heap";

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
    );
  });
});
