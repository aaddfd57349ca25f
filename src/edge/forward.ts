/** Hop-by-hop headers (RFC 9110 7.6.1) and ones the platform sets itself: never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
]);

/** Prefix of spillway's internal headers: stripped from client requests, never trusted from outside. */
export const INTERNAL_HEADER_PREFIX = "x-spillway-";

/**
 * The headers to send upstream: the client's, minus hop-by-hop, Cloudflare's own and spillway's internal ones.
 *
 * @example
 * ```ts
 * upstreamHeaders(new Headers({ "x-spillway-ticket": "forged", accept: "text/event-stream" })); // accept only
 * ```
 */
export function upstreamHeaders(incoming: Headers): Headers {
  const headers = new Headers();
  for (const [name, value] of incoming) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith("cf-") || lower.startsWith(INTERNAL_HEADER_PREFIX)) continue;
    headers.append(name, value);
  }
  return headers;
}

/**
 * Passes a response body through untouched (SSE included) and calls `onEnd` exactly once: when the body
 * ends, fails, or the client cancels it. `onEnd(true)` means the upstream failed mid-body.
 *
 * @example
 * ```ts
 * const body = relayBody(upstream.body, (failed) => ctx.waitUntil(router.release(ticket, failed)), signal);
 * return new Response(body, upstream);
 * ```
 */
export function relayBody(
  upstream: ReadableStream<Uint8Array>,
  onEnd: (upstreamFailed: boolean) => void,
  clientSignal?: AbortSignal,
): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  let ended = false;
  const end = (upstreamFailed: boolean) => {
    if (ended) return;
    ended = true;
    onEnd(upstreamFailed);
  };
  upstream.pipeTo(writable).then(
    () => end(false),
    // A pipe that fails while the client is still there failed upstream; otherwise the client left.
    () => end(!(clientSignal?.aborted ?? false)),
  );
  clientSignal?.addEventListener("abort", () => end(false), { once: true });
  return readable;
}
