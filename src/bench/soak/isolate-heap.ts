/**
 * `npm run soak:heap`: is any of the memory the soak saw ours? The soak's load (20x overload of a three-replica
 * fleet, most requests refused) through the Worker in a Miniflare instance (workerd, the same runtime as
 * `wrangler dev`, without wrangler's proxy Worker), reading the isolate's V8 heap through the inspector: after a
 * warm-up, after each round of load, and after an idle period with forced full collections. A leak in our code
 * (the Worker, the router Durable Object: one isolate) grows the collected heap round after round; what the
 * runtime keeps shows in the process's resident size, not in the heap. Prints the figures as JSON.
 *
 * Every request has its own prompt, so its own fingerprint, as real traffic does: the router's per-request state
 * (the `booked_capacity` ledger's bookings, the refusal counts, the hinted retries) grows with the refusals as it
 * would in production, and must be bounded and let go.
 *
 * Flags: --rounds (3), --requests per round (20000), --concurrency (256), --idle-s (10), --policy (the Worker's
 * default, `booked_capacity`; any `retryAfterPolicy`), --same-body (every request the same, one fingerprint: the
 * runs before 2026-12-05), --settle-s (0: off; after the last round, wait this long, send one request, which moves
 * the router's ledger on past every promise that lapsed meanwhile, and measure again: 130 s outlasts the ledger's
 * 125 s and the 3 s a promise may be late).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { startEngineServer } from "../../engine/index";
import { commandFlags, numberFlag, positiveIntFlag } from "../command-line";
import { closedLoopLoad } from "../edge/http-load";
import { procStat } from "../proc-stat";
import { connectInspector, type HeapUsage } from "./inspector";
import { routerStats } from "./run-soak";

const { values, rounds, requests, concurrency, idleS, settleS } = commandFlags(
  "npm run soak:heap -- [--rounds N (default 3)] [--requests N (a round, default 20000)] [--concurrency N (default 256)] [--idle-s S (default 10)] [--policy NAME (default booked_capacity)] [--same-body] [--settle-s S (default 0: off)]",
  {
    options: {
      rounds: { type: "string" },
      requests: { type: "string" },
      concurrency: { type: "string" },
      "idle-s": { type: "string" },
      policy: { type: "string", default: "booked_capacity" },
      "same-body": { type: "boolean", default: false },
      "settle-s": { type: "string" },
    },
  },
  ({ values }) => ({
    values,
    rounds: positiveIntFlag("rounds", values.rounds, 3),
    requests: positiveIntFlag("requests", values.requests, 20000),
    concurrency: positiveIntFlag("concurrency", values.concurrency, 256),
    idleS: numberFlag("idle-s", values["idle-s"], 10, { min: 0 }),
    settleS: numberFlag("settle-s", values["settle-s"], 0, { min: 0 }),
  }),
);

const dir = mkdtempSync(join(tmpdir(), "spillway-heap-"));
const scriptPath = join(dir, "worker.js");
await build({
  entryPoints: ["src/edge/worker.ts"],
  bundle: true,
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  external: ["cloudflare:*"],
  outfile: scriptPath,
  logLevel: "warning",
});

// The soak's fleet: three engines (32 tokens a request), 4 slots each, 32 queue places, computed Retry-After
// (a static fallback of 2 s).
const engines = await Promise.all(
  [0, 1, 2].map(() => startEngineServer({ port: 0, speed: 4, accessLog: false, logLevel: "warning", log: () => {} })),
);
const config = {
  logRejections: false,
  deployments: {
    "demo-model": {
      replicas: engines.map((e) => e.url),
      maxOngoingRequests: 4,
      maxQueuedRequests: 32,
      backpressure: { retryAfterPolicy: values.policy, retryAfterS: 2 },
    },
  },
};
const mf = new Miniflare({
  modules: true,
  scriptPath,
  modulesRoot: dir,
  compatibilityDate: "2026-04-26",
  compatibilityFlags: ["enable_request_signal"],
  durableObjects: { DEPLOYMENT_ROUTER: { className: "DeploymentRouter", useSQLite: true } },
  bindings: { SPILLWAY_CONFIG: JSON.stringify(config), SPILLWAY_ADMIN_TOKEN: "heap-token" },
  cf: false,
  host: "127.0.0.1",
  port: 0,
  inspectorPort: 0,
});
const base = (await mf.ready).href.replace(/\/$/, "");
const inspectorHost = (await mf.getInspectorURL()).host;
const targets = (await (await fetch(`http://${inspectorHost}/json`)).json()) as { webSocketDebuggerUrl: string }[];
const wake = async () => (await fetch(`${base}/health`)).arrayBuffer();
const inspector = await connectInspector(targets[0]?.webSocketDebuggerUrl as string, wake);

// Numbered across rounds: a request never repeats an earlier one's fingerprint (none of them retries).
let numbered = 0;
const body = (n: number) =>
  JSON.stringify({
    model: "demo-model",
    prompt: values["same-body"] ? "hello" : `hello ${numbered + n}`,
    max_tokens: 32,
    ignore_eos: true,
  });
const MiB = (h: HeapUsage) => ({
  usedMiB: Number((h.usedSize / 2 ** 20).toFixed(2)),
  totalMiB: Number((h.totalSize / 2 ** 20).toFixed(2)),
  embedderMiB: Number((h.embedderHeapUsedSize / 2 ** 20).toFixed(2)),
});
/** Resident size (MiB) of the workerd processes this process started (Miniflare's runtime), from /proc. */
function workerdRssMiB(): number {
  let kib = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = procStat(pid);
      if (stat?.ppid !== process.pid || !stat.comm.includes("workerd")) continue;
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // The process ended while we looked.
    }
  }
  return Math.round(kib / 1024);
}

/** What the router holds: its queue, leases and outstanding bookings, and its internal collections. */
async function routerState() {
  return (await routerStats(base, "heap-token")).map((s) => ({
    queueDepth: s.queueDepth,
    activeLeases: s.activeLeases,
    outstandingBookings: s.outstandingBookings,
    ...s.internal,
  }));
}

const report: Record<string, unknown> = {
  rounds,
  requestsPerRound: requests,
  concurrency,
  idleS,
  policy: values.policy,
  distinctBodies: !values["same-body"],
  settleS,
};
await closedLoopLoad(`${base}/v1/completions`, body, 8, 200); // warm-up: code paths compiled, router warm
numbered += 200;
report.afterWarmup = { ...MiB(await inspector.heapAfterGc()), workerdRssMiB: workerdRssMiB() };
const perRound: unknown[] = [];
for (let round = 1; round <= rounds; round++) {
  const load = await closedLoopLoad(`${base}/v1/completions`, body, concurrency, requests);
  numbered += requests;
  const underLoad = MiB(await inspector.heapUsage());
  await new Promise((r) => setTimeout(r, idleS * 1000));
  perRound.push({
    round,
    statuses: load.statuses,
    throughput: Math.round(load.throughput),
    heapRightAfterLoad: underLoad,
    heapAfterIdleAndGc: MiB(await inspector.heapAfterGc()),
    workerdRssMiB: workerdRssMiB(),
    router: await routerState(),
  });
}
report.perRound = perRound;
if (settleS > 0) {
  await new Promise((r) => setTimeout(r, settleS * 1000));
  const one = await closedLoopLoad(`${base}/v1/completions`, body, 1, 1);
  numbered += 1;
  report.afterSettling = {
    statuses: one.statuses,
    heapAfterGc: MiB(await inspector.heapAfterGc()),
    workerdRssMiB: workerdRssMiB(),
    router: await routerState(),
  };
}
console.log(JSON.stringify(report, null, 2));

inspector.close();
await mf.dispose();
await Promise.all(engines.map((e) => e.close()));
rmSync(dir, { recursive: true, force: true });
