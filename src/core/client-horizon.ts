/**
 * The longest Retry-After a client will honour, read from the headers Stainless-generated SDKs send. A hint
 * longer than this is ignored by the client (it falls back to its own short backoff), so a policy must never
 * promise a time beyond it.
 */

/** openai-node 6.x honours any positive hint; we still keep its promises within two minutes. */
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
 * The horizon (seconds) of a client: 120 for openai-node (`x-stainless-lang: js`, which honours any value),
 * 60 for everyone else - openai-python of either generation, and clients that send no SDK header at all (their
 * limit is unknown, and 60 s is what the strictest SDK honours). The headers only lengthen a hint for clients
 * that honour it; they never grant anything else.
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
