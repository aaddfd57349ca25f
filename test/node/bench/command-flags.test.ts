import { describe, expect, it } from "vitest";
import { numberFlag, positiveIntFlag, UsageError } from "../../../src/bench/command-line";

/** The message of the UsageError `check` raises (fails the test when it raises none, or something else). */
function refusal(check: () => unknown): string {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    return (error as UsageError).message;
  }
  throw new Error("no UsageError");
}

describe("src/bench/command-line flag checks", () => {
  it("numberFlag takes a number in its range, or the fallback when the flag is absent", () => {
    expect(numberFlag("idle-s", undefined, 10, { min: 0 })).toBe(10);
    expect(numberFlag("idle-s", "0", 10, { min: 0 })).toBe(0);
    expect(numberFlag("overload", "1.5", 20, { above: 0 })).toBe(1.5);
    expect(numberFlag("port", "65535", 0, { min: 0, max: 65535, integer: true })).toBe(65535);
  });

  it("numberFlag refuses what is not a number, out of range or a fraction where an integer is due, naming the flag", () => {
    expect(refusal(() => numberFlag("idle-s", "-1", 10, { min: 0 }))).toBe(
      "--idle-s must be a number at least 0, got -1",
    );
    expect(refusal(() => numberFlag("overload", "0", 20, { above: 0 }))).toBe(
      "--overload must be a number above 0, got 0",
    );
    for (const bad of ["", " ", "ten", "NaN", "Infinity", "1e400"])
      expect(refusal(() => numberFlag("overload", bad, 20, { above: 0 }))).toContain("--overload must be a number");
    const port = { min: 0, max: 65535, integer: true };
    expect(refusal(() => numberFlag("port", "65536", 0, port))).toBe(
      "--port must be an integer at least 0 and at most 65535, got 65536",
    );
    expect(refusal(() => numberFlag("port", "80.5", 0, port))).toContain("--port must be an integer");
  });

  it("positiveIntFlag is unchanged by the move: a positive integer or the fallback", () => {
    expect(positiveIntFlag("threads", "3", 1)).toBe(3);
    expect(refusal(() => positiveIntFlag("threads", "0", 1))).toBe("--threads must be a positive integer, got 0");
  });
});
