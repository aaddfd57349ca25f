/**
 * A response with the tenant's rate-limit headers added (`x-ratelimit-*`, `RateLimit-Policy`, `RateLimit`); the
 * same response when there are none. A response whose headers are immutable is copied first.
 *
 * @example
 * ```ts
 * return withTenantHeaders(await answerFrom(upstream, release, signal), charge.headers);
 * ```
 */
export function withTenantHeaders(response: Response, headers: Record<string, string>): Response {
  const entries = Object.entries(headers);
  if (entries.length === 0) return response;
  let target = response;
  try {
    for (const [name, value] of entries) target.headers.set(name, value);
  } catch {
    target = new Response(response.body, response);
    for (const [name, value] of entries) target.headers.set(name, value);
  }
  return target;
}
