import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../../src/bench/cli";
import { randomDataset } from "../../../src/bench/dataset";
import { retryDelayMs } from "../../../src/bench/retry-after";

describe("bench client pieces", () => {
  it("draws a seeded random dataset with lengths in [len * ratio, len]", () => {
    const a = randomDataset({ numPrompts: 50, inputLen: 100, outputLen: 40, rangeRatio: 0.5, seed: 3, format: "ids" });
    const b = randomDataset({ numPrompts: 50, inputLen: 100, outputLen: 40, rangeRatio: 0.5, seed: 3, format: "ids" });
    expect(a).toEqual(b);
    for (const p of a) {
      expect(p.promptLen).toBeGreaterThanOrEqual(50);
      expect(p.promptLen).toBeLessThanOrEqual(100);
      expect(p.outputLen).toBeGreaterThanOrEqual(20);
      expect(p.outputLen).toBeLessThanOrEqual(40);
      expect((p.prompt as number[]).length).toBe(p.promptLen);
    }
    const fixed = randomDataset({
      numPrompts: 4,
      inputLen: 256,
      outputLen: 512,
      rangeRatio: 1,
      seed: 1,
      format: "text",
    });
    expect(fixed.every((p) => p.promptLen === 256 && p.outputLen === 512 && typeof p.prompt === "string")).toBe(true);
  });

  it("prefers retry-after-ms, then Retry-After seconds or date", () => {
    expect(retryDelayMs(new Headers({ "retry-after-ms": "350", "retry-after": "1" }))).toBe(350);
    expect(retryDelayMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryDelayMs(new Headers({ "retry-after": new Date(10_000).toUTCString() }), 4000)).toBe(6000);
    expect(retryDelayMs(new Headers({ "retry-after": "soon" }))).toBeNull();
    expect(retryDelayMs(new Headers())).toBeNull();
  });

  it("parses bench_serving's flags and rejects bad ones by name", () => {
    const o = parseBenchArgs([
      "--base-url",
      "http://127.0.0.1:1",
      "--num-prompts",
      "32",
      "--max-concurrency",
      "16",
      "--random-input-len",
      "256",
      "--random-output-len",
      "512",
      "--random-range-ratio",
      "1",
      "--disable-ignore-eos",
      "--request-rate",
      "4",
    ]);
    expect(o).toMatchObject({
      numPrompts: 32,
      maxConcurrency: 16,
      ignoreEos: false,
      requestRate: 4,
      randomRangeRatio: 1,
    });
    expect(parseBenchArgs(["--base-url", "http://x:1"])).toMatchObject({
      numPrompts: 1000,
      requestRate: Number.POSITIVE_INFINITY,
      maxConcurrency: null,
      ignoreEos: true,
      warmupRequests: 1,
    });
    expect(parseBenchArgs(["--base-url", "http://x:1", "--warmup-requests", "0"])).toMatchObject({ warmupRequests: 0 });
    expect(() => parseBenchArgs(["--base-url", "http://x:1", "--warmup-requests", "-1"])).toThrow(/--warmup-requests/);
    expect(() => parseBenchArgs(["--base-url", "http://x:1", "--num-prompts", "zero"])).toThrow(/--num-prompts/);
    expect(() => parseBenchArgs(["--base-url", "http://x:1", "--max-concurrency", "0"])).toThrow(/--max-concurrency/);
    expect(() => parseBenchArgs(["--num-prompts", "3"])).toThrow(/--base-url/);
    expect(() => parseBenchArgs(["--base-url", "http://x:1", "--dataset-name", "sharegpt"])).toThrow(/random/);
    expect(() => parseBenchArgs(["--base-url", "http://x:1", "--bogus"])).toThrow(/bogus/);
  });
});
