import { percentile } from "../stats";

/** The outcome of a closed-loop load run. */
export interface LoadResult {
  requests: number;
  seconds: number;
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
}

/**
 * A closed-loop load generator: `concurrency` workers each send `POST url` with `body` until `total` requests
 * were sent, reading every response to the end. Bounded by `total`. `body` may be a function of the request's
 * number (from 0), for requests that differ (distinct bodies have distinct fingerprints at the edge).
 *
 * @example
 * ```ts
 * const r = await closedLoopLoad("http://127.0.0.1:8787/v1/completions", body, 32, 2000);
 * console.log(r.throughput, r.p99Ms);
 * ```
 */
export async function closedLoopLoad(
  url: string,
  body: string | ((n: number) => string),
  concurrency: number,
  total: number,
  headers: Record<string, string> = {},
): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let sent = 0;
  const started = performance.now();
  const worker = async () => {
    while (sent < total) {
      const n = sent;
      sent += 1;
      const t0 = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : body(n),
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    requests: total,
    seconds,
    throughput: total / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
  };
}
