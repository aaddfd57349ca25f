/**
 * A replica's KV token usage as the dashboard shows it, in one unit and one rounding for the chart and the table:
 * a percent with one decimal (the engines report a fraction, `/load`'s `tokenUsage`), or `null` when unknown.
 * It is embedded in the browser script as it is (`usagePercent.toString()`), so it is plain JavaScript once its
 * types are stripped.
 *
 * @example
 * ```ts
 * usagePercent(0.28125); // 28.1 (the chart plots 28.1, the table prints "28.1%")
 * usagePercent(null);    // null ("-")
 * ```
 */
export function usagePercent(fraction: number | null): number | null {
  if (fraction === null || !Number.isFinite(fraction)) return null;
  return Math.round(fraction * 1000) / 10;
}
