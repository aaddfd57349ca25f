import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { BackendState } from "./fake-backend-state";

export type { BackendState };

/** The servers the fakes imitate. */
export type BackendKind = "vllm" | "sglang" | "tgi";

/** How a fake behaves. */
export interface BackendOptions {
  /** The served model name (vLLM's `--served-model-name`), used in labels and answers. */
  model?: string;
  /** Requests it runs at once; the rest wait (vLLM's `--max-num-seqs`). */
  maxRunning?: number;
  /** How long each completion takes (ms), unless the message says `sleep:MS`. */
  delayMs?: number;
  /** Require `Authorization: Bearer <apiKey>` on `/v1/*`, as `vllm serve --api-key` does. */
  apiKey?: string;
  /** vLLM only: export the pre-0.10 name `vllm:gpu_cache_usage_perc` instead of `vllm:kv_cache_usage_perc`. */
  legacyCacheGauge?: boolean;
  /** Data-parallel engines (vLLM's `engine` label, SGLang's `dp_rank`): requests spread over them. */
  engines?: number;
}

function esc(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(labels: Record<string, string>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length > 0 ? `{${parts.join(",")}}` : "";
}

/** Counts per engine, spread round-robin (engine i holds every engines-th request). */
function split(total: number, engines: number): number[] {
  return Array.from({ length: engines }, (_, i) => Math.floor(total / engines) + (i < total % engines ? 1 : 0));
}

/** The Python process metrics prometheus_client adds to vLLM's and SGLang's pages. */
const PYTHON_PREAMBLE = `# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 13042.0
python_gc_objects_collected_total{generation="1"} 2216.0
python_gc_objects_collected_total{generation="2"} 301.0
# HELP python_info Python platform information
# TYPE python_info gauge
python_info{implementation="CPython",major="3",minor="12",patchlevel="3",version="3.12.3"} 1.0
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 2.1474836e+09
`;

/** The histograms a vLLM v1 server exports, by name and HELP text. */
const VLLM_HISTOGRAMS: Array<[string, string]> = [
  ["e2e_request_latency_seconds", "Histogram of e2e request latency in seconds."],
  ["time_to_first_token_seconds", "Histogram of time to first token in seconds."],
  ["inter_token_latency_seconds", "Histogram of inter-token latency in seconds."],
  ["request_queue_time_seconds", "Histogram of time spent in WAITING phase for request."],
  ["request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request."],
  ["request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request."],
  ["request_decode_time_seconds", "Histogram of time spent in DECODE phase for request."],
  ["request_prompt_tokens", "Number of prefill tokens processed."],
  ["request_generation_tokens", "Number of generation tokens processed."],
  ["iteration_tokens_total", "Histogram of number of tokens per engine_step."],
  ["request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens."],
  ["request_params_n", "Histogram of the n request parameter."],
  ["request_params_max_tokens", "Histogram of the max_tokens request parameter."],
];

const LATENCY_BUCKETS = [
  "0.3",
  "0.5",
  "0.8",
  "1.0",
  "1.5",
  "2.0",
  "2.5",
  "5.0",
  "10.0",
  "15.0",
  "20.0",
  "30.0",
  "+Inf",
];

/** A vLLM (v1 engine) `/metrics` page: its gauge names, `engine` and `model_name` labels, HELP/TYPE lines. */
function vllmMetrics(state: BackendState, options: Required<BackendOptions>): string {
  const running = split(Math.min(state.inflight, options.maxRunning), options.engines);
  const waiting = split(Math.max(0, state.inflight - options.maxRunning), options.engines);
  const lines = [PYTHON_PREAMBLE.trimEnd()];
  const gauge = (name: string, help: string, values: number[]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    values.forEach((v, engine) => {
      lines.push(`${name}${labelText({ engine: String(engine), model_name: options.model })} ${v.toFixed(1)}`);
    });
  };
  gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting);
  const usage = running.map((r) => Math.min(1, r / options.maxRunning));
  if (options.legacyCacheGauge)
    gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", usage);
  else gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage);
  lines.push(
    "# HELP vllm:request_success_total Count of successfully processed requests.",
    "# TYPE vllm:request_success_total counter",
  );
  for (const reason of ["stop", "length", "abort"]) {
    const labels = { engine: "0", finished_reason: reason, model_name: options.model };
    lines.push(`vllm:request_success_total${labelText(labels)} ${reason === "stop" ? state.served : 0}.0`);
  }
  // vLLM's page is mostly histograms (a real one is tens of KB): the probe must parse all of it.
  for (const [name, help] of VLLM_HISTOGRAMS) {
    lines.push(`# HELP vllm:${name} ${help}`, `# TYPE vllm:${name} histogram`);
    for (const le of LATENCY_BUCKETS) {
      const labels = { engine: "0", le, model_name: options.model };
      lines.push(`vllm:${name}_bucket${labelText(labels)} ${state.served}.0`);
    }
    const base = labelText({ engine: "0", model_name: options.model });
    lines.push(`vllm:${name}_count${base} ${state.served}.0`);
    lines.push(`vllm:${name}_sum${base} ${(state.served * 0.05).toFixed(3)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** An SGLang `/metrics` page: `sglang:` gauges with `model_name`, `engine_type`, `tp_rank`, `pp_rank`, `dp_rank`. */
function sglangMetrics(state: BackendState, options: Required<BackendOptions>): string {
  const running = split(Math.min(state.inflight, options.maxRunning), options.engines);
  const waiting = split(Math.max(0, state.inflight - options.maxRunning), options.engines);
  const lines = [PYTHON_PREAMBLE.trimEnd()];
  const gauge = (name: string, help: string, values: number[]) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    values.forEach((v, dp) => {
      const labels = {
        dp_rank: String(dp),
        engine_type: "unified",
        model_name: options.model,
        pp_rank: "0",
        tp_rank: "0",
      };
      lines.push(`${name}${labelText(labels)} ${v.toFixed(1)}`);
    });
  };
  gauge("sglang:num_running_reqs", "The number of running requests.", running);
  gauge(
    "sglang:num_used_tokens",
    "The number of used tokens.",
    running.map((r) => r * 512),
  );
  gauge(
    "sglang:token_usage",
    "The token usage.",
    running.map((r) => r / options.maxRunning),
  );
  gauge(
    "sglang:gen_throughput",
    "The generation throughput (token/s).",
    running.map((r) => r * 40),
  );
  gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", waiting);
  lines.push(
    "# HELP sglang:prompt_tokens_total Number of prefill tokens processed.",
    "# TYPE sglang:prompt_tokens_total counter",
    `sglang:prompt_tokens_total${labelText({ model_name: options.model })} ${state.served * 12}.0`,
  );
  return `${lines.join("\n")}\n`;
}

/** A TGI `/metrics` page (the Rust metrics exporter: TYPE lines, no labels, integers). */
function tgiMetrics(state: BackendState, options: Required<BackendOptions>): string {
  const running = Math.min(state.inflight, options.maxRunning);
  return [
    "# TYPE tgi_request_count counter",
    `tgi_request_count ${state.served + state.inflight}`,
    "# TYPE tgi_request_success counter",
    `tgi_request_success ${state.served}`,
    "# TYPE tgi_queue_size gauge",
    `tgi_queue_size ${state.inflight - running}`,
    "# TYPE tgi_batch_current_size gauge",
    `tgi_batch_current_size ${running}`,
    "# TYPE tgi_batch_current_max_tokens gauge",
    `tgi_batch_current_max_tokens ${running * 1024}`,
    "# TYPE tgi_request_duration histogram",
    `tgi_request_duration_bucket{le="0.05"} 0`,
    `tgi_request_duration_bucket{le="+Inf"} ${state.served}`,
    `tgi_request_duration_sum ${(state.served * 0.05).toFixed(3)}`,
    `tgi_request_duration_count ${state.served}`,
    "",
  ].join("\n");
}

const PAGES: Record<BackendKind, (state: BackendState, options: Required<BackendOptions>) => string> = {
  vllm: vllmMetrics,
  sglang: sglangMetrics,
  tgi: tgiMetrics,
};

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** One fake backend's request handler and state, mountable under any path prefix. */
export interface FakeBackend {
  kind: BackendKind;
  state: BackendState;
  /** Handles a request whose path (below the backend's base URL) is `path`. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

/**
 * A fake vLLM, SGLang or TGI server: `POST /v1/chat/completions` (and `/v1/completions`) answered after a
 * delay (the message `sleep:MS` sets it; `hold` waits for `POST /__release`), `GET /metrics` with that
 * project's metric names, label sets and HELP/TYPE lines, and no `/load` (404, as the real servers).
 * `GET /__state` returns the state.
 *
 * @example
 * ```ts
 * const backend = createFakeBackend("vllm", { model: "m", maxRunning: 2, delayMs: 50 });
 * ```
 */
export function createFakeBackend(kind: BackendKind, options: BackendOptions = {}): FakeBackend {
  const opts: Required<BackendOptions> = {
    model: options.model ?? "meta-llama/Llama-3.1-8B-Instruct",
    maxRunning: options.maxRunning ?? 256,
    delayMs: options.delayMs ?? 20,
    apiKey: options.apiKey ?? "",
    legacyCacheGauge: options.legacyCacheGauge ?? false,
    engines: options.engines ?? 1,
  };
  let releaseHeld: Array<() => void> = [];
  const state: BackendState = {
    inflight: 0,
    peakInflight: 0,
    served: 0,
    unauthorized: 0,
    metricsReads: 0,
    lastAuthorization: null,
  };
  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path === "/__state") return json(res, 200, state);
    if (path === "/__release") {
      for (const release of releaseHeld) release();
      releaseHeld = [];
      return json(res, 200, {});
    }
    if (req.method === "GET" && path === "/metrics") {
      state.metricsReads += 1;
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(PAGES[kind](state, opts));
      return;
    }
    if (req.method !== "POST" || !path.startsWith("/v1/")) return json(res, 404, { detail: "Not Found" });
    const text = await readText(req);
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      state.unauthorized += 1;
      return json(res, 401, { error: "Unauthorized" });
    }
    state.lastAuthorization = req.headers.authorization ?? null;
    const body = JSON.parse(text || "{}") as { messages?: { content?: string }[] };
    const command = String(body.messages?.at(-1)?.content ?? "");
    const delayMs = command.startsWith("sleep:") ? Number(command.slice("sleep:".length)) : opts.delayMs;
    state.inflight += 1;
    state.peakInflight = Math.max(state.peakInflight, state.inflight);
    try {
      if (command === "hold") await new Promise<void>((r) => releaseHeld.push(r));
      else await new Promise((r) => setTimeout(r, delayMs));
      state.served += 1;
      json(res, 200, {
        id: `chatcmpl-${state.served}`,
        object: "chat.completion",
        created: 0,
        model: opts.model,
        backend: kind,
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      });
    } finally {
      state.inflight -= 1;
    }
  }
  return { kind, state, handle };
}

/**
 * Starts one fake backend on 127.0.0.1, port 0.
 *
 * @example
 * ```ts
 * const vllm = await startFakeBackend("vllm", { maxRunning: 4 });
 * await fetch(`${vllm.url}/metrics`);
 * await vllm.close();
 * ```
 */
export async function startFakeBackend(
  kind: BackendKind,
  options: BackendOptions = {},
): Promise<{ url: string; backend: FakeBackend; server: Server; close(): Promise<void> }> {
  const backend = createFakeBackend(kind, options);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    backend.handle(req, res, path).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    backend,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
