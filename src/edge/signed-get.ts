import { signRequest } from "../core/request-signature";

/**
 * `GET url` (with `extraHeaders`, e.g. an upstream credential), signed with spillway's edge signature when a secret is set (engines may restrict `/load` and
 * `/metrics` to the edge). Used by the router's probes and the dashboard's replica reads. Redirects are not followed.
 *
 * @example
 * ```ts
 * const res = await signedGet("http://127.0.0.1:8001/load", env.SPILLWAY_SIGNING_SECRET, AbortSignal.timeout(100));
 * ```
 */
export async function signedGet(
  url: string,
  secret: string | undefined,
  signal: AbortSignal,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  const { pathname, search } = new URL(url);
  const signature = secret
    ? await signRequest(secret, {
        method: "GET",
        // What the engine verifies: the path and its query (a probe URL with a query was refused).
        path: pathname + search,
        body: "",
        deployment: "",
        timestampMs: Date.now(),
        nonce: crypto.randomUUID(),
      })
    : {};
  // Never followed: a redirect would carry the signature and the upstream credential to wherever it points. A 3xx
  // is an answer that is not ok, as the probes read any other.
  return fetch(url, { headers: { ...extraHeaders, ...signature }, signal, redirect: "manual" });
}
