/**
 * Whether the client says the request is a retry: `x-stainless-retry-count` is a whole number >= 1.
 *
 * @example
 * ```ts
 * isRetry("1"); // true
 * isRetry("0"); // false (the first attempt; some SDK versions send it)
 * ```
 */
export function isRetry(header: string | undefined): boolean {
  if (header === undefined || !/^\s*\d+\s*$/.test(header)) return false;
  return Number(header) >= 1;
}
