/** What a redacted query value reads as. */
export const REDACTED = "redacted";

/**
 * The display form of a replica's URL: what log lines, the `replica` label of `/spillway/metrics`, Analytics Engine
 * rows and `/spillway/overview` and `/spillway/stats` show of it, never the URL requests and probes go to. A
 * credential in the URL (`user:pass@`, a gateway's `?key=...`) is redacted: the userinfo is removed, and each query
 * parameter keeps its name with its value read as `redacted` (a parameter with no `=`, which may be a bare token,
 * is `redacted` whole); the rest is left as written. A URL with neither comes back as it is, byte for byte. The
 * result is checked with the URL parser (as `fetch` reads the URL): where the text's userinfo or query is not the
 * one the parser finds (a spelling only the parser reads so), the label is the parsed URL, written out, redacted.
 * Not a URL (no configured replica is one): its query and anything before an `@` ahead of the path are redacted
 * the same way, by its text.
 *
 * @example
 * ```ts
 * replicaLabel("https://gpu-a.internal:8001"); // "https://gpu-a.internal:8001"
 * replicaLabel("https://gw.example/llama?key=sk-1&v=2"); // "https://gw.example/llama?key=redacted&v=redacted"
 * replicaLabel("https://user:pass@gpu.example/llama"); // "https://gpu.example/llama"
 * ```
 */
export function replicaLabel(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return labelOfText(url);
  }
  if (parsed.username === "" && parsed.password === "" && parsed.search === "") return url;
  const query = parsed.search === "" ? "" : `?${redactQuery(parsed.search.slice(1))}`;
  const byText = labelOfText(url);
  if (readsAs(byText, parsed, query)) return byText;
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${query}${parsed.hash}`;
}

/** Whether `label` parses as `url` does, with no userinfo and the query `query`. */
function readsAs(label: string, url: URL, query: string): boolean {
  let shown: URL;
  try {
    shown = new URL(label);
  } catch {
    return false;
  }
  return (
    shown.username === "" &&
    shown.password === "" &&
    shown.protocol === url.protocol &&
    shown.host === url.host &&
    shown.pathname === url.pathname &&
    shown.search === query &&
    shown.hash === url.hash
  );
}

/** A query (after its `?`) with every value redacted: `key=k&v` -> `key=redacted&redacted`. */
function redactQuery(query: string): string {
  return query
    .split("&")
    .map((param) => {
      if (param === "") return param;
      const eq = param.indexOf("=");
      return eq < 0 ? REDACTED : `${param.slice(0, eq)}=${REDACTED}`;
    })
    .join("&");
}

/**
 * A label by the text alone: a userinfo-like prefix dropped, the query redacted, the rest as written (for a URL,
 * `replicaLabel` then checks it with the parser).
 */
function labelOfText(text: string): string {
  const hashAt = text.indexOf("#");
  const [beforeHash, hash] = hashAt < 0 ? [text, ""] : [text.slice(0, hashAt), text.slice(hashAt)];
  const queryAt = beforeHash.indexOf("?");
  const [head, query] =
    queryAt < 0 ? [beforeHash, undefined] : [beforeHash.slice(0, queryAt), beforeHash.slice(queryAt + 1)];
  // Up to the last `@` before the path (after any scheme and slashes): a userinfo, as the URL parser would read it.
  const withoutUserinfo = head.replace(/^([^/\\@]*?:[/\\]*)?[^/\\]*@/, (_, scheme: string | undefined) => scheme ?? "");
  return `${withoutUserinfo}${query === undefined ? "" : `?${redactQuery(query)}`}${hash}`;
}
