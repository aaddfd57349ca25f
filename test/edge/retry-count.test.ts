import { describe, expect, it } from "vitest";
import { isRetry } from "../../src/edge/retry-count";

describe("x-stainless-retry-count", () => {
  it("a whole number >= 1 marks a retry; absent, 0 or garbage does not", () => {
    expect(isRetry("1")).toBe(true);
    expect(isRetry("2")).toBe(true);
    expect(isRetry(" 3 ")).toBe(true);
    expect(isRetry(undefined)).toBe(false);
    expect(isRetry("0")).toBe(false);
    expect(isRetry("")).toBe(false);
    expect(isRetry("-1")).toBe(false);
    expect(isRetry("1.5")).toBe(false);
    expect(isRetry("yes")).toBe(false);
  });
});
