/**
 * A URL on a replica, keeping the replica's own base path (a replica may sit behind a prefix, e.g.
 * `https://gpu.example/llama`), unlike `new URL(path, base)` which would drop it. A query on the replica's URL (a
 * gateway's `?key=...`) stays a query, ahead of the request's own; a fragment on it is never sent, so it is dropped
 * (appended to, it would have swallowed the path and query).
 *
 * @example
 * ```ts
 * replicaUrl("https://gpu.example/llama/", "/v1/completions?x=1"); // "https://gpu.example/llama/v1/completions?x=1"
 * replicaUrl("https://gw.example/llama?key=k", "/load"); // "https://gw.example/llama/load?key=k"
 * ```
 */
export function replicaUrl(replica: string, pathAndSearch: string): string {
  const [base, baseQuery] = splitQuery(replica.split("#", 1)[0] as string);
  const root = base.replace(/\/+$/, "");
  if (baseQuery === "") return root + pathAndSearch;
  const [path, query] = splitQuery(pathAndSearch);
  return `${root}${path}?${baseQuery}${query === "" ? "" : `&${query}`}`;
}

/** A URL (or a path) before its first `?`, and what follows it (empty when there is none). */
function splitQuery(url: string): [string, string] {
  const at = url.indexOf("?");
  return at < 0 ? [url, ""] : [url.slice(0, at), url.slice(at + 1)];
}
