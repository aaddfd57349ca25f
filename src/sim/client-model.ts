/** Which headers a client reads. */
export type ClientKind = "honours_hints" | "backoff_only";

/** SDK backoff constants (openai-python `_calculate_retry_timeout`, openai-node `calculateDefaultRetryTimeoutMillis`). */
export const SDK_INITIAL_RETRY_DELAY_S = 0.5;
export const SDK_MAX_RETRY_DELAY_S = 8;
/** The SDKs honour a server's delay only in (0, 60] seconds. */
export const SDK_MAX_HONOURED_S = 60;

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
 * The OpenAI SDKs' retry delay: `retry-after-ms`, else `Retry-After` (seconds), when the value lies in
 * (0, 60] s; otherwise their own backoff `min(0.5 * 2^n, 8) s` times a jitter factor in (0.75, 1], where `n`
 * counts the retries already made. A `backoff_only` client never reads the headers.
 *
 * @example
 * ```ts
 * retryDelay("honours_hints", { retryAfterMs: 2500, retryAfterS: 3 }, 0, () => 0.5); // { delayMs: 2500, hinted: true }
 * retryDelay("honours_hints", {}, 2, () => 0);                                    // { delayMs: 2000, hinted: false }
 * ```
 */
export function retryDelay(
  kind: ClientKind,
  headers: RetryHeaders,
  retriesSoFar: number,
  random: () => number,
): RetryDelay {
  if (kind === "honours_hints") {
    const hintMs =
      headers.retryAfterMs !== undefined
        ? headers.retryAfterMs
        : headers.retryAfterS !== undefined
          ? headers.retryAfterS * 1000
          : undefined;
    if (hintMs !== undefined && hintMs > 0 && hintMs <= SDK_MAX_HONOURED_S * 1000)
      return { delayMs: hintMs, hinted: true };
  }
  const sleepS = Math.min(SDK_INITIAL_RETRY_DELAY_S * 2 ** retriesSoFar, SDK_MAX_RETRY_DELAY_S);
  return { delayMs: sleepS * (1 - 0.25 * random()) * 1000, hinted: false };
}
