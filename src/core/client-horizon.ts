/**
 * The longest Retry-After a client will honour, read from the headers Stainless-generated SDKs send. A hint
 * longer than this is ignored by the client (it falls back to its own short backoff), so a policy must never
 * promise a time beyond it.
 */

/**
 * Recent openai-node releases (6.x since spring 2026, e.g. 6.49.0) honour any positive hint; we still keep its
 * promises within two minutes. Earlier releases (4.x, 5.x, early 6.x) honour only hints below 60 s (a longer one,
 * 60 s included, falls to their 0.5-8 s backoff): the version header is not read (see `clientHorizonS`).
 */
export const JS_SDK_HORIZON_S = 120;
/** openai-python honours (0, 60] s (120 s in recent versions); unknown clients get the conservative 60 s. */
export const DEFAULT_HORIZON_S = 60;

/** The SDK headers that say who the client is. */
export interface ClientIdentity {
  /** `x-stainless-lang`, e.g. `js`, `python`. */
  lang?: string | undefined;
  /** `x-stainless-package-version`, e.g. `6.49.0`. */
  packageVersion?: string | undefined;
}

/**
 * The horizon (seconds) of a client: 120 for openai-node (`x-stainless-lang: js`, which in its recent releases
 * honours any value), 60 for everyone else - openai-python of either generation, and clients that send no SDK
 * header at all (their limit is unknown, and 60 s is what the strictest SDK honours). The headers only lengthen a
 * hint; they never grant anything else.
 *
 * Known limit: `x-stainless-package-version` is not read, so an older openai-node (before the 60 s cap was dropped
 * in spring 2026, openai/openai-node#1840) also gets 120 s, and ignores a hint of 60 s or more from its horizon.
 *
 * @example
 * ```ts
 * clientHorizonS({ lang: "js", packageVersion: "6.49.0" }); // 120
 * clientHorizonS({ lang: "python" });                        // 60
 * clientHorizonS({});                                        // 60
 * ```
 */
export function clientHorizonS(identity: ClientIdentity): number {
  const lang = identity.lang?.trim().toLowerCase();
  if (lang === "js") return JS_SDK_HORIZON_S;
  return DEFAULT_HORIZON_S;
}

/**
 * Whether the client announced a Stainless-generated SDK (`x-stainless-lang`, any language): such a client honours
 * Retry-After (within its horizon) and retries twice by default, so a refusal with a hint costs it a wait, not the
 * request. The router may keep a little room from such clients for those that may not use a hint
 * (`booking.sdkClientsLeaveShare`): the header takes room from a client, it never grants it, so a forged one gains
 * nothing.
 *
 * @example
 * ```ts
 * announcesSdk({ lang: "js" }); // true
 * announcesSdk({});             // false
 * ```
 */
export function announcesSdk(identity: ClientIdentity): boolean {
  return (identity.lang?.trim() ?? "") !== "";
}
