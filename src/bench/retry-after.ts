/** RFC 9110's three HTTP-date forms (IMF-fixdate, RFC 850, asctime) all name the month. */
const HTTP_DATE_MONTH = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\b/i;

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
  // Every HTTP-date form names its month; Date.parse alone also reads "-1" or "5 7" as dates long past, and a
  // malformed header would then mean "retry now" instead of no hint.
  if (!HTTP_DATE_MONTH.test(after)) return null;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
