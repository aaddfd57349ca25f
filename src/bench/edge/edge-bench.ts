/**
 * `npm run bench:edge`: the edge benchmark, every variant in one run so they can be compared as ratios.
 *
 * 1. Reject-path cost of `router_queue_drain_rate` vs `static`: RouterCore.submit on a full queue, in process,
 *    interleaved rounds (the median round's ns per rejection).
 * 2. Admitted path: spillway vs a plain pass-through Worker, both under miniflare, in front of the same two
 *    engine servers (zero-cost simulated GPU), closed-loop load.
 *    Probe cost: with `maxOngoingRequests` 16 (two replicas, concurrency 32) the replicas sit at the cap and
 *    nearly every placement round probes; the same against vLLM-style servers (no `/load`; a vLLM-sized
 *    `/metrics` page of histograms) probed with `load: "vllm"`, beside a pass-through Worker to those servers.
 *    Tenants: spillway with the request's API key naming a tenant with quotas, served from quota leases (the
 *    default), and the same with leases off (`quotaLeaseMs` 0: one more Durable Object RPC per request).
 * 3. Decisions per second one router sustains, with 1 and with 4 router shards.
 *
 * Only 127.0.0.1; every load is bounded by its request count. Flags: --requests N (default 3000),
 * --concurrency N (default 32).
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { DEFAULT_DRAIN_RATE_OPTIONS } from "../../core/drain-rate";
import { DEFAULT_SATURATION_OPTIONS, type RetryAfterPolicyName } from "../../core/retry-after";
import { RouterDriver, type RouterDriverIO } from "../../core/router-driver";
import { startEngineServer } from "../../engine/index";
import { startFakeBackend } from "../fake-openai-backends";
import { closedLoopLoad, type LoadResult } from "./http-load";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "3000" }, concurrency: { type: "string", default: "32" } },
});
const REQUESTS = Number(values.requests);
/** The tenant variant's API key, and its SHA-256 as the configuration holds it (`printf %s KEY | sha256sum`). */
const BENCH_KEY = "sk-bench";
const BENCH_KEY_SHA256 = createHash("sha256").update(BENCH_KEY).digest("hex");
const CONCURRENCY = Number(values.concurrency);

/** ns per rejection of a full router using `policy`, over `n` submits. */
function rejectCostNs(policy: RetryAfterPolicyName, n: number): number {
  let now = 0;
  // The router driver over an in-process I/O: probes answer at once ("empty" while warming up, then "full"),
  // timers fire as `now` passes them.
  let replicaQueueLength = 0;
  const timers: Array<{ atMs: number; fire: () => void }> = [];
  const io: RouterDriverIO = {
    now: () => now,
    setTimer(delayMs, fire) {
      const timer = { atMs: now + delayMs, fire };
      timers.push(timer);
      return () => {
        const at = timers.indexOf(timer);
        if (at >= 0) timers.splice(at, 1);
      };
    },
    defer: (run) => run(),
    probe: (_replica, _deadlineMs, answer) => answer(replicaQueueLength),
  };
  const fireDue = () => {
    for (let due = timers.find((t) => t.atMs <= now); due; due = timers.find((t) => t.atMs <= now)) {
      timers.splice(timers.indexOf(due), 1);
      due.fire();
    }
  };
  const driver = new RouterDriver(
    {
      options: {
        replicas: ["a", "b", "c", "d"],
        maxOngoingRequests: 8,
        maxQueuedRequests: 64,
        queueTimeoutMs: 1e12,
        leaseTimeoutMs: 1e12,
        statusCode: 429,
        retryAfter: { retryAfterPolicy: policy, retryAfterS: 5, jitter: 0.2, saturation: DEFAULT_SATURATION_OPTIONS },
        drainRate: DEFAULT_DRAIN_RATE_OPTIONS,
      },
      random: Math.random,
    },
    io,
  );
  const ignore = () => {};
  // Warm the estimator with a few busy seconds, then fill the queue of a full fleet (the loop sleeps its backoff).
  for (let s = 0; s < 4; s++) {
    for (let i = 0; i < 10; i++) {
      driver.acquire(`w${s}-${i}`, {}, ignore);
      now += 100;
      fireDue();
    }
  }
  replicaQueueLength = 8;
  for (let i = 0; driver.core.queueDepth < 64; i++) driver.acquire(`fill-${i}`, {}, ignore);
  const core = driver.core;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    core.submit("overflow");
    now += 0.01;
  }
  return Number(process.hrtime.bigint() - t0) / n;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function bundle(entry: string, outdir: string, name: string): Promise<string> {
  const outfile = join(outdir, `${name}.mjs`);
  await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    outfile,
    logLevel: "error",
  });
  return outfile;
}

async function startWorker(scriptPath: string, bindings: Record<string, string>, withRouter: boolean) {
  const mf = new Miniflare({
    modules: true,
    scriptPath,
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["enable_request_signal"],
    bindings,
    ...(withRouter
      ? {
          durableObjects: {
            DEPLOYMENT_ROUTER: { className: "DeploymentRouter", useSQLite: true },
            TENANT_QUOTA: { className: "TenantQuota", useSQLite: true },
          },
        }
      : {}),
    cf: false,
    host: "127.0.0.1",
    port: 0,
  });
  const url = await mf.ready;
  return { mf, url: url.origin };
}

function row(name: string, r: LoadResult): string {
  return `| ${name} | ${r.throughput.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${JSON.stringify(r.statuses)} |`;
}

async function main(): Promise<void> {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  console.log(`# edge benchmark (node ${process.version}, requests ${REQUESTS}, concurrency ${CONCURRENCY})\n`);

  // 1. Reject path, interleaved so machine noise hits both policies alike.
  const rounds = { static: [] as number[], router_queue_drain_rate: [] as number[] };
  for (let round = 0; round < 41; round++) {
    // ABBA order, so neither policy always runs first after a pause.
    const order: RetryAfterPolicyName[] =
      round % 2 === 0 ? ["static", "router_queue_drain_rate"] : ["router_queue_drain_rate", "static"];
    for (const policy of order) rounds[policy as keyof typeof rounds].push(rejectCostNs(policy, 50_000));
  }
  const staticNs = median(rounds.static);
  const computedNs = median(rounds.router_queue_drain_rate);
  console.log("## reject path (RouterCore.submit on a full queue, median of 41 interleaved rounds)\n");
  console.log(`| policy | ns per rejection |\n| --- | --- |`);
  console.log(`| static | ${staticNs.toFixed(0)} |\n| router_queue_drain_rate | ${computedNs.toFixed(0)} |`);
  console.log(`\nratio router_queue_drain_rate / static: ${(computedNs / staticNs).toFixed(3)}\n`);

  // 2 and 3. HTTP paths under miniflare, in front of the same engines.
  const engines = await Promise.all(
    [0, 1].map(() =>
      startEngineServer({
        port: 0,
        speed: Number.POSITIVE_INFINITY,
        accessLog: false,
        logLevel: "error",
        log: () => {},
      }),
    ),
  );
  const replicas = engines.map((e) => e.url);
  const vllmServers = await Promise.all(
    [0, 1].map(() => startFakeBackend("vllm", { model: "demo-model", delayMs: 0, maxRunning: 256 })),
  );
  const vllmReplicas = vllmServers.map((v) => v.url);
  // Inside the project: workerd refuses module paths outside its starting directory.
  mkdirSync(".wrangler", { recursive: true });
  const dir = mkdtempSync(join(".wrangler", "bench-"));
  const body = JSON.stringify({ model: "demo-model", prompt: "hello", max_tokens: 4 });
  try {
    const spillwayScript = await bundle("src/edge/worker.ts", dir, "spillway");
    const passScript = await bundle("src/bench/edge/passthrough-worker.ts", dir, "passthrough");
    const config = (shards: number, quotaLeaseMs?: number) =>
      JSON.stringify({
        logRejections: false,
        deployments: {
          "demo-model": { replicas, maxOngoingRequests: 256, maxQueuedRequests: 4096, routerShards: shards },
        },
        // The bench's API key (BENCH_KEY): quotas far above what it sends, so every request is charged, none refused.
        tenants: {
          keys: {
            [BENCH_KEY_SHA256]: { name: "bench", requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 },
          },
          ...(quotaLeaseMs !== undefined ? { quotaLeaseMs } : {}),
        },
      });
    const probed = (deployment: Record<string, unknown>) =>
      JSON.stringify({
        logRejections: false,
        deployments: { "demo-model": { maxOngoingRequests: 16, maxQueuedRequests: 4096, ...deployment } },
      });
    const direct = await closedLoopLoad(`${replicas[0]}/v1/completions`, body, CONCURRENCY, Math.min(REQUESTS, 2000));
    const workers = {
      "pass-through Worker": await startWorker(passScript, { REPLICAS: JSON.stringify(replicas) }, false),
      "spillway, 1 router shard": await startWorker(spillwayScript, { SPILLWAY_CONFIG: config(1) }, true),
      "spillway, 4 router shards": await startWorker(spillwayScript, { SPILLWAY_CONFIG: config(4) }, true),
      "spillway, 1 shard, at the cap: /load probes": await startWorker(
        spillwayScript,
        { SPILLWAY_CONFIG: probed({ replicas }) },
        true,
      ),
      "pass-through Worker -> vLLM-style servers": await startWorker(
        passScript,
        { REPLICAS: JSON.stringify(vllmReplicas) },
        false,
      ),
      "spillway, 1 shard, at the cap: vLLM /metrics probes": await startWorker(
        spillwayScript,
        { SPILLWAY_CONFIG: probed({ replicas: vllmReplicas.map((url) => ({ url, load: "vllm" })) }) },
        true,
      ),
      "spillway, 1 router shard, tenant with quotas": await startWorker(
        spillwayScript,
        { SPILLWAY_CONFIG: config(1) },
        true,
      ),
      "spillway, 1 router shard, tenant with quotas, leases off": await startWorker(
        spillwayScript,
        { SPILLWAY_CONFIG: config(1, 0) },
        true,
      ),
    };
    const headersOf = (name: string): Record<string, string> =>
      name.includes("quotas") ? { authorization: `Bearer ${BENCH_KEY}` } : {};
    const rounds = 5;
    const perRound: Record<string, LoadResult[]> = {};
    try {
      for (const [name, w] of Object.entries(workers))
        await closedLoopLoad(`${w.url}/v1/completions`, body, CONCURRENCY, 200, headersOf(name));
      // Interleaved rounds: a burst of noise from the shared machine hits every variant, not just one.
      for (let round = 0; round < rounds; round++) {
        for (const [name, w] of Object.entries(workers)) {
          const r = await closedLoopLoad(
            `${w.url}/v1/completions`,
            body,
            CONCURRENCY,
            Math.ceil(REQUESTS / rounds),
            headersOf(name),
          );
          perRound[name] = [...(perRound[name] ?? []), r];
        }
      }
    } finally {
      await Promise.all(Object.values(workers).map((w) => w.mf.dispose()));
    }
    const medianRun = (runs: LoadResult[]) =>
      [...runs].sort((a, b) => a.throughput - b.throughput)[Math.floor(runs.length / 2)] as LoadResult;
    const results: Array<[string, LoadResult]> = [
      ["engine server directly (one of the two)", direct],
      ...Object.entries(perRound).map(([name, runs]) => [name, medianRun(runs)] as [string, LoadResult]),
    ];
    console.log(
      `## admitted path (POST /v1/completions, max_tokens 4, zero-cost engines; median of ${rounds} interleaved rounds)\n`,
    );
    console.log("| variant | req/s | p50 ms | p99 ms | statuses |\n| --- | --- | --- | --- | --- |");
    for (const [name, r] of results) console.log(row(name, r));
    const pass = results.find(([n]) => n.startsWith("pass"))?.[1] as LoadResult;
    const one = results.find(([n]) => n.includes("1 router"))?.[1] as LoadResult;
    const four = results.find(([n]) => n.includes("4 router"))?.[1] as LoadResult;
    const quotas = results.find(([n]) => n.endsWith("tenant with quotas"))?.[1] as LoadResult;
    const quotasNoLease = results.find(([n]) => n.endsWith("leases off"))?.[1] as LoadResult;
    console.log(`\nspillway (1 shard) / pass-through throughput: ${(one.throughput / pass.throughput).toFixed(3)}`);
    console.log(`spillway (4 shards) / pass-through throughput: ${(four.throughput / pass.throughput).toFixed(3)}`);
    const byName = (part: string) => results.find(([n]) => n.includes(part))?.[1] as LoadResult;
    const loadProbed = byName("/load probes");
    const passVllm = byName("-> vLLM-style");
    const vllmProbed = byName("vLLM /metrics probes");
    console.log(
      `spillway (1 shard, /load probes at the cap) / pass-through: ${(loadProbed.throughput / pass.throughput).toFixed(3)}`,
    );
    console.log(
      `spillway (1 shard, vLLM /metrics probes at the cap) / pass-through to the same vLLM-style servers: ${(vllmProbed.throughput / passVllm.throughput).toFixed(3)}`,
    );
    const metricsReads = vllmServers.reduce((n, v) => n + v.backend.state.metricsReads, 0);
    // Only that variant probes them: its warm-up and its rounds.
    const sentToVllmProbed = 200 + rounds * Math.ceil(REQUESTS / rounds);
    const pageKb = (await (await fetch(`${vllmReplicas[0]}/metrics`)).text()).length / 1024;
    console.log(
      `/metrics probes per admitted request (vLLM variant): ${(metricsReads / sentToVllmProbed).toFixed(3)} (page ${pageKb.toFixed(1)} KB)`,
    );
    console.log(
      `spillway (1 shard, tenant with quotas) / pass-through throughput: ${(quotas.throughput / pass.throughput).toFixed(3)}`,
    );
    console.log(
      `spillway (1 shard, tenant with quotas, leases off) / pass-through throughput: ${(quotasNoLease.throughput / pass.throughput).toFixed(3)}`,
    );

    // 3. Decisions alone: maxQueuedRequests 0 makes every request a rejection decided by the router, so the
    // engines drop out and what is left is Worker -> Durable Object RPC -> decision -> 429.
    const rejectOnly = (shards: number) =>
      JSON.stringify({
        logRejections: false,
        deployments: {
          "demo-model": {
            replicas,
            maxQueuedRequests: 0,
            routerShards: shards,
            backpressure: { retryAfterPolicy: "router_queue_drain_rate", retryAfterS: 1 },
          },
        },
      });
    console.log("\n## decisions per second (every request refused by its router: Worker -> DO RPC -> 429)\n");
    console.log("| router shards | decisions/s | p50 ms | p99 ms | statuses |\n| --- | --- | --- | --- | --- |");
    for (const shards of [1, 4]) {
      const worker = await startWorker(spillwayScript, { SPILLWAY_CONFIG: rejectOnly(shards) }, true);
      try {
        await closedLoopLoad(`${worker.url}/v1/completions`, body, CONCURRENCY, 200);
        console.log(
          row(String(shards), await closedLoopLoad(`${worker.url}/v1/completions`, body, CONCURRENCY, REQUESTS)),
        );
      } finally {
        await worker.mf.dispose();
      }
    }
  } finally {
    await Promise.all([...engines, ...vllmServers].map((e) => e.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
