import type { ScenarioResult } from "./evaluation";
import { withinTolerance } from "./targets";

/** Served shares of one scenario's clients by what they send: issue 15 holds header-less clients to SDK clients. */
export interface HeaderClientShares {
  name: string;
  /** The SDK clients pooled (openai-node, openai-python, the legacy model). */
  sdk: number;
  /** Header-less clients (hints honoured, no SDK headers); `undefined` when the mix has none. */
  headerless: number | undefined;
  /** openai-python alone, whose 60 s horizon header-less clients share (openai-node's is 120 s). */
  python: number | undefined;
}

/** Issue 15's target: header-less clients within this many points of SDK clients on served share. */
export const HEADERLESS_GAP_TARGET = 0.05;

/**
 * One scenario's served shares by what its clients send, under `policy`: the SDK clients pooled, header-less
 * clients (hints honoured, no SDK headers) and openai-python alone (whose 60 s horizon header-less clients share).
 *
 * @example
 * ```ts
 * const { sdk, headerless } = headerClientShares(result, "booked_capacity");
 * (sdk - (headerless ?? sdk)) * 100; // issue 15 wants under 5 points
 * ```
 */
export function headerClientShares(result: ScenarioResult, policy: string): HeaderClientShares {
  const by = result.policies.find((p) => p.id === policy)?.metrics.byClient ?? {};
  const sdk = ["openai_node", "openai_python", "legacy_sdk"].map((s) => by[s]).filter((v) => v !== undefined);
  const sdkShare =
    sdk.reduce((a, v) => a + v.served, 0) /
    Math.max(
      1,
      sdk.reduce((a, v) => a + v.requests, 0),
    );
  return {
    name: result.name,
    sdk: sdkShare,
    headerless: by.headerless_hints?.servedFraction,
    python: by.openai_python?.servedFraction,
  };
}

/**
 * How far header-less clients' served share is behind SDK clients', in points (below 0: ahead); `undefined` when the
 * scenario has no header-less clients. Every report of issue 15's header-less gap reads it here.
 *
 * @example
 * ```ts
 * headerlessBehindPts({ sdk: 0.902, headerless: 0.848 }); // 5.4 (to rounding)
 * ```
 */
export function headerlessBehindPts(shares: {
  sdk: number;
  headerless: number | null | undefined;
}): number | undefined {
  return shares.headerless == null ? undefined : 100 * (shares.sdk - shares.headerless);
}

/**
 * Whether header-less clients are within {@link HEADERLESS_GAP_TARGET} of SDK clients; `undefined` when the
 * scenario has no header-less clients.
 *
 * @example
 * ```ts
 * headerlessMet({ name: "x", sdk: 0.902, headerless: 0.848, python: 0.875 }); // false: 5.4 points behind
 * ```
 */
export function headerlessMet(shares: HeaderClientShares): boolean | undefined {
  if (shares.headerless === undefined) return undefined;
  return withinTolerance(shares.headerless - shares.sdk, HEADERLESS_GAP_TARGET);
}

/**
 * How many of `shares`' scenarios keep header-less clients within issue 15's 5 points of SDK clients, of those where
 * header-less clients ran (the count both reports quote).
 *
 * @example
 * ```ts
 * const mix = (name: string, headerless: number | undefined) => ({ name, sdk: 0.9, headerless, python: undefined });
 * headerlessWithin([mix("x", 0.88), mix("y", 0.8), mix("legacy", undefined)]); // { met: 1, of: 2 }
 * ```
 */
export function headerlessWithin(shares: readonly HeaderClientShares[]): { met: number; of: number } {
  const ran = shares.filter((h) => h.headerless !== undefined);
  return { met: ran.filter((h) => headerlessMet(h) === true).length, of: ran.length };
}
