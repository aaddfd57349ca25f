/**
 * The longest Retry-After a client will honour, read from the headers Stainless-generated SDKs send. A hint
 * longer than this is ignored by the client (it falls back to its own short backoff), so a policy must never
 * promise a time beyond it.
 */

/**
 * openai-node from 6.35.0 (2026-04-28) honours any positive hint; we still keep its promises within two minutes.
 * Earlier releases (4.x, 5.x, 6.x before it) honour a hint only below 60 s: a longer one, 60 s included, falls to
 * their 0.5-8 s backoff (`!(timeoutMillis && 0 <= timeoutMillis && timeoutMillis < 60 * 1000)`). The cap went in a
 * codegen commit reported on 2026-04-24 (openai/openai-node#1840, open; the pull requests restoring it were closed);
 * 6.34.0 (2026-04-08) may already lack it, and is treated as capped: a shorter hint is still honoured.
 */
export const JS_SDK_HORIZON_S = 120;
/** The first openai-node release known to honour a hint of 60 s or more: `[major, minor, patch]`. */
export const JS_SDK_UNCAPPED_SINCE: readonly [number, number, number] = [6, 35, 0];
/** The horizon of an older openai-node, or one that names no version: hints below 60 s (its cap is exclusive). */
export const CAPPED_JS_SDK_HORIZON_S = 59;
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
 * The horizon (seconds) of a client: for openai-node (`x-stainless-lang: js`) 120 from 6.35.0
 * (`x-stainless-package-version`), which honours any value, and 59 before it or without a version it can read (those
 * releases ignore a hint of 60 s or more and retry on their own 0.5-8 s backoff: a 90 s hint would spend a retry at
 * once); 60 for everyone else - openai-python of either generation, and clients that send no SDK header at all
 * (their limit is unknown, and 60 s is what openai-python honours). A pre-release of 6.35.0 counts as before it.
 * The headers only lengthen a hint within what that client honours; they never grant anything else.
 *
 * @example
 * ```ts
 * clientHorizonS({ lang: "js", packageVersion: "6.49.0" }); // 120
 * clientHorizonS({ lang: "js", packageVersion: "4.104.0" }); // 59
 * clientHorizonS({ lang: "python" });                        // 60
 * clientHorizonS({});                                        // 60
 * ```
 */
export function clientHorizonS(identity: ClientIdentity): number {
  const lang = identity.lang?.trim().toLowerCase();
  if (lang !== "js") return DEFAULT_HORIZON_S;
  return versionAtLeast(identity.packageVersion, JS_SDK_UNCAPPED_SINCE) ? JS_SDK_HORIZON_S : CAPPED_JS_SDK_HORIZON_S;
}

/**
 * Whether `version` (semver `major.minor.patch`, a pre-release counting as before its release) is at least `least`;
 * false when it is missing or unreadable.
 */
function versionAtLeast(version: string | undefined, least: readonly [number, number, number]): boolean {
  const match = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.exec(version?.trim() ?? "");
  if (!match) return false;
  const parts = [Number(match[1]), Number(match[2]), Number(match[3])];
  for (let i = 0; i < 3; i++) {
    const part = parts[i] as number;
    const bound = least[i] as number;
    if (part !== bound) return part > bound;
  }
  return match[4] === undefined;
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
