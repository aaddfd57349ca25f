import { describe, expect, it } from "vitest";
import { parsePrometheusText } from "../../../src/edge/prometheus-text";
import { createEngineMetrics, pythonLe } from "../../../src/engine/metrics";

/**
 * The engine's `/metrics` against SGLang's own definitions, so that a dashboard, alert or scraper written for
 * SGLang reads ours unchanged. The values below are copied from SGLang's source:
 * sgl-project/sglang python/sglang/srt/observability/metrics_collector.py at commit
 * 44cedc2b9c7dd31d9acae4498ea4fa0d3665feed (`TokenizerMetricsCollector`: the latency histograms' default
 * buckets); python/sglang/srt/metrics/collector.py at 00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538 has the same.
 */

/** The `le` bounds a histogram renders, `+Inf` left out, as numbers. */
async function bounds(name: string, observe: (m: ReturnType<typeof createEngineMetrics>) => void): Promise<number[]> {
  const m = createEngineMetrics("demo-model");
  observe(m);
  return parsePrometheusText(await m.registry.metrics())
    .filter((s) => s.name === `${name}_bucket` && s.labels.le !== "+Inf")
    .map((s) => Number(s.labels.le));
}

describe("engine metrics: SGLang's histogram buckets", () => {
  it("time_to_first_token_seconds: SGLang's bucket_time_to_first_token default", async () => {
    expect(await bounds("sglang:time_to_first_token_seconds", (m) => m.timeToFirstToken.observe(0.5))).toEqual([
      0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400,
    ]);
  });

  it("inter_token_latency_seconds: SGLang's bucket_inter_token_latency default (up to 8 s)", async () => {
    expect(await bounds("sglang:inter_token_latency_seconds", (m) => m.interTokenLatency.observe(0.01))).toEqual([
      0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1,
      2, 4, 6, 8,
    ]);
  });

  it("e2e_request_latency_seconds: SGLang's bucket_e2e_request_latency default (up to 2400 s)", async () => {
    expect(await bounds("sglang:e2e_request_latency_seconds", (m) => m.e2eRequestLatency.observe(3))).toEqual([
      0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400,
    ]);
  });

  it("queue_time_seconds: SGLang's SchedulerMetricsCollector.queue_time buckets", async () => {
    expect(await bounds("sglang:queue_time_seconds", (m) => m.queueTime.observe(1))).toEqual([
      0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800,
      900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
    ]);
  });
});

/**
 * SGLang's scheduler labels (its `init_metrics`, sgl-project/sglang
 * python/sglang/srt/observability/scheduler_metrics_mixin.py at 44cedc2b9c7dd31d9acae4498ea4fa0d3665feed:
 * `model_name`, `engine_type`, `tp_rank`, `pp_rank`, `moe_ep_rank`, then `dp_rank` only under data parallelism),
 * in the order SGLang's `/metrics` writes them: sorted by name, as prometheus_client's MultiProcessCollector
 * writes every series (SGLang runs in multiprocess mode: python/sglang/srt/utils/common.py at
 * 4e75f4684b6b67cbb5a02b4106cf1b629d616dba, `set_prometheus_multiproc_dir`) and whose `generate_latest` writes
 * `sorted(labels.items())`. The tokenizer manager's series carry `model_name`.
 */
describe("engine metrics: SGLang's label sets, in the order SGLang's page writes them", () => {
  it("a scheduler series carries model_name, engine_type, tp_rank, pp_rank and moe_ep_rank", async () => {
    const m = createEngineMetrics("demo-model");
    m.numRunningReqs.set(3);
    m.queueTime.observe(1);
    const text = await m.exposition();
    expect(text).toContain(
      'sglang:num_running_reqs{engine_type="unified",model_name="demo-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 3\n',
    );
    expect(text).toContain(
      'sglang:queue_time_seconds_count{engine_type="unified",model_name="demo-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 1\n',
    );
  });

  it("a request series carries model_name only", async () => {
    const m = createEngineMetrics("demo-model");
    m.numRequestsTotal.inc();
    expect(await m.exposition()).toContain('sglang:num_requests_total{model_name="demo-model"} 1\n');
  });
});

/**
 * `# HELP` and `# TYPE` as SGLang writes them: `documentation` strings word for word from sgl-project/sglang
 * python/sglang/srt/observability/metrics_collector.py at 44cedc2b9c7dd31d9acae4498ea4fa0d3665feed.
 */
const SGLANG_HELP: Record<string, [type: string, help: string]> = {
  num_running_reqs: ["gauge", "The number of running requests."],
  num_used_tokens: ["gauge", "The number of used tokens."],
  token_usage: ["gauge", "The token usage."],
  gen_throughput: ["gauge", "The generation throughput (token/s)."],
  num_queue_reqs: ["gauge", "The number of requests in the waiting queue."],
  cache_hit_rate: ["gauge", "The prefix cache hit rate."],
  max_total_num_tokens: ["gauge", "Maximum total number of tokens in the KV cache pool."],
  new_token_ratio: ["gauge", "The new token ratio."],
  num_retracted_reqs: ["gauge", "The number of retracted requests."],
  num_retracted_requests_total: ["counter", "Total number of retracted requests."],
  num_retracted_input_tokens_total: ["counter", "Total number of retracted input tokens."],
  num_retracted_output_tokens_total: ["counter", "Total number of retracted output tokens."],
  prompt_tokens_total: ["counter", "Number of prefill tokens processed."],
  generation_tokens_total: ["counter", "Number of generation tokens processed."],
  cached_tokens_total: ["counter", "Number of cached prompt tokens by source (device/host/storage)."],
  num_requests_total: ["counter", "Number of requests processed."],
  num_aborted_requests_total: ["counter", "Number of requests aborted."],
  time_to_first_token_seconds: ["histogram", "Histogram of time to first token in seconds."],
  inter_token_latency_seconds: ["histogram", "Histogram of inter-token latency in seconds."],
  e2e_request_latency_seconds: ["histogram", "Histogram of End-to-end request latency in seconds"],
  queue_time_seconds: ["histogram", "Histogram of queueing time in seconds."],
};

describe("engine metrics: SGLang's HELP and TYPE lines", () => {
  it.each(Object.entries(SGLANG_HELP))("sglang:%s", async (name, [type, help]) => {
    const text = await createEngineMetrics("demo-model").exposition();
    expect(text).toContain(`# HELP sglang:${name} ${help}\n# TYPE sglang:${name} ${type}\n`);
  });

  it("exports no sglang: family that SGLang does not define (names above)", async () => {
    const text = await createEngineMetrics("demo-model").exposition();
    const families = [...text.matchAll(/^# TYPE sglang:(\S+) /gm)].map((m) => m[1]);
    expect(families.sort()).toEqual(Object.keys(SGLANG_HELP).sort());
  });
});

/**
 * `le` as SGLang's exposition writes it: Python's prometheus_client `floatToGoString` (`repr(float(x))`, Go's
 * exponent from 10^6), sorted among the series' other labels as every label is (`generate_latest`:
 * `sorted(labels.items())`; SGLang's docs show `sglang:e2e_request_latency_seconds_bucket{le="0.3",model_name=...}`).
 * prom-client writes `le="1"`; Prometheus before 3.0 compares `le` as text, so a rule naming SGLang's `le="1.0"`
 * bucket would miss ours.
 */
describe("engine metrics: SGLang's le label", () => {
  it.each([
    [0, "0.0"],
    [0.1, "0.1"],
    [0.002, "0.002"],
    [1, "1.0"],
    [2400, "2400.0"],
    [1e-5, "1e-05"],
    [1e6, "1e+06"],
    [1234567, "1.234567e+06"],
    [Number.POSITIVE_INFINITY, "+Inf"],
  ])("pythonLe(%s) is %s", (x, text) => {
    expect(pythonLe(x)).toBe(text);
  });

  it("the /metrics text writes each bucket's le as Python does, sorted among the labels", async () => {
    const m = createEngineMetrics("demo-model");
    m.timeToFirstToken.observe(0.5);
    m.queueTime.observe(0);
    const text = await m.exposition();
    expect(text).toContain('sglang:time_to_first_token_seconds_bucket{le="1.0",model_name="demo-model"} 1\n');
    expect(text).toContain('sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="demo-model"} 1\n');
    expect(text).toContain(
      'sglang:queue_time_seconds_bucket{engine_type="unified",le="0.0",model_name="demo-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 1\n',
    );
  });

  it("sorts labels whose values hold quotes, braces and commas without splitting them", async () => {
    const m = createEngineMetrics('a "b", {c}=\\d');
    m.timeToFirstToken.observe(0.5);
    const text = await m.exposition();
    expect(text).toContain('sglang:time_to_first_token_seconds_bucket{le="1.0",model_name="a \\"b\\", {c}=\\\\d"} 1\n');
  });
});
