import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { retryDelayMs } from "../../../src/bench/retry-after";
import { propertyRuns } from "../../support/property-runs";

// RFC 9110 section 10.2.3: Retry-After = HTTP-date / delay-seconds; a value that is neither is no hint. The bench
// client retries a 429/503 only on a hint, and the evaluation counts what it does, so a malformed value must read
// as none (null), never as "now".
const NOW = Date.UTC(2026, 11, 6, 3, 0, 0);

describe("retryDelayMs reads retry-after-ms, then Retry-After as RFC 9110 defines it", () => {
  it("delay-seconds: n seconds is n * 1000 ms", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_400 }), fc.constantFrom("", " "), (n, pad) => {
        expect(retryDelayMs(new Headers({ "retry-after": `${pad}${n}${pad}` }), NOW)).toBe(n * 1000);
      }),
      propertyRuns(200, 20261206),
    );
  });

  it("HTTP-date: the time until it, 0 once it has passed", () => {
    fc.assert(
      fc.property(fc.integer({ min: -86_400, max: 86_400 }), (offsetS) => {
        const date = new Date(NOW + offsetS * 1000).toUTCString(); // IMF-fixdate, whole seconds
        expect(retryDelayMs(new Headers({ "retry-after": date }), NOW)).toBe(Math.max(0, offsetS * 1000));
      }),
      propertyRuns(200, 20261206),
    );
  });

  it("retry-after-ms first, when it is a non-negative number", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 0, max: 600 }), (ms, s) => {
        const both = new Headers({ "retry-after-ms": String(ms), "retry-after": String(s) });
        expect(retryDelayMs(both, NOW)).toBe(ms);
        const badMs = new Headers({ "retry-after-ms": "-1", "retry-after": String(s) });
        expect(retryDelayMs(badMs, NOW)).toBe(s * 1000);
      }),
      propertyRuns(100, 20261206),
    );
  });

  it("a value that is neither delay-seconds nor an HTTP-date is no hint (it used to read as 'retry now')", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 99 }), (n, m) => {
        // Date.parse reads "-5" and "5 7" as dates long past: the delay came out 0.
        expect(retryDelayMs(new Headers({ "retry-after": `-${n}` }), NOW)).toBeNull();
        expect(retryDelayMs(new Headers({ "retry-after": `${n} ${m}` }), NOW)).toBeNull();
      }),
      propertyRuns(100, 20261206),
    );
    for (const value of ["soon", "", "  ", "Infinity", "12abc"]) {
      expect(retryDelayMs(new Headers({ "retry-after": value }), NOW)).toBeNull();
    }
  });
});
