/**
 * `npm run eval:e2e`: the end-to-end check of issue 15 - real openai-node clients (the `openai` package, its
 * default two retries, its own `x-stainless-*` headers and Retry-After handling) through a local proxy that adds
 * 50-300 ms of delay to every attempt, against `wrangler dev` (the Worker and its DeploymentRouter Durable
 * Objects) in front of three engine servers (the real scheduler, simulated GPU), queue 16 - the demo's stack.
 * 30% of the clients' requests reach the Worker without any `x-stainless-*` header (the proxy strips them).
 * A 3x burst for 10 s over a 0.5x baseline, the same seeded arrivals for every policy, one policy at a time.
 * Writes docs/evaluation-e2e-openai.json, which `npm run eval` puts in docs/evaluation.md.
 *
 * The clients run in this process (one `OpenAI` instance per request, so each has its own credential and so its
 * own fingerprint); flags: --policies a,b (default: booked_capacity, router_queue_drain_rate, retry_schedule,
 * static-30), --log (rejection records and wrangler output to stdout), --out <path>.
 */

import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { startWorkerOnFreePort, waitForWorker } from "../src/bench/stack";
import { seededRandom } from "../src/engine/rng";
import { measureCapacity } from "../src/sim/capacity";
import { COMPLETION_HORIZONS_S, percentile } from "../src/sim/metrics";
import { scenarioSchema } from "../src/sim/scenario";
import { startE2eFleet } from "./e2e-fleet";

const root = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: { policies: { type: "string" }, log: { type: "boolean" }, out: { type: "string" } },
});
const policyIds = values.policies?.split(",") ?? [
  "booked_capacity",
  "router_queue_drain_rate",
  "retry_schedule",
  "static-30",
];

const REPLICAS = 3;
const MAX_ONGOING = 4;
const OUTPUT = 32;
const MAX_QUEUED = 16;
const HEADERLESS_SHARE = 0.3;
const PHASES = [
  { durationS: 10, load: 0.5 },
  { durationS: 10, load: 3 },
  { durationS: 20, load: 0.5 },
];
/** A run ends this long after its first arrival; requests still unfinished count as not served. */
const MAX_RUN_S = 150;

/** The figures of one policy's run. */
export interface E2eOpenAiPolicy {
  id: string;
  requests: number;
  served: number;
  servedFraction: number;
  servedWithinS: Record<string, number>;
  attemptsPerOffered: number;
  timeToSuccessP50S: number | null;
  headerlessServedFraction: number | null;
  sdkServedFraction: number | null;
  unfinished: number;
}

const capacityRps = measureCapacity(
  scenarioSchema.parse({
    name: "e2e",
    title: "e2e",
    description: "e2e",
    seed: 1,
    phases: [{ durationS: 1, load: 1 }],
    tailS: 0,
    fleet: { replicas: [{ count: REPLICAS, speed: 1 }], maxOngoingRequests: MAX_ONGOING, maxTotalTokens: 8192 },
    router: { maxQueuedRequests: MAX_QUEUED, queueTimeoutS: 30 },
    requests: { prompt: { kind: "fixed", tokens: 16 }, output: { kind: "fixed", tokens: OUTPUT } },
    client: { maxRetries: 2 },
  }),
);

const { engines, deployments } = await startE2eFleet(policyIds, {
  replicas: REPLICAS,
  maxOngoingRequests: MAX_ONGOING,
  maxQueuedRequests: MAX_QUEUED,
  queueTimeoutS: 10,
});
// --log: the routers' rejection records (and wrangler's output) go to stdout.
const config = JSON.stringify({ deployments, logRejections: Boolean(values.log) });
const { worker, base: workerBase } = await startWorkerOnFreePort({
  vars: { SPILLWAY_CONFIG: config },
  quiet: !values.log,
  root,
});

/** Attempts seen per request id, and the proxy's delay source. */
const attempts = new Map<string, number>();
const delays = seededRandom(77);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The delaying proxy: 50-300 ms per attempt (half each way), strips SDK headers from header-less clients. */
const proxy = createServer(async (req: IncomingMessage, res: ServerResponse) => {
  const delayMs = 50 + delays() * 250;
  const body = await readBody(req);
  await sleep(delayMs / 2);
  const id = String(req.headers["x-e2e-id"] ?? "");
  attempts.set(id, (attempts.get(id) ?? 0) + 1);
  const headerless = req.headers["x-e2e-headerless"] === "1";
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k === "host" || k === "content-length" || k.startsWith("x-e2e-")) continue;
    if (headerless && k.startsWith("x-stainless-")) continue;
    headers[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  try {
    const upstream = await fetch(`${workerBase}${req.url}`, { method: req.method, headers, body });
    const answer = Buffer.from(await upstream.arrayBuffer());
    await sleep(delayMs / 2);
    const out: Record<string, string> = {};
    upstream.headers.forEach((v, k) => {
      if (k !== "content-length" && k !== "content-encoding" && k !== "transfer-encoding") out[k] = v;
    });
    res.writeHead(upstream.status, out);
    res.end(answer);
  } catch {
    res.writeHead(502);
    res.end();
  }
});
await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
const proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

const results: E2eOpenAiPolicy[] = [];
try {
  await waitForWorker(worker, `${workerBase}/health`);
  // Warm-up (not measured): a few requests per deployment, so no policy's run pays for the first compile of
  // the Worker, its Durable Object or an engine.
  const warm = new OpenAI({ baseURL: `${workerBase}/v1`, apiKey: "sk-e2e-warm", maxRetries: 5 });
  for (const id of policyIds)
    for (let i = 0; i < 8; i++)
      await warm.completions.create({ model: `e2e-${id}`, prompt: `warm ${i}`, max_tokens: 4 });
  for (const id of policyIds) {
    attempts.clear();
    const arrivals = seededRandom(2026); // the same arrivals and the same header-less clients for every policy
    const started = performance.now();
    const outcomes: Promise<{ ok: boolean; latencyS: number; headerless: boolean; key: string }>[] = [];
    let t = 0;
    let phaseStart = 0;
    let n = 0;
    for (const phase of PHASES) {
      const rate = phase.load * capacityRps;
      for (;;) {
        t += -Math.log(1 - arrivals()) / rate;
        if (t >= phaseStart + phase.durationS) break;
        const headerless = arrivals() < HEADERLESS_SHARE;
        const wait = started + t * 1000 - performance.now();
        if (wait > 0) await sleep(wait);
        const key = `${id}-${n++}`;
        const client = new OpenAI({
          baseURL: `${proxyBase}/v1`,
          apiKey: `sk-e2e-${key}`,
          maxRetries: 2,
          timeout: MAX_RUN_S * 1000,
          defaultHeaders: { "x-e2e-id": key, ...(headerless ? { "x-e2e-headerless": "1" } : {}) },
        });
        const sent = performance.now();
        outcomes.push(
          client.completions
            // ignore_eos: every answer is OUTPUT tokens long, as in the capacity measurement (an engine extension).
            .create({ model: `e2e-${id}`, prompt: `request ${key}`, max_tokens: OUTPUT, ignore_eos: true } as never)
            .then(
              () => ({ ok: true, latencyS: (performance.now() - sent) / 1000, headerless, key }),
              () => ({ ok: false, latencyS: 0, headerless, key }),
            ),
        );
      }
      phaseStart += phase.durationS;
      t = phaseStart;
    }
    const unfinishedMarker = { ok: false, latencyS: 0, headerless: false, key: "" };
    const deadline = sleep(Math.max(0, started + MAX_RUN_S * 1000 - performance.now())).then(() => "deadline");
    const settled = await Promise.all(
      outcomes.map((o) => Promise.race([o, deadline.then(() => ({ ...unfinishedMarker, unfinished: true }))])),
    );
    const served = settled.filter((o) => o.ok);
    const total = settled.length;
    const share = (list: typeof settled) => (list.length > 0 ? list.filter((o) => o.ok).length / list.length : null);
    const result: E2eOpenAiPolicy = {
      id,
      requests: total,
      served: served.length,
      servedFraction: served.length / total,
      servedWithinS: Object.fromEntries(
        COMPLETION_HORIZONS_S.map((h) => [String(h), served.filter((o) => o.latencyS <= h).length / total]),
      ),
      attemptsPerOffered: [...attempts.values()].reduce((a, b) => a + b, 0) / total,
      timeToSuccessP50S: percentile(
        served.map((o) => o.latencyS),
        50,
      ),
      headerlessServedFraction: share(settled.filter((o) => o.headerless)),
      sdkServedFraction: share(settled.filter((o) => !o.headerless && o.key !== "")),
      unfinished: settled.filter((o) => "unfinished" in o).length,
    };
    results.push(result);
    console.log(JSON.stringify(result));
    await sleep(3_000);
  }
} finally {
  proxy.close();
  await worker.stop();
  await Promise.all(engines.map((e) => e.close()));
}
writeFileSync(
  resolve(root, values.out ?? "docs/evaluation-e2e-openai.json"),
  `${JSON.stringify({ generatedBy: "npm run eval:e2e", capacityRps, phases: PHASES, headerlessShare: HEADERLESS_SHARE, proxyDelayMs: [50, 300], maxRunS: MAX_RUN_S, policies: results }, null, 1)}\n`,
);
console.log(`wrote ${values.out ?? "docs/evaluation-e2e-openai.json"}`);
process.exit(0);
