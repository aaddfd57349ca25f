import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PromSample, parsePrometheusText } from "../../../src/edge/prometheus-text";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";

/**
 * The engine's `/metrics` carries SGLang's label sets (README, "engine server"): the scheduler's series
 * (`SchedulerMetricsCollector`: gauges, retraction counters, `queue_time_seconds`) carry `engine_type`, `tp_rank`,
 * `pp_rank` and `moe_ep_rank` beside `model_name`; the tokenizer manager's request series (request and token counters, the
 * TTFT, inter-token and end-to-end latency histograms) carry `model_name` only. A dashboard or an alert written
 * for SGLang selects series by these labels.
 */

const SCHEDULER = { model_name: "demo-model", engine_type: "unified", tp_rank: "0", pp_rank: "0", moe_ep_rank: "0" };
const REQUEST = { model_name: "demo-model" };

describe("engine /metrics: SGLang's label sets", () => {
  let server: RunningEngineServer;
  let samples: PromSample[];

  beforeAll(async () => {
    server = await startEngineServer({ port: 0, speed: 1000, log: () => {} });
    const res = await fetch(`${server.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-model", prompt: "hello there", max_tokens: 4, ignore_eos: true }),
    });
    expect(res.status).toBe(200);
    await res.text();
    samples = parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text());
  });
  afterAll(() => server.close());

  /** Every sample of a metric family (histograms: `_bucket`, `_sum`, `_count`), its `le` label left out. */
  const family = (name: string) =>
    samples
      .filter((s) => [name, `${name}_bucket`, `${name}_sum`, `${name}_count`].includes(s.name))
      .map(({ labels: { le: _le, ...labels } }) => labels);

  it.each([
    "sglang:num_running_reqs",
    "sglang:num_queue_reqs",
    "sglang:token_usage",
    "sglang:num_retracted_requests_total",
    "sglang:queue_time_seconds",
  ])("%s is the scheduler's: model_name, engine_type, tp_rank, pp_rank and moe_ep_rank", (name) => {
    const labels = family(name);
    expect(labels.length, name).toBeGreaterThan(0);
    for (const l of labels) expect(l).toEqual(SCHEDULER);
  });

  it("sglang:num_retracted_reqs also carries pid, the engine process's (SGLang's gauge in prometheus_client's 'all' mode)", () => {
    const labels = family("sglang:num_retracted_reqs");
    expect(labels).toEqual([{ ...SCHEDULER, pid: String(process.pid) }]);
  });

  it.each([
    "sglang:num_requests_total",
    "sglang:prompt_tokens_total",
    "sglang:generation_tokens_total",
    "sglang:time_to_first_token_seconds",
    "sglang:inter_token_latency_seconds",
    "sglang:e2e_request_latency_seconds",
  ])("%s is the tokenizer manager's: model_name only", (name) => {
    const labels = family(name);
    expect(labels.length, name).toBeGreaterThan(0);
    for (const l of labels) expect(l).toEqual(REQUEST);
  });

  it("observes queue time in SGLang's scheduler buckets, from 0 to 3000 s", () => {
    const bounds = samples.filter((s) => s.name === "sglang:queue_time_seconds_bucket").map((s) => s.labels.le);
    // As Python's prometheus_client writes them (SGLang's `le="1.0"`, not prom-client's `le="1"`).
    expect(bounds.slice(0, 4)).toEqual(["0.0", "0.1", "0.2", "0.5"]);
    expect(bounds.slice(-3)).toEqual(["2500.0", "3000.0", "+Inf"]);
    const count = samples.find((s) => s.name === "sglang:queue_time_seconds_count");
    expect(count?.value).toBe(1);
  });
});

/**
 * The `/metrics` text line for line as SGLang's page writes it. sgl-project/sglang
 * python/sglang/srt/observability/metrics_collector.py at 44cedc2b9c7dd31d9acae4498ea4fa0d3665feed:
 * `cached_tokens_total` carries `cache_source` and counts only a request that hit the cache (an engine without a
 * hierarchical cache reports its hits as `device`: the scheduler's details are `{"device": cached_tokens, "host": 0}`);
 * `num_retracted_reqs` (and `num_paused_reqs`, which we do not export) is a Gauge left in prometheus_client's default
 * multiprocess mode ("all"), so MultiProcessCollector keeps one series per process with a `pid` label. Every
 * series' labels are sorted by name, `le` and `pid` included: prometheus_client's `generate_latest` writes
 * `sorted(labels.items())` (SGLang's own docs show `..._bucket{le="0.3",model_name="..."}`).
 */
describe("engine /metrics: lines as SGLang's page writes them", () => {
  let server: RunningEngineServer;
  let text: string;
  let cached = 0;

  beforeAll(async () => {
    server = await startEngineServer({ port: 0, speed: 1000, log: () => {} });
    // The same prompt twice, one after the other: the second reuses the first one's prefix from the cache.
    const prompt = "the same long prompt, sent twice so that the second one finds its prefix in the cache";
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "demo-model", prompt, max_tokens: 4, ignore_eos: true }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } };
      cached += body.usage.prompt_tokens_details.cached_tokens;
    }
    text = await (await fetch(`${server.url}/metrics`)).text();
  });
  afterAll(() => server.close());

  it('cached_tokens_total counts the cache hits under cache_source="device", with SGLang\'s HELP', () => {
    expect(cached).toBeGreaterThan(0);
    expect(text).toContain(
      "# HELP sglang:cached_tokens_total Number of cached prompt tokens by source (device/host/storage).\n" +
        "# TYPE sglang:cached_tokens_total counter\n" +
        `sglang:cached_tokens_total{cache_source="device",model_name="demo-model"} ${cached}\n`,
    );
    const series = text.split("\n").filter((l) => l.startsWith("sglang:cached_tokens_total"));
    expect(series).toHaveLength(1);
  });

  it("num_retracted_reqs carries pid between moe_ep_rank and pp_rank; no other series has one", () => {
    expect(text).toContain(
      `sglang:num_retracted_reqs{engine_type="unified",model_name="demo-model",moe_ep_rank="0",pid="${process.pid}",pp_rank="0",tp_rank="0"} 0\n`,
    );
    const withPid = text.split("\n").filter((l) => l.includes("pid="));
    expect(withPid.map((l) => l.slice(0, l.indexOf("{")))).toEqual(["sglang:num_retracted_reqs"]);
  });

  it("a bucket's le sorts among the other labels", () => {
    expect(text).toMatch(/^sglang:time_to_first_token_seconds_bucket\{le="1\.0",model_name="demo-model"\} \d+$/m);
    expect(text).toMatch(
      /^sglang:queue_time_seconds_bucket\{engine_type="unified",le="0\.0",model_name="demo-model",moe_ep_rank="0",pp_rank="0",tp_rank="0"\} \d+$/m,
    );
  });

  it("every series writes its labels sorted by name", () => {
    const lines = text.split("\n").filter((l) => l.startsWith("sglang:") && l.includes("{"));
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines) {
      const names = [...line.slice(line.indexOf("{")).matchAll(/([a-zA-Z_]\w*)="(?:[^"\\]|\\.)*"/g)].map((m) => m[1]);
      expect(names, line).toEqual([...names].sort());
    }
  });
});
