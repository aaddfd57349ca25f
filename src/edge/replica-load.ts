import { QUEUE_LENGTH_STALE_MS } from "../core/queue-length-cache";
import { type PromSample, parsePrometheusText } from "./prometheus-text";
import { replicaLabel } from "./replica-label";
import {
  isCount,
  isFraction,
  PROBE_PAGE_MAX_BYTES,
  probePageText,
  type ReplicaTarget,
  readMetrics,
  servedStale,
} from "./replica-probe";
import { replicaUrl } from "./replica-url";
import { signedGet } from "./signed-get";

/** What the dashboard shows of one engine server: its `/load` and a few `/metrics` series. */
export interface ReplicaLoad {
  /** The replica's URL, its credentials redacted (`replicaLabel`). */
  replica: string;
  /** `true` when both `/load` and `/metrics` answered. */
  ok: boolean;
  queueLength: number | null;
  running: number | null;
  waiting: number | null;
  /** KV token usage, 0..1; null when unknown or out of that range. */
  tokenUsage: number | null;
  /** `sglang:num_retracted_requests_total`. */
  retractions: number | null;
  /** `sglang:gen_throughput`, tokens/s. */
  genThroughput: number | null;
  error?: string;
}

/**
 * Reads the value of the first sample of `name` in Prometheus text exposition (any labels) whose value is finite;
 * `null` when there is none. Each line is read by the strict parser (blanks or tabs between tokens, a timestamp
 * after the value, `\r\n`); a line that is not a well-formed sample is skipped.
 *
 * @example
 * ```ts
 * promValue('sglang:token_usage{model_name="m"} 0.25\n', "sglang:token_usage"); // 0.25
 * ```
 */
export function promValue(text: string, name: string): number | null {
  for (const line of text.split("\n")) {
    if (!line.trimStart().startsWith(name)) continue;
    let sample: PromSample | undefined;
    try {
      [sample] = parsePrometheusText(`${line}\n`);
    } catch {
      continue; // not a well-formed sample line
    }
    if (sample?.name === name && Number.isFinite(sample.value)) return sample.value;
  }
  return null;
}

async function get(url: string, secret: string | undefined, timeoutMs: number): Promise<Response> {
  const res = await signedGet(url, secret, AbortSignal.timeout(timeoutMs));
  if (!res.ok) throw new Error(`${new URL(url).pathname} answered ${res.status}`);
  return res;
}

/** A page's text, refused past the probe's bound (`PROBE_PAGE_MAX_BYTES`), as the router's probe refuses it. */
async function pageText(url: string, res: Response): Promise<string> {
  const text = await probePageText(res);
  if (text === undefined) throw new Error(`${new URL(url).pathname} answered more than ${PROBE_PAGE_MAX_BYTES} bytes`);
  return text;
}

/** A `/metrics` page's text, refused as the router's probe refuses it when a cache served it stale (`Age`). */
async function getMetrics(url: string, secret: string | undefined, timeoutMs: number): Promise<string> {
  const res = await get(url, secret, timeoutMs);
  if (servedStale(res, QUEUE_LENGTH_STALE_MS)) {
    await res.body?.cancel();
    throw new Error(`${new URL(url).pathname} served stale (age ${res.headers.get("age")} s)`);
  }
  return pageText(url, res);
}

/**
 * Fetches a replica's `/load` and `/metrics` (signed when a secret is set, as the router's probes are). A
 * replica that does not answer in `timeoutMs` reads as `ok: false` with nulls; it never throws. A vLLM, SGLang or
 * TGI replica is read from `/metrics` alone; a `none` replica is not asked at all (`ok: false`, nulls). What the
 * router's probe reads as unknown is unknown (null) here too: a `/load` count that is not one (negative, or not
 * finite), and a `/metrics` page a cache served stale (`Age` over 10 s, or not one integer: not answered, `ok: false`).
 *
 * @example
 * ```ts
 * const load = await replicaLoad({ url: "http://127.0.0.1:8001", load: "spillway" }, env.SPILLWAY_SIGNING_SECRET);
 * load.tokenUsage; // 0.42
 * ```
 */
export async function replicaLoad(
  target: ReplicaTarget,
  secret: string | undefined,
  timeoutMs = 800,
): Promise<ReplicaLoad> {
  const replica = target.url;
  if (target.load !== "spillway") return metricsOnlyLoad(target, secret, timeoutMs);
  const result = unknownLoad(replicaLabel(replica));
  // Counts as the router's probe reads them: a negative one is no reading, not an idle replica.
  const count = (v: unknown) => (isCount(v) ? v : null);
  // Usage as readMetrics reads it: outside 0..1 it is unknown, not a negative or absurd percent on the page.
  const fraction = (v: unknown) => (isFraction(v) ? v : null);
  const loadUrl = replicaUrl(replica, "/load");
  const [load, metrics] = await Promise.allSettled([
    get(loadUrl, secret, timeoutMs).then(
      async (r) => JSON.parse(await pageText(loadUrl, r)) as Record<string, unknown> | null,
    ),
    getMetrics(replicaUrl(replica, "/metrics"), secret, timeoutMs),
  ]);
  if (load.status === "fulfilled") {
    // `null` is JSON too (a proxy's answer): no figures, and no TypeError out of a function that never throws.
    result.queueLength = count(load.value?.queueLength);
    result.running = count(load.value?.running);
    result.waiting = count(load.value?.waiting);
    result.tokenUsage = fraction(load.value?.tokenUsage);
  }
  if (metrics.status === "fulfilled") {
    result.retractions = promValue(metrics.value, "sglang:num_retracted_requests_total");
    result.genThroughput = promValue(metrics.value, "sglang:gen_throughput");
    result.tokenUsage ??= fraction(promValue(metrics.value, "sglang:token_usage"));
  }
  result.ok = load.status === "fulfilled" && metrics.status === "fulfilled";
  const failed = [load, metrics].find((r) => r.status === "rejected");
  if (failed) result.error = String((failed as PromiseRejectedResult).reason);
  return result;
}

/** A replica's load before anything is known: every figure unknown (null), never read as idle. `replica`: its label. */
function unknownLoad(replica: string): ReplicaLoad {
  return {
    replica,
    ok: false,
    queueLength: null,
    running: null,
    waiting: null,
    tokenUsage: null,
    retractions: null,
    genThroughput: null,
  };
}

/** A replica that is not spillway's engine: its `/metrics` read as the router's probe reads it. */
async function metricsOnlyLoad(
  target: ReplicaTarget,
  secret: string | undefined,
  timeoutMs: number,
): Promise<ReplicaLoad> {
  const result = unknownLoad(replicaLabel(target.url));
  const load = target.load;
  if (load === "none" || load === "spillway") return { ...result, error: 'load "none": never probed' };
  try {
    const text = await getMetrics(replicaUrl(target.url, "/metrics"), secret, timeoutMs);
    const reading = readMetrics(load, text, { model: target.model, nowMs: Date.now() });
    if (!reading) return { ...result, error: "unreadable /metrics" };
    return { ...result, ok: true, queueLength: reading.queueLength, tokenUsage: reading.tokenUsage };
  } catch (error) {
    return { ...result, error: String(error) };
  }
}
