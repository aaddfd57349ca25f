/**
 * `npm run eval:e2e`: the end-to-end check of issue 15 - real openai-node clients (the `openai` package, its
 * default two retries, its own `x-stainless-*` headers and Retry-After handling) through a local proxy that adds
 * 50-300 ms of delay to every attempt, against `wrangler dev` (the Worker and its DeploymentRouter Durable
 * Objects) in front of three engine servers (the real scheduler, simulated GPU), queue 16 - the demo's stack.
 * 30% of the clients' requests reach the Worker without any `x-stainless-*` header (the proxy strips them).
 * A 3x burst for 10 s over a 0.5x baseline (or, with --schedule spikes, a train of 0.2 s spikes averaging 1.5x
 * for 30 s), the same seeded arrivals for every policy, one policy at a time.
 * Writes docs/evaluation-e2e-openai.json, which `npm run eval` puts in docs/evaluation.md.
 *
 * Processes: this one (the load generator: it computes the arrival schedule, hosts the engine servers and
 * collects the outcomes), `wrangler dev` and its workerd, the delaying proxy (eval/e2e-proxy.ts, which counts
 * every attempt) and N client processes (eval/e2e-client.ts). Each arrival is dealt round-robin to a client
 * process, which sends it at its scheduled instant with an `OpenAI` instance of its own (its own credential, so
 * its own fingerprint) and reports the outcome over IPC: no single event loop carries hundreds of SDK clients,
 * their retry sleeps and the proxy. Every child is stopped on exit, on error, on SIGINT/SIGTERM and by a
 * watchdog that bounds the whole run; the proxy and the clients also exit if this process dies.
 *
 * Flags: --policies a,b (default: booked_capacity, router_queue_drain_rate, retry_schedule, static-30),
 * --clients N (client processes, default 4), --seeds K (K arrival seeds per policy, 2026, 2027, ..., pooled;
 * default 1), --first-seed S (the seeds start at S instead of 2026: arrivals no earlier run saw), --log
 * (rejection records and wrangler output to stdout), --schedule <name> (the arrival schedule, one of
 * E2E_SCHEDULES in eval/e2e-schedule.ts: burst, the default, or spikes; the output records it as `schedule`, beside
 * its `phases`; without --out, a schedule other than burst writes docs/evaluation-e2e-openai-<name>.json, not the
 * headline file; a spikes run is cut at 170 s, not 150 s, and records no `saturatedRps`), --out <path>.
 * Each policy's record holds its pooled figures and, under `perSeed`, each seed's own.
 */

import { type ChildProcess, execFileSync } from "node:child_process";

import { resolve } from "node:path";
import OpenAI from "openai";
import { commandFlags, positiveIntFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type ManagedProcess, startWorkerOnFreePort } from "../src/bench/stack";
import { PROMISE_OUTCOME_KEYS, type PromiseOutcomes } from "../src/core/capacity-booking";
import type { RunningEngineServer } from "../src/engine/index";
import { percentile } from "../src/sim/metrics";
import type { E2eSeedFigures } from "../src/sim/report-markdown";
import { measureE2eCapacity, startE2eFleet } from "./e2e-fleet";
import { type E2eOpenAiPolicy, type E2eOutcome, summarizeE2ePolicy } from "./e2e-outcomes";
import { e2ePoliciesFlag } from "./e2e-policies-flag";
import { forkTypeScript, nextMessage, stopChild } from "./e2e-processes";
import {
  type E2eAttemptCounts,
  type E2eClientReport,
  type E2eProxyReport,
  type E2eRunOrder,
  sharedNowMs,
} from "./e2e-protocol";
import { arrivalSchedule, dealArrivals, E2E_SCHEDULES, e2eScheduleFlag, scheduleSeconds } from "./e2e-schedule";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
/**
 * The commit the run measured, with "-dirty" when the code it runs differed from it: the docs say which default a
 * run is evidence for, since the default changes between runs. Read before the run starts, as the code it loads.
 */
function sourceCommit(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
  const changed = git("status", "--porcelain", "--", "src", "eval", "scripts", "wrangler.toml", "package.json");
  return `${git("rev-parse", "--short=12", "HEAD")}${changed === "" ? "" : "-dirty"}`;
}
const commit = sourceCommit();
const { values, CLIENT_PROCESSES, SEEDS, policyIds, SCHEDULE } = commandFlags(
  "npx tsx eval/e2e-openai.ts [--policies <id,...>] [--clients <n>] [--seeds <n>] [--first-seed <n>] [--schedule <name>] [--log] [--out <path>]",
  {
    options: {
      policies: { type: "string" },
      clients: { type: "string" },
      seeds: { type: "string" },
      "first-seed": { type: "string" },
      schedule: { type: "string" },
      log: { type: "boolean" },
      out: { type: "string" },
    },
  },
  ({ values }) => {
    /**
     * Seeds 2026, 2027, ...: 2026 alone gives the arrivals of every run made before --seeds existed. --first-seed
     * moves them to arrivals no earlier run (nor the simulator's replaying twin) was tuned on.
     */
    const firstSeed = positiveIntFlag("first-seed", values["first-seed"], 2026);
    return {
      values,
      CLIENT_PROCESSES: positiveIntFlag("clients", values.clients, 4),
      SEEDS: Array.from({ length: positiveIntFlag("seeds", values.seeds, 1) }, (_, i) => firstSeed + i),
      policyIds: e2ePoliciesFlag(values.policies, [
        "booked_capacity",
        "router_queue_drain_rate",
        "retry_schedule",
        "static-30",
      ]),
      SCHEDULE: e2eScheduleFlag(values.schedule),
    };
  },
);

const REPLICAS = 3;
const MAX_ONGOING = 4;
const OUTPUT = 32;
const MAX_QUEUED = 16;
const HEADERLESS_SHARE = 0.3;
const PROXY_DELAY_SEED = 77;
/** The arrival schedule's phases, and the window in which answers measure the fleet's pace (none for `spikes`). */
const { phases: PHASES, saturatedWindowS: SATURATED_WINDOW_S } = E2E_SCHEDULES[SCHEDULE];
/**
 * A run ends this long after its first arrival; requests still unfinished count as not served: the schedule, then
 * 110 s for the clients' retries (150 s for `burst`, as every run before --schedule; 170 s for `spikes`).
 */
const MAX_RUN_S = Math.round(scheduleSeconds(PHASES)) + 110;
/** How long a child may take to start (tsx compiles its module and the `openai` package) and to answer. */
const CHILD_START_MS = 60_000;
/** The first arrival is this far after the run orders go out, so every client process has its order in time. */
const START_LEAD_MS = 1_000;
const PAUSE_BETWEEN_RUNS_MS = 3_000;
/** The admin token of the Worker this run starts (loopback only): the ledger's promises are read from its overview. */
const ADMIN_TOKEN = "e2e-admin-token";

/** One policy's figures, pooled over its seeds, with how late the client processes sent (p99, ms), and per seed. */
type PolicyRecord = E2eOpenAiPolicy & { sendLagP99Ms: number | null };

const capacityRps = measureE2eCapacity(
  { replicas: REPLICAS, maxOngoingRequests: MAX_ONGOING, maxQueuedRequests: MAX_QUEUED },
  { promptTokens: 16, outputTokens: OUTPUT },
);

// Everything this run starts, so that every exit path stops all of it.
const children: ChildProcess[] = [];
let engines: RunningEngineServer[] = [];
let worker: ManagedProcess | undefined;
let stopping: Promise<void> | undefined;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all(children.map((child) => stopChild(child)));
    await worker?.stop();
    await Promise.all(engines.map((e) => e.close()));
  })();
  return stopping;
}
function abandon(reason: string, code: number): void {
  console.error(`${reason}: stopping the clients, the proxy, wrangler and the engines`);
  void stopAll().finally(() => process.exit(code));
}
process.once("SIGINT", () => abandon("SIGINT", 130));
process.once("SIGTERM", () => abandon("SIGTERM", 143));
// The run bounds its own duration: setup, then each run's cut-off plus slack for collecting and pausing.
const RUN_BUDGET_MS = 180_000 + policyIds.length * SEEDS.length * (MAX_RUN_S * 1000 + START_LEAD_MS + 20_000);
setTimeout(() => abandon(`the run exceeded its ${RUN_BUDGET_MS / 1000} s budget`, 1), RUN_BUDGET_MS).unref();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends one seed's arrivals to the client processes for one policy; collects outcomes and the proxy's count. */
async function runOnce(
  policyId: string,
  seed: number,
  runId: number,
  clients: ChildProcess[],
  proxy: ChildProcess,
  proxyBase: string,
): Promise<{ outcomes: E2eOutcome[]; attempts: E2eAttemptCounts; sendLagsMs: number[]; saturatedAnswers: number }> {
  const arrivals = arrivalSchedule({ seed, phases: PHASES, capacityRps, headerlessShare: HEADERLESS_SHARE });
  const hands = dealArrivals(arrivals, clients.length);
  const keyPrefix = `${policyId}-s${seed}-`;
  const outcomes = new Map<string, E2eOutcome>();
  const sendLagsMs: number[] = [];
  const collect = (message: E2eClientReport) => {
    if (message.type !== "outcome" || message.runId !== runId) return;
    outcomes.set(message.outcome.key, message.outcome);
    if (!message.outcome.unfinished) sendLagsMs.push(message.sendLagMs);
  };
  for (const client of clients) client.on("message", collect);
  try {
    const startAtMs = sharedNowMs() + START_LEAD_MS;
    const done = clients.map((client) =>
      nextMessage<E2eClientReport>(
        client,
        (m) => m.type === "done" && m.runId === runId,
        START_LEAD_MS + MAX_RUN_S * 1000 + 15_000,
      ),
    );
    clients.forEach((client, i) => {
      const order: E2eRunOrder = {
        type: "run",
        runId,
        baseURL: `${proxyBase}/v1`,
        model: `e2e-${policyId}`,
        keyPrefix,
        startAtMs,
        maxRunS: MAX_RUN_S,
        maxRetries: 2,
        outputTokens: OUTPUT,
        arrivals: hands[i] ?? [],
      };
      client.send(order);
    });
    await Promise.all(done);
  } finally {
    for (const client of clients) client.off("message", collect);
  }
  const counted = nextMessage<E2eProxyReport>(proxy, (m) => m.type === "attempts" && m.prefix === keyPrefix, 10_000);
  proxy.send({ type: "attempts", prefix: keyPrefix });
  const report = await counted;
  // A client reports every arrival it was dealt; one missing would be a bug, and counts as not served.
  const all = arrivals.map(
    (a) =>
      outcomes.get(`${keyPrefix}${a.index}`) ?? {
        key: `${keyPrefix}${a.index}`,
        ok: false,
        latencyS: 0,
        headerless: a.headerless,
        unfinished: true,
      },
  );
  const counts: E2eAttemptCounts =
    report.type === "attempts" ? report : { total: 0, byStatus: {}, requestsByAttempts: {} };
  // Answers inside the saturated window (first sent at its scheduled instant, answered latencyS later); none
  // counted where the schedule has no such window.
  const [fromS, toS] = SATURATED_WINDOW_S ?? [0, 0];
  const saturatedAnswers = arrivals.filter((a) => {
    const o = outcomes.get(`${keyPrefix}${a.index}`);
    const atS = o?.ok ? a.atS + o.latencyS : Number.NaN;
    return atS >= fromS && atS < toS;
  }).length;
  return { outcomes: all, attempts: counts, sendLagsMs, saturatedAnswers };
}

/**
 * A deployment's router counts so far (summed over its shards): its promises, or null when its policy keeps no
 * ledger, and its refusals by reason.
 */
async function routerCountsOf(
  base: string,
  deployment: string,
): Promise<{ promises: PromiseOutcomes | null; byReason: Record<string, number> }> {
  const res = await fetch(`${base}/spillway/overview?replicas=0`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (!res.ok) throw new Error(`/spillway/overview answered ${res.status}`);
  // The part of src/edge/fleet-overview.ts's FleetOverview read here (that module is typed for the Worker).
  const overview = (await res.json()) as {
    deployments: {
      deployment: string;
      ledger: { promises: PromiseOutcomes } | null;
      rejectionsByReason: Record<string, number>;
    }[];
  };
  const view = overview.deployments.find((d) => d.deployment === deployment);
  if (!view) throw new Error(`/spillway/overview has no deployment ${deployment}`);
  return { promises: view.ledger?.promises ?? null, byReason: view.rejectionsByReason };
}

const results: PolicyRecord[] = [];
try {
  const fleet = await startE2eFleet(policyIds, {
    replicas: REPLICAS,
    maxOngoingRequests: MAX_ONGOING,
    maxQueuedRequests: MAX_QUEUED,
    queueTimeoutS: 10,
  });
  engines = fleet.engines;
  // --log: the routers' rejection records (and wrangler's output) go to stdout.
  const config = JSON.stringify({ deployments: fleet.deployments, logRejections: Boolean(values.log) });
  const started = await startWorkerOnFreePort({
    vars: { SPILLWAY_CONFIG: config, SPILLWAY_ADMIN_TOKEN: ADMIN_TOKEN },
    quiet: !values.log,
    // The rejection records are the Durable Objects' console.log: wrangler prints them at `log` only.
    ...(values.log ? { logLevel: "log" as const } : {}),
    root,
  });
  worker = started.worker;
  const workerBase = started.base;

  const proxy = forkTypeScript("eval/e2e-proxy.ts", [workerBase, String(PROXY_DELAY_SEED)], root);
  children.push(proxy);
  const clients = Array.from({ length: CLIENT_PROCESSES }, () => forkTypeScript("eval/e2e-client.ts", [], root));
  children.push(...clients);
  const proxyReady = await nextMessage<E2eProxyReport>(proxy, (m) => m.type === "ready", CHILD_START_MS);
  const proxyBase = `http://127.0.0.1:${proxyReady.type === "ready" ? proxyReady.port : 0}`;
  await Promise.all(clients.map((c) => nextMessage<E2eClientReport>(c, (m) => m.type === "ready", CHILD_START_MS)));

  // Warm-up (not measured): a few requests per deployment, so no policy's run pays for the first compile of
  // the Worker, its Durable Object or an engine.
  const warm = new OpenAI({ baseURL: `${workerBase}/v1`, apiKey: "sk-e2e-warm", maxRetries: 5 });
  for (const id of policyIds)
    for (let i = 0; i < 8; i++)
      await warm.completions.create({ model: `e2e-${id}`, prompt: `warm ${i}`, max_tokens: 4 });

  let runId = 0;
  for (const id of policyIds) {
    const outcomes: E2eOutcome[] = [];
    const sendLagsMs: number[] = [];
    const attempts: E2eAttemptCounts = { total: 0, byStatus: {}, requestsByAttempts: {} };
    const add = (into: Record<string, number>, from: Record<string, number>) => {
      for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
    };
    const perSeed: E2eSeedFigures[] = [];
    // The router's promises (booked_capacity only) and refusals by reason over this policy's seeds: its counts since
    // it started, read before and after each seed; a router restarted in between (counts lower) counts from zero.
    let before = await routerCountsOf(workerBase, `e2e-${id}`);
    const ledger = before.promises && { made: 0, kept: 0, broken: 0, noShow: 0 };
    const refusalsByReason: Record<string, number> = {};
    let saturatedAnswers = 0;
    for (const seed of SEEDS) {
      const run = await runOnce(id, seed, runId++, clients, proxy, proxyBase);
      const after = await routerCountsOf(workerBase, `e2e-${id}`);
      const restarted = Object.entries(after.byReason).some(([k, n]) => n < (before.byReason[k] ?? 0));
      for (const [k, n] of Object.entries(after.byReason))
        refusalsByReason[k] = (refusalsByReason[k] ?? 0) + n - (restarted ? 0 : (before.byReason[k] ?? 0));
      if (ledger && after.promises) {
        const from = before.promises && before.promises.made <= after.promises.made ? before.promises : undefined;
        for (const k of PROMISE_OUTCOME_KEYS) ledger[k] += after.promises[k] - (from?.[k] ?? 0);
      }
      before = after;
      const own = summarizeE2ePolicy(id, run.outcomes, run.attempts.total);
      perSeed.push({
        seed,
        requests: own.requests,
        servedFraction: own.servedFraction,
        servedWithinS: own.servedWithinS,
        attemptsPerOffered: own.attemptsPerOffered,
      });
      saturatedAnswers += run.saturatedAnswers;
      outcomes.push(...run.outcomes);
      sendLagsMs.push(...run.sendLagsMs);
      attempts.total += run.attempts.total;
      add(attempts.byStatus, run.attempts.byStatus);
      add(attempts.requestsByAttempts, run.attempts.requestsByAttempts);
      await sleep(PAUSE_BETWEEN_RUNS_MS);
    }
    const result: PolicyRecord = {
      ...summarizeE2ePolicy(id, outcomes, attempts.total),
      attemptsByStatus: attempts.byStatus,
      requestsByAttempts: attempts.requestsByAttempts,
      sendLagP99Ms: percentile(sendLagsMs, 99),
      perSeed,
      ledger,
      refusalsByReason,
      // Only where the schedule saturates the fleet whatever the policy (not `spikes`: see E2E_SCHEDULES).
      ...(SATURATED_WINDOW_S && {
        saturatedRps: saturatedAnswers / ((SATURATED_WINDOW_S[1] - SATURATED_WINDOW_S[0]) * SEEDS.length),
      }),
    };
    results.push(result);
    console.log(JSON.stringify(result));
  }
} finally {
  await stopAll();
}
// Another schedule's run goes to a file of its own: the headline file (which `npm run eval` renders and the docs'
// tests read) holds the burst.
const out = values.out ?? `docs/evaluation-e2e-openai${SCHEDULE === "burst" ? "" : `-${SCHEDULE}`}.json`;
writeGenerated(
  resolve(root, out),
  `${JSON.stringify(
    {
      // The command as run, flags included: a run with --policies or --out is not `npm run eval:e2e`.
      generatedBy: ["npx tsx eval/e2e-openai.ts", ...process.argv.slice(2)].join(" "),
      commit,
      capacityRps,
      schedule: SCHEDULE,
      phases: PHASES,
      headerlessShare: HEADERLESS_SHARE,
      proxyDelayMs: [50, 300],
      maxRunS: MAX_RUN_S,
      clientProcesses: CLIENT_PROCESSES,
      seeds: SEEDS,
      policies: results,
    },
    null,
    1,
  )}\n`,
);
console.log(`wrote ${out}`);
process.exit(0);
