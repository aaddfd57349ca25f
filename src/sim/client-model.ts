/**
 * How simulated clients retry. Each style is a kind of client seen in front of OpenAI-compatible APIs; a
 * scenario mixes them (src/sim/client-mix.ts).
 *
 * - `openai_node`: openai-node 6.49.0 (what `npm run eval:e2e` drives; 6.35.0 and later). Honours any positive
 *   `retry-after-ms` / `Retry-After`, sends `x-stainless-retry-count`, `x-stainless-lang: js` and its version.
 *   Releases before 6.35.0 honour only hints below 60 s; the router gives them 59 s at most
 *   (src/core/client-horizon.ts), and the simulator does not model them.
 * - `openai_python`: openai-python. Honours a hint only in (0, 60] s (120 s in recent versions; the simulator
 *   models the 60 s ones), sends the same headers with `x-stainless-lang: python`.
 * - `headerless_hints`: curl `--retry`, tenacity and hand-written loops: honours `Retry-After` (whole seconds,
 *   no `retry-after-ms`), any value, and sends no SDK header at all.
 * - `backoff_only`: ignores every hint, retries on the SDK's exponential backoff.
 * - `no_show`: gives up after the first refusal.
 * - `legacy_sdk`: the evaluation's earlier model (every client an SDK honouring (0, 60] s with the retry
 *   header, zero round trip), kept as a labelled variant.
 */
export type ClientStyle =
  | "openai_node"
  | "openai_python"
  | "headerless_hints"
  | "backoff_only"
  | "no_show"
  | "legacy_sdk";

export const CLIENT_STYLES: readonly ClientStyle[] = [
  "openai_node",
  "openai_python",
  "headerless_hints",
  "backoff_only",
  "no_show",
  "legacy_sdk",
];

/** What a client style does with a refusal. */
export interface ClientProfile {
  style: ClientStyle;
  /** Longest hint it honours, seconds (`0`: it never reads hints). */
  honoursUpToS: number;
  /** Whether it reads `retry-after-ms` (else only the whole-second `Retry-After`). */
  readsRetryAfterMs: boolean;
  /** Whether it sends `x-stainless-retry-count` / `x-stainless-lang` / `x-stainless-package-version`. */
  sendsSdkHeaders: boolean;
  /** `x-stainless-lang`, when it sends SDK headers. */
  lang?: "js" | "python";
  /** `x-stainless-package-version`, when it sends SDK headers and the router reads it (openai-node's). */
  packageVersion?: string;
  /** Retries after the first attempt; `undefined`: the scenario's `client.maxRetries`. */
  maxRetries?: number;
}

/** SDK backoff constants (openai-python `_calculate_retry_timeout`, openai-node `calculateDefaultRetryTimeoutMillis`). */
export const SDK_INITIAL_RETRY_DELAY_S = 0.5;
export const SDK_MAX_RETRY_DELAY_S = 8;
/** openai-python (before its 120 s versions) honours a server's delay only in (0, 60] seconds. */
export const SDK_MAX_HONOURED_S = 60;

/** The profile of each style. */
export const CLIENT_PROFILES: Record<ClientStyle, ClientProfile> = {
  openai_node: {
    style: "openai_node",
    honoursUpToS: Number.POSITIVE_INFINITY,
    readsRetryAfterMs: true,
    sendsSdkHeaders: true,
    lang: "js",
    packageVersion: "6.49.0",
  },
  openai_python: {
    style: "openai_python",
    honoursUpToS: SDK_MAX_HONOURED_S,
    readsRetryAfterMs: true,
    sendsSdkHeaders: true,
    lang: "python",
  },
  headerless_hints: {
    style: "headerless_hints",
    honoursUpToS: Number.POSITIVE_INFINITY,
    readsRetryAfterMs: false,
    sendsSdkHeaders: false,
  },
  backoff_only: { style: "backoff_only", honoursUpToS: 0, readsRetryAfterMs: false, sendsSdkHeaders: false },
  no_show: { style: "no_show", honoursUpToS: 0, readsRetryAfterMs: false, sendsSdkHeaders: false, maxRetries: 0 },
  legacy_sdk: {
    style: "legacy_sdk",
    honoursUpToS: SDK_MAX_HONOURED_S,
    readsRetryAfterMs: true,
    sendsSdkHeaders: true,
    lang: "python",
  },
};

/** The retry headers of a refusal, as the client sees them. */
export interface RetryHeaders {
  retryAfterMs?: number;
  retryAfterS?: number;
}

/** How long the client waits before its next attempt, and whether the server's hint chose it. */
export interface RetryDelay {
  delayMs: number;
  hinted: boolean;
}

/**
 * A client's retry delay: the hint it reads (`retry-after-ms` if it reads it, else `Retry-After` in seconds)
 * when the value lies in (0, honoursUpToS]; otherwise the SDK backoff `min(0.5 * 2^n, 8) s` times a jitter
 * factor in (0.75, 1], where `n` counts the retries already made.
 *
 * @example
 * ```ts
 * retryDelay(CLIENT_PROFILES.openai_python, { retryAfterMs: 2500, retryAfterS: 3 }, 0, () => 0.5); // { delayMs: 2500, hinted: true }
 * retryDelay(CLIENT_PROFILES.headerless_hints, { retryAfterMs: 2500, retryAfterS: 3 }, 0, () => 0.5); // { delayMs: 3000, hinted: true }
 * retryDelay(CLIENT_PROFILES.openai_python, {}, 2, () => 0);                                       // { delayMs: 2000, hinted: false }
 * ```
 */
export function retryDelay(
  profile: ClientProfile,
  headers: RetryHeaders,
  retriesSoFar: number,
  random: () => number,
): RetryDelay {
  if (profile.honoursUpToS > 0) {
    const hintMs =
      profile.readsRetryAfterMs && headers.retryAfterMs !== undefined
        ? headers.retryAfterMs
        : headers.retryAfterS !== undefined
          ? headers.retryAfterS * 1000
          : undefined;
    if (hintMs !== undefined && hintMs > 0 && hintMs <= profile.honoursUpToS * 1000)
      return { delayMs: hintMs, hinted: true };
  }
  const sleepS = Math.min(SDK_INITIAL_RETRY_DELAY_S * 2 ** retriesSoFar, SDK_MAX_RETRY_DELAY_S);
  return { delayMs: sleepS * (1 - 0.25 * random()) * 1000, hinted: false };
}
