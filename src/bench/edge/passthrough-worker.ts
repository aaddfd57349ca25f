/**
 * The baseline of the edge benchmark: a plain pass-through Worker that forwards every POST to the replicas in
 * turn, with no router, no queue and no Durable Object. spillway's admitted path is compared with it.
 * `EXTRA_HEADERS` (JSON, optional): headers added to every answer.
 *
 * @example
 * ```ts
 * // bundled by src/bench/edge/edge-bench.ts and run under miniflare with REPLICAS = '["http://127.0.0.1:8001"]'
 * ```
 */
let next = 0;

export default {
  async fetch(request: Request, env: { REPLICAS: string; EXTRA_HEADERS?: string }): Promise<Response> {
    const replicas = JSON.parse(env.REPLICAS) as string[];
    const replica = replicas[next++ % replicas.length] as string;
    const url = new URL(request.url);
    const response = await fetch(replica + url.pathname + url.search, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
    if (env.EXTRA_HEADERS === undefined) return response;
    // What the same answer costs with more headers (the bench's control for a quota tenant's rate-limit headers).
    const withHeaders = new Response(response.body, response);
    for (const [name, value] of Object.entries(JSON.parse(env.EXTRA_HEADERS) as Record<string, string>)) {
      withHeaders.headers.set(name, value);
    }
    return withHeaders;
  },
};
