import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { randomDataset } from "../../../src/bench/dataset";
import { propertyRuns } from "../../support/property-runs";

// bench_serving's random dataset (sample_random_requests) draws
//   input_lens  = np.random.randint(max(int(input_len * range_ratio), 1), input_len + 1)
//   output_lens = np.random.randint(int(output_len * range_ratio), output_len + 1)
// i.e. uniform integers in [lo, len]. Ours keeps outputs at 1 token or more (a request for 0 tokens is refused by
// an OpenAI-style server), so both bounds below are max(int(len * ratio), 1).
const lowest = (len: number, ratio: number) => Math.max(Math.trunc(len * ratio), 1);

const options = fc.record({
  numPrompts: fc.integer({ min: 1, max: 40 }),
  inputLen: fc.integer({ min: 1, max: 300 }),
  outputLen: fc.integer({ min: 1, max: 300 }),
  rangeRatio: fc.oneof(fc.constantFrom(0, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
  seed: fc.integer(),
  format: fc.constantFrom("ids" as const, "text" as const),
});

describe("randomDataset against bench_serving's --random-input-len / --random-output-len / --random-range-ratio", () => {
  it("draws every length from [max(int(len * ratio), 1), len], replays from its seed, and sends the drawn length", () => {
    fc.assert(
      fc.property(options, (o) => {
        const prompts = randomDataset(o);
        expect(prompts).toHaveLength(o.numPrompts);
        expect(randomDataset(o)).toEqual(prompts);
        for (const p of prompts) {
          expect(Number.isInteger(p.promptLen) && Number.isInteger(p.outputLen)).toBe(true);
          expect(p.promptLen).toBeGreaterThanOrEqual(lowest(o.inputLen, o.rangeRatio));
          expect(p.promptLen).toBeLessThanOrEqual(o.inputLen);
          expect(p.outputLen).toBeGreaterThanOrEqual(lowest(o.outputLen, o.rangeRatio));
          expect(p.outputLen).toBeLessThanOrEqual(o.outputLen);
          if (o.format === "ids") {
            expect(p.prompt).toHaveLength(p.promptLen);
            expect((p.prompt as number[]).every((id) => Number.isInteger(id) && id >= 0 && id < 100_000)).toBe(true);
          } else {
            expect((p.prompt as string).split(" ")).toHaveLength(p.promptLen);
          }
        }
      }),
      propertyRuns(200, 20261206),
    );
  });

  it("reaches every length of the range, both ends included (uniform integers, not a narrower range)", () => {
    for (const [len, ratio] of [
      [8, 0],
      [10, 0.5],
      [7, 0.3],
    ] as const) {
      const prompts = randomDataset({
        numPrompts: 600,
        inputLen: len,
        outputLen: len,
        rangeRatio: ratio,
        seed: 5,
        format: "ids",
      });
      const expected = Array.from({ length: len - lowest(len, ratio) + 1 }, (_, i) => lowest(len, ratio) + i);
      expect([...new Set(prompts.map((p) => p.promptLen))].sort((a, b) => a - b)).toEqual(expected);
      expect([...new Set(prompts.map((p) => p.outputLen))].sort((a, b) => a - b)).toEqual(expected);
      // Uniform: with 600 draws over at most 8 values, each value is drawn at least a third of its share.
      for (const v of expected) {
        const count = prompts.filter((p) => p.promptLen === v).length;
        expect(count).toBeGreaterThan(600 / expected.length / 3);
      }
    }
  });
});
