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
    "sglang:num_retracted_reqs",
    "sglang:num_retracted_requests_total",
    "sglang:queue_time_seconds",
  ])("%s is the scheduler's: model_name, engine_type, tp_rank, pp_rank and moe_ep_rank", (name) => {
    const labels = family(name);
    expect(labels.length, name).toBeGreaterThan(0);
    for (const l of labels) expect(l).toEqual(SCHEDULER);
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
