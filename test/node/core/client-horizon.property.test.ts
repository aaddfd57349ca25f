import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  announcesSdk,
  CAPPED_JS_SDK_HORIZON_S,
  clientHorizonS,
  DEFAULT_HORIZON_S,
  JS_SDK_HORIZON_S,
} from "../../../src/core/client-horizon";
import { CLIENT_PROFILES } from "../../../src/sim/client-model";
import { propertyRuns } from "../../support/property-runs";

/**
 * Which Retry-After horizon a client gets from the SDK headers it sends (`x-stainless-lang`,
 * `x-stainless-package-version`), against the JSDoc and the spec's "How a policy is judged" paragraph
 * (/work/shared/spec/retry-after.md, corrected: openai-node before 6.35.0 ignores a hint of 60 s or more): for `js`
 * (openai-node; any case, surrounding whitespace ignored) 120 s from version 6.35.0 (a release, not a pre-release)
 * and 59 s before it or with no readable version; 60 s for every other value and for no header at all; the package
 * version matters only to `js`. `announcesSdk` is true exactly when `x-stainless-lang` has something other than
 * whitespace in it.
 */

const runs = propertyRuns(500, 20261206);

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
/** Versions: the SDKs' own on both sides of 6.35.0, pre-releases and build tags, any triple, garbage, or none. */
const packageVersion = fc.option(
  fc.oneof(
    fc.constantFrom("4.104.0", "5.23.2", "6.34.0", "6.35.0", "6.35.0-beta.1", "6.49.0", "7.0.0", "1.99.0", "2.0.0", ""),
    fc
      .tuple(fc.nat(12), fc.nat(60), fc.nat(3), fc.constantFrom("", "-alpha.1", "+build.5"))
      .map(([major, minor, patch, tail]) => `${major}.${minor}.${patch}${tail}`),
    fc.string({ maxLength: 8 }),
  ),
  { nil: undefined, freq: 4 },
);

/** The documented rule for openai-node's version: a release (build tags aside) at or after 6.35.0. */
function uncappedNode(version: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(-[^+]*)?(\+.*)?$/.exec(version?.trim() ?? "");
  if (!match) return false;
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const order = major !== 6 ? major - 6 : minor !== 35 ? minor - 35 : patch;
  return order > 0 || (order === 0 && match[4] === undefined);
}

describe("clientHorizonS and announcesSdk", () => {
  it("give openai-node (js) 120 s from 6.35.0 and 59 s before it, every other client 60 s", () => {
    fc.assert(
      fc.property(lang, packageVersion, packageVersion, (l, version, otherVersion) => {
        const isJs = l !== undefined && l.trim().toLowerCase() === "js";
        const horizon = clientHorizonS({ lang: l, packageVersion: version });
        const jsHorizon = uncappedNode(version) ? JS_SDK_HORIZON_S : CAPPED_JS_SDK_HORIZON_S;
        expect(horizon).toBe(isJs ? jsHorizon : DEFAULT_HORIZON_S);
        if (!isJs) expect(clientHorizonS({ lang: l, packageVersion: otherVersion })).toBe(horizon);
        expect(announcesSdk({ lang: l, packageVersion: version })).toBe(l !== undefined && l.trim() !== "");
      }),
      runs,
    );
  });

  it("are the JSDoc's values", () => {
    expect([JS_SDK_HORIZON_S, CAPPED_JS_SDK_HORIZON_S, DEFAULT_HORIZON_S]).toEqual([120, 59, 60]);
    expect(clientHorizonS({ lang: "js", packageVersion: "6.49.0" })).toBe(120);
    expect(clientHorizonS({ lang: "js", packageVersion: "6.35.0" })).toBe(120);
    expect(clientHorizonS({ lang: "js", packageVersion: "6.34.0" })).toBe(59);
    expect(clientHorizonS({ lang: "js", packageVersion: "4.104.0" })).toBe(59);
    expect(clientHorizonS({ lang: "js" })).toBe(59);
    expect(clientHorizonS({})).toBe(60);
    expect(announcesSdk({ lang: "  " })).toBe(false);
  });

  it("keep an older openai-node's hints below its exclusive 60 s cap", () => {
    // openai-node before 6.35.0 takes a server's delay only when `0 <= ms < 60 * 1000`: 60 s itself falls to backoff.
    const capped = clientHorizonS({ lang: "js", packageVersion: "5.23.2" });
    expect(capped * 1000).toBeLessThan(60 * 1000);
  });

  it("give the simulator's openai-node the installed package's version, and so its 120 s", async () => {
    // eval:e2e drives the installed openai package: the simulator's openai_node style is that release.
    const { VERSION } = await import("openai/version");
    expect(CLIENT_PROFILES.openai_node.packageVersion).toBe(VERSION);
    expect(clientHorizonS({ lang: "js", packageVersion: CLIENT_PROFILES.openai_node.packageVersion })).toBe(120);
  });
});
