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
 * --concurrency N (default 32), --rounds N (interleaved rounds of the admitted path, default 5; each load sends
 * requests / rounds).
 *
 * `--only tenants`: only what issue 16's goal compares, with more rounds to fight the noise: the pass-through
 * Worker (and the same adding the quota tenant's 8 rate-limit headers to each answer, their cost alone), and two
 * spillway Workers (1 router shard; without and with slot hand-off) sent the same requests anonymously and with the
 * quota tenant's key, interleaved; `--before DIR` adds the same two spillway Workers (with and without slot hand-off) built from
 * another checkout's `src/edge/worker.ts` (e.g. the main branch's; its rows named by `--label`, default `before`),
 * so old and new code are compared in the same run. Each round runs the variants in
 * another (seeded) order.
 *
 * Beside throughput, every variant's CPU per request is read from `/proc` (Linux): the Worker process's (workerd:
 * the Worker and its Durable Objects) and this process's (the load generator and the engines). CPU time moves
 * much less than throughput when other jobs load the machine.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { DEFAULT_DRAIN_RATE_OPTIONS } from "../../core/drain-rate";
import { DEFAULT_SATURATION_OPTIONS, type RetryAfterPolicyName } from "../../core/retry-after";
import { RouterDriver, type RouterDriverIO } from "../../core/router-driver";
import { rateLimitHeaders as rateLimitHeadersOf } from "../../edge/rate-limit-headers";
import { commandFlags, positiveIntFlag, UsageError } from "../command-line";
import { startFakeBackend } from "../fake-openai-backends";
import { benchWorkerOptions, bundleWorker, startZeroCostEngines } from "./bench-setup";
import { closedLoopLoad, type LoadResult } from "./http-load";
import { childPids, processCpuMs, selfCpuMs } from "./process-cpu";

const { values, REQUESTS, ROUNDS, CONCURRENCY } = commandFlags(
  "npm run bench:edge -- [--requests N (default 3000)] [--concurrency N (default 32)] [--rounds N (default 5)] [--only tenants [--before OTHER-CHECKOUT [--label NAME (default before)]]]",
  {
    options: {
      requests: { type: "string" },
      concurrency: { type: "string" },
      rounds: { type: "string" },
      only: { type: "string" },
      before: { type: "string" },
      label: { type: "string", default: "before" },
    },
  },
  ({ values }) => {
    if (values.only !== undefined && values.only !== "tenants")
      throw new UsageError(`--only takes only \`tenants\`, got ${values.only}`, 2);
    // Only the tenants run builds the other checkout's Workers: anywhere else --before would be ignored unsaid.
    if (values.only === undefined && values.before !== undefined)
      throw new UsageError("--before goes with --only tenants", 2);
    return {
      values,
      REQUESTS: positiveIntFlag("requests", values.requests, 3000),
      ROUNDS: positiveIntFlag("rounds", values.rounds, 5),
      CONCURRENCY: positiveIntFlag("concurrency", values.concurrency, 32),
    };
  },
);
const TENANTS_ONLY = values.only === "tenants";
/** How the other checkout's rows are named (`--label`; `scripts/edge-ablation.sh` names them after its patch). */
const OTHER = values.label;
/** The tenant variant's API key, and its SHA-256 as the configuration holds it (`printf %s KEY | sha256sum`). */
const BENCH_KEY = "sk-bench";
const BENCH_KEY_SHA256 = createHash("sha256").update(BENCH_KEY).digest("hex");

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

function bundle(entry: string, outdir: string, name: string): Promise<string> {
  return bundleWorker(entry, join(outdir, `${name}.mjs`));
}

async function startWorker(scriptPath: string, bindings: Record<string, string>, withRouter: boolean) {
  const runningBefore = new Set(childPids("workerd"));
  const mf = new Miniflare(benchWorkerOptions(scriptPath, bindings, withRouter));
  const url = await mf.ready;
  // Its workerd process, for its CPU time (none where /proc cannot be read).
  const pid = childPids("workerd").find((p) => !runningBefore.has(p));
  return { mf, url: url.origin, pid };
}

type Worker = Awaited<ReturnType<typeof startWorker>>;

/**
 * The calls a Worker's router (shard 0 of `demo-model`) has answered; `undefined` for a router from before they
 * were counted (`--before` an older checkout).
 */
async function routerCalls(w: Worker) {
  const namespace = await w.mf.getDurableObjectNamespace("DEPLOYMENT_ROUTER");
  const stub = namespace.get(namespace.idFromName("demo-model#0")) as unknown as {
    stats(
      deployment: string,
      shard: number,
    ): Promise<{ calls?: { acquire: number; releaseCalls: number; slotsReleased: number; handedOff?: number } }>;
  };
  return (await stub.stats("demo-model", 0)).calls;
}

/** One admitted-path load and the CPU it cost: the Worker's process and this one (load generator, engines). */
interface Measured extends LoadResult {
  workerCpuMs: number | undefined;
  benchCpuMs: number;
}

async function measuredLoad(w: Worker, body: string, total: number, headers: Record<string, string>) {
  const worker0 = w.pid === undefined ? undefined : processCpuMs(w.pid);
  const bench0 = selfCpuMs();
  const r = await closedLoopLoad(`${w.url}/v1/completions`, body, CONCURRENCY, total, headers);
  const worker1 = w.pid === undefined ? undefined : processCpuMs(w.pid);
  const workerCpuMs = worker0 === undefined || worker1 === undefined ? undefined : worker1 - worker0;
  return { ...r, workerCpuMs, benchCpuMs: selfCpuMs() - bench0 } satisfies Measured;
}

/** CPU per request (us) over every round of a variant: the Worker's process, this one, and both. */
function cpuRow(name: string, runs: Measured[]): string {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const worker = runs.every((r) => r.workerCpuMs !== undefined)
    ? (runs.reduce((t, r) => t + (r.workerCpuMs as number), 0) * 1000) / requests
    : undefined;
  const bench = (runs.reduce((t, r) => t + r.benchCpuMs, 0) * 1000) / requests;
  const total = worker === undefined ? undefined : worker + bench;
  return `| ${name} | ${worker?.toFixed(0) ?? "-"} | ${bench.toFixed(0)} | ${total?.toFixed(0) ?? "-"} |`;
}

/** The median over rounds of a variant's throughput divided by the pass-through's in the same round. */
function medianRoundRatio(runs: LoadResult[], pass: LoadResult[]): number {
  return median(runs.map((r, i) => r.throughput / (pass[i] as LoadResult).throughput));
}

/** `items` in an order drawn from `seed` (Fisher-Yates over mulberry32): the same seed, the same order. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed | 0;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A load of the admitted path: a Worker, and the headers its requests carry (the quota tenant's key, or none). */
interface Variant {
  name: string;
  worker: Worker;
  headers: Record<string, string>;
}

const CPU_TABLE_HEAD =
  "| variant | Worker process (workerd) us/request | load generator + engines us/request | both |\n| --- | --- | --- | --- |";

function row(name: string, r: LoadResult): string {
  return `| ${name} | ${r.throughput.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${JSON.stringify(r.statuses)} |`;
}

async function main(): Promise<void> {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  console.log(`# edge benchmark (node ${process.version}, requests ${REQUESTS}, concurrency ${CONCURRENCY})\n`);

  // 1. Reject path, interleaved so machine noise hits both policies alike.
  if (!TENANTS_ONLY) rejectPath();
  await admittedAndDecisions();
}

function rejectPath(): void {
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
}

async function admittedAndDecisions(): Promise<void> {
  // 2 and 3. HTTP paths under miniflare, in front of the same engines.
  const engines = await startZeroCostEngines(2);
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
    const config = (shards: number, quotaLeaseMs?: number, slotHandoffMs = 0) =>
      JSON.stringify({
        logRejections: false,
        deployments: {
          "demo-model": {
            replicas,
            maxOngoingRequests: 256,
            maxQueuedRequests: 4096,
            routerShards: shards,
            slotHandoffMs,
          },
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
    const direct = TENANTS_ONLY
      ? undefined
      : await closedLoopLoad(`${replicas[0]}/v1/completions`, body, CONCURRENCY, Math.min(REQUESTS, 2000));
    const key = { authorization: `Bearer ${BENCH_KEY}` };
    const passThrough = await startWorker(passScript, { REPLICAS: JSON.stringify(replicas) }, false);
    const variants: Variant[] = [{ name: "pass-through Worker", worker: passThrough, headers: {} }];
    if (TENANTS_ONLY) {
      // The control for what the quota tenant's 8 rate-limit headers cost by themselves (values as sent).
      const rateLimitHeaders = rateLimitHeadersOf({
        requests: { limit: 10_000_000, remaining: 9_999_000, resetMs: 6 },
        tokens: { limit: 1_000_000_000, remaining: 999_990_000, resetMs: 600 },
      });
      const passWithHeaders = await startWorker(
        passScript,
        { REPLICAS: JSON.stringify(replicas), EXTRA_HEADERS: JSON.stringify(rateLimitHeaders) },
        false,
      );
      variants.push({ name: "pass-through Worker + the 8 rate-limit headers", worker: passWithHeaders, headers: {} });
      // One Worker for both: the key is the only difference between its two variants.
      const spillway = await startWorker(spillwayScript, { SPILLWAY_CONFIG: config(1) }, true);
      // The same with slot hand-off on (slotHandoffMs): most requests take a finished one's slot, no router call.
      const handoff = await startWorker(spillwayScript, { SPILLWAY_CONFIG: config(1, undefined, 1000) }, true);
      variants.push(
        { name: "spillway, 1 router shard (anonymous)", worker: spillway, headers: {} },
        { name: "spillway, 1 router shard, tenant with quotas", worker: spillway, headers: key },
        { name: "spillway, 1 router shard, slot hand-off (anonymous)", worker: handoff, headers: {} },
        { name: "spillway, 1 router shard, slot hand-off, tenant with quotas", worker: handoff, headers: key },
      );
      if (values.before) {
        const beforeScript = await bundle(join(values.before, "src/edge/worker.ts"), dir, "before");
        const before = await startWorker(beforeScript, { SPILLWAY_CONFIG: config(1) }, true);
        const beforeHandoff = await startWorker(beforeScript, { SPILLWAY_CONFIG: config(1, undefined, 1000) }, true);
        variants.push(
          { name: `${OTHER}: spillway, 1 router shard (anonymous)`, worker: before, headers: {} },
          { name: `${OTHER}: spillway, 1 router shard, tenant with quotas`, worker: before, headers: key },
          { name: `${OTHER}: spillway, 1 router shard, slot hand-off (anonymous)`, worker: beforeHandoff, headers: {} },
          {
            name: `${OTHER}: spillway, 1 router shard, slot hand-off, tenant with quotas`,
            worker: beforeHandoff,
            headers: key,
          },
        );
      }
    } else {
      const spillway = (json: string) => startWorker(spillwayScript, { SPILLWAY_CONFIG: json }, true);
      const vllmPass = await startWorker(passScript, { REPLICAS: JSON.stringify(vllmReplicas) }, false);
      const vllmProbes = probed({ replicas: vllmReplicas.map((url) => ({ url, load: "vllm" })) });
      variants.push(
        { name: "spillway, 1 router shard", worker: await spillway(config(1)), headers: {} },
        { name: "spillway, 4 router shards", worker: await spillway(config(4)), headers: {} },
        {
          name: "spillway, 1 shard, at the cap: /load probes",
          worker: await spillway(probed({ replicas })),
          headers: {},
        },
        { name: "pass-through Worker -> vLLM-style servers", worker: vllmPass, headers: {} },
        {
          name: "spillway, 1 shard, at the cap: vLLM /metrics probes",
          worker: await spillway(vllmProbes),
          headers: {},
        },
        { name: "spillway, 1 router shard, tenant with quotas", worker: await spillway(config(1)), headers: key },
        {
          name: "spillway, 1 router shard, slot hand-off, tenant with quotas",
          worker: await spillway(config(1, undefined, 1000)),
          headers: key,
        },
        {
          name: "spillway, 1 router shard, tenant with quotas, leases off",
          worker: await spillway(config(1, 0)),
          headers: key,
        },
      );
    }
    const rounds = ROUNDS;
    const perRound: Record<string, Measured[]> = {};
    const callsOf = new Map<string, Awaited<ReturnType<typeof routerCalls>>>();
    try {
      for (const v of variants)
        await closedLoopLoad(`${v.worker.url}/v1/completions`, body, CONCURRENCY, 200, v.headers);
      // Interleaved rounds: a burst of noise from the shared machine hits every variant, not just one.
      for (let round = 0; round < rounds; round++) {
        // Tenants only: every round in another order (seeded, so runs repeat it), so that no variant always
        // follows the same one (in a fixed order the same code measured up to 0.05 of the pass-through's
        // throughput apart by what ran before it). The full run keeps its fixed order, comparable with earlier runs.
        for (const v of TENANTS_ONLY ? shuffled(variants, round + 1) : variants) {
          const r = await measuredLoad(v.worker, body, Math.ceil(REQUESTS / rounds), v.headers);
          perRound[v.name] = [...(perRound[v.name] ?? []), r];
        }
      }
      if (TENANTS_ONLY)
        for (const v of variants.filter((v) => v.name.endsWith("(anonymous)")))
          callsOf.set(v.name, await routerCalls(v.worker));
    } finally {
      await Promise.all([...new Set(variants.map((v) => v.worker))].map((w) => w.mf.dispose()));
    }
    const medianRun = (runs: LoadResult[]) =>
      [...runs].sort((a, b) => a.throughput - b.throughput)[Math.floor(runs.length / 2)] as LoadResult;
    const passRuns = perRound["pass-through Worker"] as Measured[];
    if (TENANTS_ONLY) {
      console.log(
        `## admitted path, tenants only (POST /v1/completions, max_tokens 4, zero-cost engines; ${rounds} interleaved rounds)\n`,
      );
      console.log(
        "| variant | req/s (median round) | p50 ms | p99 ms | statuses | median of the rounds' ratios to the pass-through |\n| --- | --- | --- | --- | --- | --- |",
      );
      // In the variants' own order (the rounds shuffled it).
      const inOrder = variants.map((v) => [v.name, perRound[v.name] as Measured[]] as const);
      for (const [name, runs] of inOrder) {
        const ratio = medianRoundRatio(runs, passRuns).toFixed(3);
        console.log(`${row(name, medianRun(runs))} ${ratio} |`);
      }
      console.log(`\n### CPU per request, all rounds (Linux /proc)\n\n${CPU_TABLE_HEAD}`);
      for (const [name, runs] of inOrder) console.log(cpuRow(name, runs));
      // Paired inside each round: what the key costs the same Worker over its anonymous requests.
      console.log(
        "\n| Worker | quota tenant minus anonymous: Worker process us/request, median of the rounds (min, max) |\n| --- | --- |",
      );
      for (const prefix of ["", `${OTHER}: `]) {
        const anonymous = perRound[`${prefix}spillway, 1 router shard (anonymous)`];
        const quota = perRound[`${prefix}spillway, 1 router shard, tenant with quotas`];
        if (!anonymous || !quota) continue;
        const us = (r: Measured) => ((r.workerCpuMs ?? Number.NaN) * 1000) / r.requests;
        const diffs = quota.map((r, i) => us(r) - us(anonymous[i] as Measured));
        const spread = `(${Math.min(...diffs).toFixed(0)}, ${Math.max(...diffs).toFixed(0)})`;
        console.log(`| ${prefix ? OTHER : "this tree"} | ${median(diffs).toFixed(1)} ${spread} |`);
      }
      // What each admitted request cost its router in Durable Object calls (warm-up included); a request that
      // took a finished one's slot (slot hand-off) was admitted without a call of its own.
      console.log(
        "\n| Worker (its anonymous variant) | router calls per admitted request (acquire + release calls) | admitted by a hand-off | slots released per release call |\n| --- | --- | --- | --- |",
      );
      for (const [name, calls] of callsOf) {
        if (!calls || calls.acquire === 0) {
          console.log(`| ${name} | none counted (no router, or an older one) | - | - |`);
          continue;
        }
        const admitted = calls.acquire + (calls.handedOff ?? 0);
        const perAdmitted = (calls.acquire + calls.releaseCalls) / admitted;
        const handedOff = `${((100 * (calls.handedOff ?? 0)) / admitted).toFixed(1)}%`;
        const batched = calls.releaseCalls === 0 ? "-" : (calls.slotsReleased / calls.releaseCalls).toFixed(2);
        console.log(`| ${name} | ${perAdmitted.toFixed(2)} | ${handedOff} | ${batched} |`);
      }
      return;
    }
    const results: Array<[string, LoadResult]> = [
      ["engine server directly (one of the two)", direct as LoadResult],
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
    console.log(`\n### CPU per request, all rounds (Linux /proc)\n\n${CPU_TABLE_HEAD}`);
    for (const [name, runs] of Object.entries(perRound)) console.log(cpuRow(name, runs));

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
