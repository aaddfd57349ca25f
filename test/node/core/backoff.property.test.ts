import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BACKOFF_INITIAL_MS,
  BACKOFF_MAX_MS,
  backoffDelayMs,
  PROBE_DEADLINE_INITIAL_MS,
  PROBE_DEADLINE_MAX_MS,
  probeDeadlineMs,
} from "../../../src/core/backoff";
import { propertyRuns } from "../../support/property-runs";

/**
 * The placement backoff and the probe deadline (the spec's "Routing" paragraph, /work/shared/spec/retry-after.md)
 * against the rule they state, for every streak a router can reach and the edges of the number line:
 *
 * - `backoffDelayMs`: 0 before any failed round; then 25 ms doubling per failed round, capped at 500 ms
 *   (0, 25, 50, 100, 200, 400, 500, 500, ...);
 * - `probeDeadlineMs`: 100 ms doubling per failed round, capped at 1 s (100, 200, 400, 800, 1000, ...);
 * - both whole milliseconds, never decreasing as the streak grows, and at the cap for a streak of any size (one in
 *   the millions, `Number.MAX_SAFE_INTEGER`, `Infinity`: no overflow to `Infinity` or `NaN`); a streak below 0 (never
 *   counted, but a number) reads as 0.
 */

const runs = propertyRuns(500, 20261206);

/** The rule, one failed round at a time: doubling from the initial value, stopped at the cap. */
function doubled(initialMs: number, maxMs: number, doublings: number): number {
  let ms = initialMs;
  for (let i = 0; i < doublings && ms < maxMs; i++) ms *= 2;
  return Math.min(ms, maxMs);
}

const streak = fc.oneof(
  fc.integer({ min: 0, max: 40 }),
  fc.integer({ min: -5, max: -1 }),
  fc.constantFrom(1_000_000, Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
);

describe("placement backoff and probe deadline", () => {
  it("follow the doubling-with-a-cap rule for every streak", () => {
    fc.assert(
      fc.property(streak, (n) => {
        const backoff = backoffDelayMs(n);
        const deadline = probeDeadlineMs(n);
        expect(backoff).toBe(n <= 0 ? 0 : doubled(BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, Math.min(n - 1, 64)));
        expect(deadline).toBe(doubled(PROBE_DEADLINE_INITIAL_MS, PROBE_DEADLINE_MAX_MS, Math.min(Math.max(0, n), 64)));
        expect(Number.isInteger(backoff) && Number.isInteger(deadline)).toBe(true);
        expect(backoff).toBeLessThanOrEqual(BACKOFF_MAX_MS);
        expect(deadline).toBeLessThanOrEqual(PROBE_DEADLINE_MAX_MS);
      }),
      runs,
    );
  });

  it("never shorten as the streak grows", () => {
    fc.assert(
      fc.property(streak, fc.nat(100), (n, more) => {
        expect(backoffDelayMs(n + more)).toBeGreaterThanOrEqual(backoffDelayMs(n));
        expect(probeDeadlineMs(n + more)).toBeGreaterThanOrEqual(probeDeadlineMs(n));
      }),
      runs,
    );
  });

  it("are the spec's vectors", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8].map(backoffDelayMs)).toEqual([0, 25, 50, 100, 200, 400, 500, 500, 500]);
    expect([0, 1, 2, 3, 4, 5].map(probeDeadlineMs)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
