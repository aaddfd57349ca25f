import type { QuotaState, QuotaVerdict } from "../core/tenant-quota";

/**
 * A duration as OpenAI writes `x-ratelimit-reset-*` (Go's `time.Duration` format): `20ms` under a second,
 * else hours, minutes and seconds with the seconds' fraction kept: `1s`, `1.5s`, `6m0s`, `1h0m0s`.
 *
 * @example
 * ```ts
 * [20, 1000, 1500, 360_000].map(openAIDuration); // ["20ms", "1s", "1.5s", "6m0s"]
 * ```
 */
export function openAIDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = `${(whole % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}

/**
 * The headers every response to a tenant with quotas carries: OpenAI's `x-ratelimit-{limit,remaining,reset}-
 * {requests,tokens}` and the IETF fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` names each
 * quota with its size `q` and window `w` (seconds), `RateLimit` its remaining `r` and seconds to reset `t`.
 *
 * @example
 * ```ts
 * rateLimitHeaders({ admitted: true, requests: { limit: 30, remaining: 29, resetMs: 2000 } });
 * // { "x-ratelimit-limit-requests": "30", "x-ratelimit-remaining-requests": "29",
 * //   "x-ratelimit-reset-requests": "2s", "ratelimit-policy": '"requests";q=30;w=60',
 * //   ratelimit: '"requests";r=29;t=2' }
 * ```
 */
export function rateLimitHeaders(verdict: Pick<QuotaVerdict, "requests" | "tokens">): Record<string, string> {
  // Spelled out per quota: literal header names, no per-request arrays (this runs for every admitted request).
  const headers: Record<string, string> = {};
  const { requests, tokens } = verdict;
  if (requests) {
    headers["x-ratelimit-limit-requests"] = String(requests.limit);
    headers["x-ratelimit-remaining-requests"] = String(requests.remaining);
    headers["x-ratelimit-reset-requests"] = openAIDuration(requests.resetMs);
  }
  if (tokens) {
    headers["x-ratelimit-limit-tokens"] = String(tokens.limit);
    headers["x-ratelimit-remaining-tokens"] = String(tokens.remaining);
    headers["x-ratelimit-reset-tokens"] = openAIDuration(tokens.resetMs);
  }
  if (requests && tokens) {
    headers["ratelimit-policy"] = `${policy("requests", requests)}, ${policy("tokens", tokens)}`;
    headers.ratelimit = `${state("requests", requests)}, ${state("tokens", tokens)}`;
  } else if (requests || tokens) {
    const [name, quota] = requests ? (["requests", requests] as const) : (["tokens", tokens as QuotaState] as const);
    headers["ratelimit-policy"] = policy(name, quota);
    headers.ratelimit = state(name, quota);
  }
  return headers;
}

/** One quota's `RateLimit-Policy` item: its size `q` and window `w` (seconds). */
function policy(name: string, quota: QuotaState): string {
  return `"${name}";q=${quota.limit};w=60`;
}

/** One quota's `RateLimit` item: what remains `r` and the seconds until it is full again `t`. */
function state(name: string, quota: QuotaState): string {
  return `"${name}";r=${quota.remaining};t=${Math.ceil(quota.resetMs / 1000)}`;
}
