/**
 * A URL on a replica, keeping the replica's own base path (a replica may sit behind a prefix, e.g.
 * `https://gpu.example/llama`), unlike `new URL(path, base)` which would drop it.
 *
 * @example
 * ```ts
 * replicaUrl("https://gpu.example/llama/", "/v1/completions?x=1"); // "https://gpu.example/llama/v1/completions?x=1"
 * ```
 */
export function replicaUrl(replica: string, pathAndSearch: string): string {
  return replica.replace(/\/+$/, "") + pathAndSearch;
}
