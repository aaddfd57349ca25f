import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { announcesSdk, clientHorizonS, DEFAULT_HORIZON_S, JS_SDK_HORIZON_S } from "../../../src/core/client-horizon";

/**
 * Which Retry-After horizon a client gets from the SDK headers it sends (`x-stainless-lang`,
 * `x-stainless-package-version`), against the JSDoc and the spec's "How a policy is judged" paragraph
 * (/work/shared/spec/retry-after.md): 120 s for `js` (openai-node; any case, surrounding whitespace ignored), 60 s for
 * every other value and for no header at all; never below 60 s (a header only lengthens a hint), never anything
 * but those two; the package version does not change it. `announcesSdk` is true exactly when `x-stainless-lang` has
 * something other than whitespace in it.
 */

const runs = { numRuns: Number(process.env.RUNS ?? 500), seed: Number(process.env.SEED ?? 20261206) };

const whitespace = fc.constantFrom("", " ", "\t", "  ", " \t ");
/** `x-stainless-lang` values: the SDKs' own, their case variants, near misses, anything, or none. */
const lang = fc.option(
  fc.oneof(
    fc
      .tuple(
        whitespace,
        fc.constantFrom("js", "JS", "Js", "jS", "python", "Python", "go", "java", "ruby", "", "j s", "jsx", "node"),
        whitespace,
      )
      .map(([before, value, after]) => before + value + after),
    fc.string({ maxLength: 6 }),
  ),
  { nil: undefined, freq: 5 },
);
const packageVersion = fc.option(
  fc.oneof(fc.constantFrom("4.104.0", "5.23.2", "6.49.0", "1.99.0", "2.0.0", ""), fc.string({ maxLength: 8 })),
  { nil: undefined, freq: 4 },
);

describe("clientHorizonS and announcesSdk", () => {
  it("give openai-node (js) 120 s and every other client 60 s, whatever the version", () => {
    fc.assert(
      fc.property(lang, packageVersion, packageVersion, (l, version, otherVersion) => {
        const isJs = l !== undefined && l.trim().toLowerCase() === "js";
        const horizon = clientHorizonS({ lang: l, packageVersion: version });
        expect(horizon).toBe(isJs ? JS_SDK_HORIZON_S : DEFAULT_HORIZON_S);
        expect(horizon).toBeGreaterThanOrEqual(clientHorizonS({}));
        expect(clientHorizonS({ lang: l, packageVersion: otherVersion })).toBe(horizon);
        expect(announcesSdk({ lang: l, packageVersion: version })).toBe(l !== undefined && l.trim() !== "");
      }),
      runs,
    );
  });

  it("are the JSDoc's values", () => {
    expect([JS_SDK_HORIZON_S, DEFAULT_HORIZON_S]).toEqual([120, 60]);
    expect(clientHorizonS({})).toBe(60);
    expect(announcesSdk({ lang: "  " })).toBe(false);
  });
});
