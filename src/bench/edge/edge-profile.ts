/**
 * `npm run profile:edge`: where the Worker's own CPU goes on the admitted path, anonymous requests against the
 * quota tenant's. Runs spillway's Worker (1 router shard, the edge benchmark's configuration) under miniflare in
 * front of two zero-cost engine servers, attaches V8's sampling profiler through workerd's inspector, and
 * alternates phases of closed-loop load without a key and with the quota tenant's key (anonymous, key,
 * anonymous, key). Each phase's profile is written to `.wrangler/profiles/PHASE-N.cpuprofile` (open it in
 * Chrome's DevTools); the summary compares the two kinds of phase by *sample counts* per request, function by
 * function. Counts, not the profile's time deltas: on a shared machine a descheduled thread's gap is booked to
 * whatever function the next sample lands in.
 *
 * Node 20 needs `--experimental-websocket` (the npm script sets it). Flags: --requests N per phase (default 6000), --entry PATH (the Worker to bundle; default src/edge/worker.ts,
 * e.g. another checkout's), --interval US (sampling interval, default 100).
 *
 * @example
 * ```sh
 * npm run profile:edge -- --entry /path/to/main/src/edge/worker.ts
 * ```
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { commandFlags, positiveIntFlag } from "../command-line";
import { connectInspector } from "../soak/inspector";
import { benchWorkerOptions, bundleWorker, startZeroCostEngines } from "./bench-setup";
import { closedLoopLoad } from "./http-load";

const {
  requests: REQUESTS,
  entry: ENTRY,
  interval: INTERVAL_US,
} = commandFlags(
  "npm run profile:edge -- [--requests N (a phase, default 6000)] [--entry PATH (the Worker, default src/edge/worker.ts)] [--interval US (sampling, default 100)]",
  {
    options: {
      requests: { type: "string" },
      entry: { type: "string", default: "src/edge/worker.ts" },
      interval: { type: "string" },
    },
  },
  ({ values }) => ({
    requests: positiveIntFlag("requests", values.requests, 6000),
    entry: values.entry,
    interval: positiveIntFlag("interval", values.interval, 100),
  }),
);
const KEY = "sk-bench";
const KEY_SHA256 = createHash("sha256").update(KEY).digest("hex");

/** The part of a V8 CPU profile read here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; lineNumber: number } }>;
  samples: number[];
}

/** Samples per function (name and bundle line), the idle ones left out. */
function samplesByFunction(profile: CpuProfile): Map<string, number> {
  const names = new Map(
    profile.nodes.map((n) => [n.id, `${n.callFrame.functionName || "(anonymous)"}:${n.callFrame.lineNumber}`]),
  );
  const counts = new Map<string, number>();
  for (const id of profile.samples) {
    const name = names.get(id) as string;
    if (name.startsWith("(idle)")) continue;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

async function main(): Promise<void> {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  const engines = await startZeroCostEngines(2);
  mkdirSync(".wrangler/profiles", { recursive: true });
  const dir = mkdtempSync(join(".wrangler", "profile-"));
  try {
    const scriptPath = join(dir, "worker.mjs");
    await bundleWorker(ENTRY, scriptPath);
    const config = JSON.stringify({
      logRejections: false,
      deployments: {
        "demo-model": { replicas: engines.map((e) => e.url), maxOngoingRequests: 256, maxQueuedRequests: 4096 },
      },
      tenants: {
        keys: { [KEY_SHA256]: { name: "bench", requestsPerMinute: 10_000_000, tokensPerMinute: 1_000_000_000 } },
      },
    });
    const mf = new Miniflare({
      ...benchWorkerOptions(scriptPath, { SPILLWAY_CONFIG: config }, true),
      inspectorPort: 0,
    });
    try {
      const url = `${(await mf.ready).origin}/v1/completions`;
      const inspectorHost = (await mf.getInspectorURL()).host;
      const targets = (await (await fetch(`http://${inspectorHost}/json/list`)).json()) as Array<{
        title: string;
        webSocketDebuggerUrl: string;
      }>;
      // The user Worker's isolate (its Durable Objects run in it too), not miniflare's own services.
      const target = targets.find((t) => t.title.includes("core:user")) ?? targets[0];
      if (!target) throw new Error("workerd's inspector lists no Worker");
      const cdp = await connectInspector(target.webSocketDebuggerUrl, () =>
        fetch(url.replace("/v1/completions", "/health")),
      );
      await cdp.call("Profiler.enable");
      await cdp.call("Profiler.setSamplingInterval", { interval: INTERVAL_US });
      const body = JSON.stringify({ model: "demo-model", prompt: "hello", max_tokens: 4 });
      const byKind = { anonymous: [] as Map<string, number>[], key: [] as Map<string, number>[] };
      console.log(`# edge profile (${ENTRY}, ${REQUESTS} requests per phase)\n`);
      console.log("| phase | req/s | samples per request (busy) |\n| --- | --- | --- |");
      for (const [n, kind] of (["anonymous", "key", "anonymous", "key"] as const).entries()) {
        const headers: Record<string, string> = kind === "key" ? { authorization: `Bearer ${KEY}` } : {};
        await closedLoopLoad(url, body, 32, 300, headers);
        await cdp.call("Profiler.start");
        const load = await closedLoopLoad(url, body, 32, REQUESTS, headers);
        const { profile } = await cdp.call<{ profile: CpuProfile }>("Profiler.stop");
        writeFileSync(`.wrangler/profiles/${kind}-${n}.cpuprofile`, JSON.stringify(profile));
        const counts = samplesByFunction(profile);
        byKind[kind].push(counts);
        const busy = [...counts.values()].reduce((a, b) => a + b, 0);
        console.log(`| ${kind} ${n} | ${load.throughput.toFixed(0)} | ${(busy / REQUESTS).toFixed(3)} |`);
      }
      cdp.close();
      // Per function: the key phases' samples per request less the anonymous phases'.
      const perRequest = (maps: Map<string, number>[], name: string) =>
        maps.reduce((t, m) => t + (m.get(name) ?? 0), 0) / (maps.length * REQUESTS);
      const names = new Set([...byKind.anonymous, ...byKind.key].flatMap((m) => [...m.keys()]));
      const diffs = [...names]
        .map((name) => [name, perRequest(byKind.key, name) - perRequest(byKind.anonymous, name)] as const)
        .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
        .slice(0, 20);
      console.log("\n| function (bundle line) | key less anonymous, samples per 1000 requests |\n| --- | --- |");
      for (const [name, diff] of diffs) console.log(`| ${name} | ${(diff * 1000).toFixed(1)} |`);
    } finally {
      await mf.dispose();
    }
  } finally {
    await Promise.all(engines.map((e) => e.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
