import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * SGLang's default buckets (seconds) for the tokenizer manager's latency histograms (`TokenizerMetricsCollector`
 * in sgl-project/sglang python/sglang/srt/observability/metrics_collector.py, commit 44cedc2b, the same in
 * python/sglang/srt/metrics/collector.py at 00ae9c15). A dashboard's heatmap rows and `histogram_quantile` read
 * these bounds, so they are SGLang's exactly.
 */
const TTFT_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400];
const ITL_BUCKETS = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4,
  6, 8,
];
const E2E_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400];
/** SGLang's `SchedulerMetricsCollector.queue_time` buckets (seconds). */
const QUEUE_TIME_BUCKETS = [
  0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900,
  1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
];

/**
 * The labels SGLang's scheduler puts on its series beside `model_name` (`SchedulerMetricsMixin.init_metrics`:
 * `engine_type`, `tp_rank`, `pp_rank`, `moe_ep_rank`; sgl-project/sglang
 * python/sglang/srt/observability/scheduler_metrics_mixin.py @44cedc2b): gauges, the retraction counters and the
 * queue-time histogram carry them. One engine is one unified (not disaggregated) rank 0 with no expert parallelism.
 */
export const SCHEDULER_LABELS = { engine_type: "unified", tp_rank: "0", pp_rank: "0", moe_ep_rank: "0" } as const;
const SCHEDULER_LABEL_NAMES = ["model_name", ...Object.keys(SCHEDULER_LABELS)];

/** A gauge bound to {@link SCHEDULER_LABELS}. */
export interface SchedulerGauge {
  set(value: number): void;
  inc(value?: number): void;
  get: Gauge["get"];
}

/** A histogram bound to {@link SCHEDULER_LABELS}. */
export interface SchedulerHistogram {
  observe(value: number): void;
  get: Histogram["get"];
}

/** A counter bound to {@link SCHEDULER_LABELS}. */
export interface SchedulerCounter {
  inc(value?: number): void;
  get: Counter["get"];
}

/**
 * A bucket bound as Python's prometheus_client writes it (`floatToGoString`: `repr(float(x))`, so `1` is `1.0`,
 * and Go's exponent form from 10^6 up), which is what SGLang's `/metrics` carries in `le`.
 *
 * @example
 * ```ts
 * pythonLe(1); // "1.0"
 * pythonLe(0.002); // "0.002"
 * pythonLe(Number.POSITIVE_INFINITY); // "+Inf"
 * ```
 */
export function pythonLe(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "+Inf" : "-Inf";
  if (x !== 0 && (Math.abs(x) < 1e-4 || Math.abs(x) >= 1e16)) {
    // Python's repr: shortest digits, an exponent of at least two digits ("1e-05").
    const [mantissa, exponent = "+0"] = x.toExponential().split("e");
    const digits = exponent.slice(1).padStart(2, "0");
    return `${mantissa}e${exponent[0]}${digits}`;
  }
  const repr = Number.isInteger(x) ? `${x}.0` : String(x);
  const dot = repr.indexOf(".");
  if (x > 0 && dot > 6) {
    const mantissa = `${repr[0]}.${repr.slice(1, dot)}${repr.slice(dot + 1)}`.replace(/[0.]+$/, "");
    return `${mantissa}e+0${dot - 1}`;
  }
  return repr;
}

/** One `name="value"` pair of a sample line, its value as written (escapes kept). */
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * prom-client's exposition text written as SGLang's page (Python's prometheus_client) writes it: each sample's
 * labels sorted by name (`generate_latest` writes `sorted(labels.items())`, so `le` and `pid` sort among the
 * others), and each bucket's `le` as {@link pythonLe} writes it. A query or recording rule written for SGLang that
 * names a bucket (`le="1.0"`) selects the same series here (Prometheus before 3.0 compares `le` as text), and a
 * scraper that matches SGLang's lines as text matches ours.
 *
 * @example
 * ```ts
 * sglangExposition('x_bucket{model_name="m",le="1"} 3\n'); // 'x_bucket{le="1.0",model_name="m"} 3\n'
 * ```
 */
export function sglangExposition(text: string): string {
  return text.replace(/^([^#\s{]+)\{(.*)\}( [^}]*)$/gm, (_line, name: string, body: string, value: string) => {
    const pairs = [...body.matchAll(LABEL_PAIR)].map((m) => {
      const label = m[1] ?? "";
      const raw = m[2] ?? "";
      return { label, raw: label === "le" && raw !== "+Inf" ? pythonLe(Number(raw)) : raw };
    });
    pairs.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return `${name}{${pairs.map((p) => `${p.label}="${p.raw}"`).join(",")}}${value}`;
  });
}

/**
 * The engine's Prometheus metrics under SGLang's names and labels, in a per-server {@link Registry} (several
 * servers in one process - tests, the simulator - must not share counters). Every series carries `model_name`,
 * as SGLang's do; the scheduler's series (gauges, retraction counters, `queue_time_seconds`) also carry SGLang's
 * scheduler labels `engine_type`, `tp_rank`, `pp_rank`, `moe_ep_rank` ({@link SCHEDULER_LABELS}), and
 * `num_retracted_reqs` a `pid` too; the request series (request and token counters, the TTFT, inter-token and
 * end-to-end latency histograms) are the tokenizer manager's in SGLang and carry `model_name` only, and
 * `cached_tokens_total` a `cache_source` too. {@link sglangExposition} writes each series' labels sorted by name.
 *
 * Request and token counters count when a request ends (SGLang's `observe_one_finished_request`): a request
 * in flight is in none of them.
 *
 * @example
 * ```ts
 * const m = createEngineMetrics("demo-model");
 * m.numRequestsTotal.inc();
 * const text = await m.exposition();
 * // ... sglang:num_requests_total{model_name="demo-model"} 1
 * // ... sglang:token_usage{engine_type="unified",model_name="demo-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 0
 * ```
 */
export function createEngineMetrics(modelName: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ model_name: modelName });
  const registers = [registry];
  // The order the labels are written in is sglangExposition's (sorted by name, as SGLang's page).
  const schedulerLabels = { model_name: modelName, ...SCHEDULER_LABELS };
  const gauge = (name: string, help: string, extra: Record<string, string> = {}): SchedulerGauge => {
    const labels = { ...schedulerLabels, ...extra };
    const labelNames = [...SCHEDULER_LABEL_NAMES, ...Object.keys(extra)];
    const g = new Gauge({ name: `sglang:${name}`, help, labelNames, registers });
    g.set(labels, 0);
    return {
      set: (value) => g.set(labels, value),
      inc: (value = 1) => g.inc(labels, value),
      get: () => g.get(),
    };
  };
  const schedulerCounter = (name: string, help: string): SchedulerCounter => {
    const c = new Counter({ name: `sglang:${name}`, help, labelNames: SCHEDULER_LABEL_NAMES, registers });
    c.inc(schedulerLabels, 0);
    return { inc: (value = 1) => c.inc(schedulerLabels, value), get: () => c.get() };
  };
  const schedulerHistogram = (name: string, help: string, buckets: number[]): SchedulerHistogram => {
    const h = new Histogram({ name: `sglang:${name}`, help, buckets, labelNames: SCHEDULER_LABEL_NAMES, registers });
    return { observe: (value) => h.observe(schedulerLabels, value), get: () => h.get() };
  };
  const counter = (name: string, help: string) => new Counter({ name: `sglang:${name}`, help, registers });
  const histogram = (name: string, help: string, buckets: number[]) =>
    new Histogram({ name: `sglang:${name}`, help, buckets, registers });
  const cachedTokensCounter = () => {
    const c = new Counter({
      name: "sglang:cached_tokens_total",
      help: "Number of cached prompt tokens by source (device/host/storage).",
      labelNames: ["cache_source"],
      registers,
    });
    return {
      /** Counts `tokens` prompt tokens served from the device prefix cache (nothing for 0, as SGLang). */
      inc: (tokens: number) => {
        if (tokens > 0) c.inc({ cache_source: "device" }, tokens);
      },
      get: () => c.get(),
    };
  };
  // HELP texts are SGLang's `documentation` strings, word for word (sgl-project/sglang
  // python/sglang/srt/observability/metrics_collector.py @44cedc2b); what each series means here is in its comment.
  return {
    registry,
    /** The `/metrics` page: the registry's text written as SGLang's page is (see {@link sglangExposition}). */
    exposition: async () => sglangExposition(await registry.metrics()),
    numRunningReqs: gauge("num_running_reqs", "The number of running requests."),
    /** KV slots in use: running requests and the prefix cache. */
    numUsedTokens: gauge("num_used_tokens", "The number of used tokens."),
    /** (total - free - evictable) / total. */
    tokenUsage: gauge("token_usage", "The token usage."),
    /** Over the last decode log interval. */
    genThroughput: gauge("gen_throughput", "The generation throughput (token/s)."),
    numQueueReqs: gauge("num_queue_reqs", "The number of requests in the waiting queue."),
    /** Over the last prefill batch. */
    cacheHitRate: gauge("cache_hit_rate", "The prefix cache hit rate."),
    /** The KV pool size in tokens. */
    maxTotalNumTokens: gauge("max_total_num_tokens", "Maximum total number of tokens in the KV cache pool."),
    /** The new-token ratio admission uses now. */
    newTokenRatio: gauge("new_token_ratio", "The new token ratio."),
    /**
     * Requests retracted in the log interval that the latest prefill or decode log line closed (SGLang's gauge).
     * SGLang leaves this gauge in prometheus_client's default multiprocess mode ("all", no `multiprocess_mode`
     * given, unlike its other gauges' "mostrecent"), so its page has one series per scheduler process, labelled
     * `pid`; ours is this process's.
     */
    numRetractedReqs: gauge("num_retracted_reqs", "The number of retracted requests.", { pid: String(process.pid) }),
    numRetractedRequestsTotal: schedulerCounter("num_retracted_requests_total", "Total number of retracted requests."),
    /** Prompt tokens of retracted requests. */
    numRetractedInputTokensTotal: schedulerCounter(
      "num_retracted_input_tokens_total",
      "Total number of retracted input tokens.",
    ),
    /** Output tokens held by requests when retracted. */
    numRetractedOutputTokensTotal: schedulerCounter(
      "num_retracted_output_tokens_total",
      "Total number of retracted output tokens.",
    ),
    /** Prompt tokens of finished requests. */
    promptTokensTotal: counter("prompt_tokens_total", "Number of prefill tokens processed."),
    /** Generated tokens of finished requests. */
    generationTokensTotal: counter("generation_tokens_total", "Number of generation tokens processed."),
    /**
     * Prompt tokens of finished requests found in the prefix cache, under `cache_source="device"`: SGLang's
     * scheduler reports an engine without a hierarchical cache's hits as `{"device": cached_tokens, "host": 0}`
     * ("host" / "storage_<backend>" are HiCache's tiers). As SGLang, a request without a hit adds nothing, and the
     * series appears with the first hit.
     */
    cachedTokensTotal: cachedTokensCounter(),
    /** Requests that finished, for any reason. */
    numRequestsTotal: counter("num_requests_total", "Number of requests processed."),
    /** Requests aborted (the client left, or out of memory). */
    numAbortedRequestsTotal: counter("num_aborted_requests_total", "Number of requests aborted."),
    timeToFirstToken: histogram(
      "time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      TTFT_BUCKETS,
    ),
    interTokenLatency: histogram(
      "inter_token_latency_seconds",
      "Histogram of inter-token latency in seconds.",
      ITL_BUCKETS,
    ),
    e2eRequestLatency: histogram(
      "e2e_request_latency_seconds",
      "Histogram of End-to-end request latency in seconds",
      E2E_BUCKETS,
    ),
    /** Time from arrival to first admission. */
    queueTime: schedulerHistogram("queue_time_seconds", "Histogram of queueing time in seconds.", QUEUE_TIME_BUCKETS),
  };
}

/** The engine's metric set (see {@link createEngineMetrics}). */
export type EngineMetrics = ReturnType<typeof createEngineMetrics>;
