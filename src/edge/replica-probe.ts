import { QUEUE_LENGTH_STALE_MS } from "../core/queue-length-cache";
import { isRedirect } from "./forward";
import { matching, type PromSample, parsePrometheusText, sumSamples } from "./prometheus-text";
import { readLimited } from "./read-limited";
import { replicaUrl } from "./replica-url";
import { signedGet } from "./signed-get";

/**
 * Where a replica's load comes from: spillway's engine (`GET /load`), a vLLM, SGLang or TGI server's
 * Prometheus `GET /metrics`, or nothing at all (`none`: the router counts its own requests in flight there).
 */
export const LOAD_SOURCES = ["spillway", "vllm", "sglang", "tgi", "none"] as const;
/** One of `LOAD_SOURCES`. */
export type LoadSource = (typeof LOAD_SOURCES)[number];

/** One replica of a deployment, as the validated configuration describes it. */
export interface ReplicaTarget {
  /** Base URL; the router's id of the replica. */
  url: string;
  load: LoadSource;
  /** Only samples with `model_name="<model>"` count (vLLM and SGLang label their gauges so). Unset: all of them. */
  model?: string;
}

/** What one probe says: a queue length, `undefined` (failed or unknown) or `"timeout"` (missed its deadline). */
export type ProbeAnswer = number | undefined | "timeout";

/** A replica's load read from its `/metrics`. */
export interface MetricsReading {
  /** Requests the server holds: running plus waiting. */
  queueLength: number;
  /** KV cache usage, 0..1, when the server exports it (a value outside 0..1 is none: see `isFraction`). */
  tokenUsage: number | null;
}

/**
 * The gauges each server exports: queue length is the sum of `queue`, token usage the mean of `usage`.
 * `rankCopies` are the labels that tell apart copies of one scheduler's figures: SGLang runs one scheduler per
 * tensor- and pipeline-parallel rank, all holding the same requests (their schedules are kept in step across
 * ranks); only rank 0 of each data-parallel group exports by default, but with `--enable-metrics-for-all-schedulers`
 * every rank exports the same queue under its own `tp_rank` / `pp_rank` (and, in current SGLang, `moe_ep_rank`:
 * each scheduler process gets `tp_rank // (tp_size // ep_size)`), and a sum would count it once per rank.
 */
const METRICS: Record<
  Exclude<LoadSource, "spillway" | "none">,
  { queue: string[]; usage: string[]; rankCopies: string[] }
> = {
  // vLLM >= 0.10 renamed gpu_cache_usage_perc to kv_cache_usage_perc (both are fractions, 0..1).
  vllm: {
    queue: ["vllm:num_requests_running", "vllm:num_requests_waiting"],
    usage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
    rankCopies: [],
  },
  sglang: {
    queue: ["sglang:num_running_reqs", "sglang:num_queue_reqs"],
    usage: ["sglang:token_usage"],
    rankCopies: ["tp_rank", "pp_rank", "moe_ep_rank"],
  },
  tgi: { queue: ["tgi_queue_size", "tgi_batch_current_size"], usage: [], rankCopies: [] },
};

/** Credentials a probe carries. */
export interface ProbeCredentials {
  /** spillway's signing secret: probes are signed as forwarded requests are (spillway's engine may require it). */
  signingSecret?: string;
  /** The deployment's upstream credential, sent as `Authorization: Bearer ...` (a proxy in front may want it). */
  upstreamApiKey?: string;
}

/**
 * Reads a replica's load from its Prometheus page: every label set of a queue gauge summed (vLLM's `engine`s,
 * SGLang's `dp_rank`s), except that SGLang series differing only in `tp_rank` / `pp_rank` / `moe_ep_rank` are one
 * scheduler's copies and count once. Unknown (`undefined`) when the page is malformed or cut off,
 * when any gauge the sum needs is missing (a partial page is not an idle replica), when any of its samples is
 * not a count (NaN, ±Inf or negative: one series' -3 must not cancel another's 3) or the total overflows, or when
 * a sample carries a timestamp older than `staleMs` (an exporter replaying old values).
 *
 * @example
 * ```ts
 * readMetrics("vllm", 'vllm:num_requests_running{model_name="m"} 2.0\nvllm:num_requests_waiting{model_name="m"} 1.0\n', {
 *   nowMs: Date.now(),
 * }); // { queueLength: 3, tokenUsage: null }
 * ```
 */
export function readMetrics(
  load: Exclude<LoadSource, "spillway" | "none">,
  text: string,
  { model, nowMs, staleMs = QUEUE_LENGTH_STALE_MS }: { model?: string; nowMs: number; staleMs?: number },
): MetricsReading | undefined {
  let samples: PromSample[];
  try {
    samples = parsePrometheusText(text);
  } catch {
    return undefined;
  }
  const where: Record<string, string> = model === undefined ? {} : { model_name: model };
  const { queue, usage, rankCopies } = METRICS[load];
  let queueLength = 0;
  for (const name of queue) {
    const used = matching(samples, name, where);
    if (used.length === 0) return undefined;
    if (used.some((s) => s.timestampMs !== undefined && nowMs - s.timestampMs > staleMs)) return undefined;
    // Each sample must be a count: one series' -3 must not cancel another's 3 into an idle replica.
    if (!used.every((s) => isCount(s.value))) return undefined;
    queueLength += rankCopies.length > 0 ? sumOverSchedulers(used, rankCopies) : (sumSamples(used, name) as number);
  }
  if (!Number.isFinite(queueLength)) return undefined;
  let tokenUsage: number | null = null;
  for (const name of usage) {
    // Only fractions: a -0.5 or a 1.5 is no usage reading, and must not pull the mean of the others either way.
    const used = matching(samples, name, where).filter((s) => isFraction(s.value));
    if (used.length === 0) continue;
    // Data-parallel engines each report their own cache: the mean is the deployment replica's fill.
    tokenUsage = used.reduce((total, s) => total + s.value, 0) / used.length;
    break;
  }
  return { queueLength, tokenUsage };
}

/**
 * The sum of one gauge's samples over the schedulers that export them, each scheduler counted once: samples whose
 * labels differ only in `copyLabels` are one scheduler's copies, and the largest of them counts (copies scraped
 * between two of the ranks' updates may differ; the replica is never read as less busy than one of them says).
 */
function sumOverSchedulers(samples: readonly PromSample[], copyLabels: readonly string[]): number {
  const byScheduler = new Map<string, number>();
  for (const sample of samples) {
    const scheduler = JSON.stringify(
      Object.entries(sample.labels)
        .filter(([label]) => !copyLabels.includes(label))
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    byScheduler.set(scheduler, Math.max(byScheduler.get(scheduler) ?? 0, sample.value));
  }
  let total = 0;
  for (const value of byScheduler.values()) total += value;
  return total;
}

/**
 * A queue length a replica may report: a finite number, not below 0 (anything else is no reading). The router's
 * probe and the dashboard read a replica's counts by it alike.
 *
 * @example
 * ```ts
 * isCount(3); // true
 * isCount(-1); // false: no reading, not a free replica
 * ```
 */
export function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/**
 * A KV token usage a replica may report: a fraction of its cache, 0 to 1 (vLLM's `kv_cache_usage_perc`, SGLang's
 * `token_usage` and spillway's `/load` `tokenUsage` all are); anything else (negative, above 1, NaN, ±Inf) is no
 * reading, not a negative or absurd percent. The router's probe and the dashboard read usage by it alike.
 *
 * @example
 * ```ts
 * isFraction(0.42); // true
 * isFraction(1.5); // false: unknown usage
 * ```
 */
export function isFraction(value: unknown): value is number {
  return typeof value === "number" && value >= 0 && value <= 1;
}

/**
 * A proxy cache's `Age` older than the stale limit means the page is not the server's present state; an `Age` that
 * is not one non-negative integer of seconds (RFC 9111 5.1: `"abc"`, `"-5"`, `"1.5"`, `"Infinity"`, or a list
 * such as `"30, 30"`, as fetch combines duplicate headers) says a cache served the page but not how long ago, so
 * the page's freshness is unknown and it counts as stale too. No `Age` at all: not from a cache, fresh. The router's
 * probe and the dashboard both read such a `/metrics` page as no reading.
 *
 * @example
 * ```ts
 * servedStale(new Response("", { headers: { age: "60" } }), QUEUE_LENGTH_STALE_MS); // true
 * servedStale(new Response("", { headers: { age: "5, 5" } }), QUEUE_LENGTH_STALE_MS); // true: unknown age
 * servedStale(new Response("", { headers: { age: "5" } }), QUEUE_LENGTH_STALE_MS); // false
 * ```
 */
export function servedStale(res: Response, staleMs: number): boolean {
  const age = res.headers.get("age");
  if (age === null) return false;
  // Digits only (delta-seconds): Number() would read "" as 0 and "abc" or "30, 30" as NaN, and both as fresh.
  if (!/^[0-9]+$/.test(age)) return true;
  return Number(age) * 1000 > staleMs;
}

/**
 * The most a probe reads of a replica's `/load` or `/metrics` page. vLLM's and SGLang's pages are tens to hundreds of
 * kilobytes; the probe runs in the router's Durable Object, whose isolate every request of the deployment shares,
 * so a page far larger (a wrong URL that serves a file, a misbehaving proxy) is not read whole: unreadable.
 */
export const PROBE_PAGE_MAX_BYTES = 4 * 1024 * 1024;

const decoder = new TextDecoder();

/**
 * A probe page's text; `undefined` past {@link PROBE_PAGE_MAX_BYTES} (the rest cancelled, never read).
 *
 * @example
 * ```ts
 * const text = await probePageText(await fetch("http://10.0.0.5:30000/metrics"));
 * ```
 */
export async function probePageText(res: Response): Promise<string | undefined> {
  const bytes = await readLimited(res.body, PROBE_PAGE_MAX_BYTES);
  return bytes === undefined ? undefined : decoder.decode(bytes);
}

function tooLarge(path: string): ProbeFailure {
  return {
    reason: "unreadable",
    detail: `GET ${path} answered more than ${PROBE_PAGE_MAX_BYTES} bytes, not read: is the replica's URL right?`,
  };
}

async function fetchProbe(url: string, deadline: AbortSignal, credentials: ProbeCredentials): Promise<Response> {
  const headers = credentials.upstreamApiKey ? { authorization: `Bearer ${credentials.upstreamApiKey}` } : undefined;
  return signedGet(url, credentials.signingSecret, deadline, headers);
}

/**
 * Why a probe read no queue length: `timeout` (no answer within the deadline), `unreachable` (the request failed:
 * refused, reset, no such host, a body cut off), `status` (an answer that is not 2xx: a 401 for a missing
 * upstream key, a 404 for a wrong `load` or URL, a 3xx never followed), `stale` (a cache's old copy of `/metrics`)
 * or `unreadable` (an answer with no count in it: a `/metrics` page without the gauges its `load` names, a `/load`
 * that is not JSON). `detail` says it in a sentence, for a log line.
 */
export interface ProbeFailure {
  reason: "timeout" | "unreachable" | "status" | "stale" | "unreadable";
  /** The answer's HTTP status, for `status`. */
  status?: number;
  detail: string;
}

/** A probe's answer with, when it read no queue length, why (see {@link probeReplicaWithReason}). */
export type ProbeResult = { answer: number } | { answer: undefined | "timeout"; failure: ProbeFailure };

/**
 * Asks one replica for its queue length within `deadlineMs`: spillway's engine by `GET /load`, vLLM, SGLang and
 * TGI by `GET /metrics`. A missed deadline reads as `"timeout"` (slow), any other failure or an unreadable
 * answer as `undefined` (a `/load` whose `queueLength` is not a finite count >= 0 included: the core would count a
 * negative one as 0, a free replica). A `none` replica is never probed (the router counts for it); asking anyway is a bug.
 *
 * @example
 * ```ts
 * await probeReplica({ url: "http://10.0.0.5:8000", load: "vllm" }, 250, {}); // 7
 * ```
 */
export async function probeReplica(
  target: ReplicaTarget,
  deadlineMs: number,
  credentials: ProbeCredentials,
  now: () => number = Date.now,
): Promise<ProbeAnswer> {
  return (await probeReplicaWithReason(target, deadlineMs, credentials, now)).answer;
}

/**
 * {@link probeReplica}'s answer (the same, always), and when it is no count, why: what the router logs when a
 * replica goes down (`spillway.replica_down`, see replica-probe-log.ts).
 *
 * @example
 * ```ts
 * await probeReplicaWithReason({ url: "http://10.0.0.5:30000", load: "vllm" }, 250, {});
 * // { answer: undefined, failure: { reason: "unreadable", detail: "GET /metrics has no vllm:num_requests_running
 * //   sample; the page has sglang's gauges (sglang:num_running_reqs): is the replica's load right?" } }
 * ```
 */
export async function probeReplicaWithReason(
  target: ReplicaTarget,
  deadlineMs: number,
  credentials: ProbeCredentials,
  now: () => number = Date.now,
): Promise<ProbeResult> {
  if (target.load === "none") throw new Error(`replica ${target.url} has load "none" and is never probed`);
  const deadline = AbortSignal.timeout(deadlineMs);
  // The path as fetched, under the replica's own base path (a replica configured as `http://host:8000/v1`, the base
  // URL an OpenAI client takes, is probed at /v1/metrics: the detail names it, so the operator sees why).
  const url = replicaUrl(target.url, target.load === "spillway" ? "/load" : "/metrics");
  const path = new URL(url).pathname;
  // Whether an answer arrived: an error before it is the connection's, after it the body's.
  let answered = false;
  const failed = (failure: ProbeFailure): ProbeResult => ({ answer: undefined, failure });
  try {
    if (target.load === "spillway") {
      const res = await fetchProbe(url, deadline, credentials);
      answered = true;
      if (!res.ok) return failed(statusFailure(path, res.status));
      const page = await probePageText(res);
      if (page === undefined) return failed(tooLarge(path));
      const queueLength = (JSON.parse(page) as { queueLength?: unknown } | null)?.queueLength;
      // Only a count: a negative one would read as a free replica (the core counts it as 0).
      return isCount(queueLength)
        ? { answer: queueLength }
        : failed({
            reason: "unreadable",
            detail: `GET /load answered queueLength ${JSON.stringify(queueLength) ?? "undefined"}, not a count`,
          });
    }
    const res = await fetchProbe(url, deadline, credentials);
    answered = true;
    if (!res.ok || servedStale(res, QUEUE_LENGTH_STALE_MS)) {
      await res.body?.cancel();
      return failed(
        res.ok
          ? {
              reason: "stale",
              detail: `GET /metrics came from a cache (age: ${res.headers.get("age")}), not the server`,
            }
          : statusFailure(path, res.status),
      );
    }
    const text = await probePageText(res);
    if (text === undefined) return failed(tooLarge(path));
    const nowMs = now();
    const queueLength = readMetrics(target.load, text, { model: target.model, nowMs })?.queueLength;
    return queueLength === undefined
      ? failed({ reason: "unreadable", detail: whyUnreadable(target.load, text, target.model, nowMs) })
      : { answer: queueLength };
  } catch (error) {
    if (deadline.aborted)
      return {
        answer: "timeout",
        failure: { reason: "timeout", detail: `GET ${path}: no answer within ${deadlineMs} ms` },
      };
    const message = errorMessage(error);
    if (answered && error instanceof SyntaxError)
      return failed({ reason: "unreadable", detail: `GET ${path} is not JSON (${message})` });
    return failed({
      reason: "unreachable",
      detail: answered ? `GET ${path}: the answer was cut off (${message})` : `GET ${path} failed: ${message}`,
    });
  }
}

function statusFailure(path: string, status: number): ProbeFailure {
  const hint =
    status === 401 || status === 403
      ? " (the deployment's upstream key missing or wrong?)"
      : status === 404
        ? " (a wrong URL, or a wrong load source?)"
        : isRedirect(status)
          ? " (a redirect: never followed)"
          : "";
  return { reason: "status", status, detail: `GET ${path} answered ${status}${hint}` };
}

/** An error's message, with its cause's code when it has one (Node's fetch: "fetch failed" caused by ECONNREFUSED). */
function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? `${error.message} (${code})` : error.message;
}

/**
 * Why `readMetrics` read no queue length from `text`, in its own order of checks: what the log says, never
 * what the probe answers (that is `readMetrics`' alone). A page that lacks the gauges `load` names but has another
 * server's says so: the configuration's `load` is the likely fault.
 */
function whyUnreadable(
  load: Exclude<LoadSource, "spillway" | "none">,
  text: string,
  model: string | undefined,
  nowMs: number,
): string {
  let samples: PromSample[];
  try {
    samples = parsePrometheusText(text);
  } catch (error) {
    return `GET /metrics is not Prometheus text (${errorMessage(error)})`;
  }
  const where: Record<string, string> = model === undefined ? {} : { model_name: model };
  for (const name of METRICS[load].queue) {
    const used = matching(samples, name, where);
    if (used.length === 0) {
      if (model !== undefined && matching(samples, name).length > 0)
        return `GET /metrics has no ${name} sample with model_name="${model}" (is the replica's model right?)`;
      const other = (Object.keys(METRICS) as (keyof typeof METRICS)[]).find(
        (kind) => kind !== load && METRICS[kind].queue.some((gauge) => matching(samples, gauge).length > 0),
      );
      const gauges = other && METRICS[other].queue.filter((gauge) => matching(samples, gauge).length > 0);
      return other
        ? `GET /metrics has no ${name} sample; the page has ${other}'s gauges (${gauges?.join(", ")}): is the replica's load right?`
        : `GET /metrics has no ${name} sample (is the replica's load "${load}" right?)`;
    }
    if (used.some((s) => s.timestampMs !== undefined && nowMs - s.timestampMs > QUEUE_LENGTH_STALE_MS))
      return `GET /metrics: ${name} carries a timestamp older than ${QUEUE_LENGTH_STALE_MS / 1000} s`;
    const bad = used.find((s) => !isCount(s.value));
    if (bad) return `GET /metrics: ${name} has a sample that is not a count (${bad.value})`;
  }
  return "GET /metrics: the queue gauges' sum is not a finite count";
}

/**
 * The probe function a deployment's router calls, by replica URL (the router's replica id). `observe`, when
 * given, sees each probe's replica and result, the failure's reason included (the router's probe log).
 *
 * @example
 * ```ts
 * const probe = replicaProber(config.deployments.llama.replicas, { signingSecret: env.SPILLWAY_SIGNING_SECRET });
 * core.reportProbe(replica, await probe(replica, plan.probeDeadlineMs));
 * ```
 */
export function replicaProber(
  replicas: readonly ReplicaTarget[],
  credentials: ProbeCredentials,
  observe?: (target: ReplicaTarget, result: ProbeResult) => void,
): (replica: string, deadlineMs: number) => Promise<ProbeAnswer> {
  const byUrl = new Map(replicas.map((r) => [r.url, r]));
  return async (replica, deadlineMs) => {
    const target = byUrl.get(replica) ?? { url: replica, load: "spillway" };
    const result = await probeReplicaWithReason(target, deadlineMs, credentials);
    try {
      observe?.(target, result);
    } catch {
      // A log line never changes what the router is told.
    }
    return result.answer;
  };
}
