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
  let target = response;
  for (const name in headers) {
    try {
      target.headers.set(name, headers[name] as string);
    } catch {
      // Immutable headers (a response passed on as it came): copy it once, then go on.
      target = new Response(response.body, response);
      target.headers.set(name, headers[name] as string);
    }
  }
  return target;
}
