/**
 * How long to wait before retrying, from a 429/503 answer's headers: `retry-after-ms` (milliseconds,
 * the edge's precise hint) first, then `Retry-After` (delta-seconds or an HTTP date). `null` when
 * neither is present or parseable.
 *
 * @example
 * ```ts
 * retryDelayMs(new Headers({ "retry-after": "2" }));                        // 2000
 * retryDelayMs(new Headers({ "retry-after-ms": "350", "retry-after": "1" })); // 350
 * ```
 */
export function retryDelayMs(headers: Headers, now: number = Date.now()): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
