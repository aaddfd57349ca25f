/**
 * `npm run eval:e2e`: a short version of two burst scenarios on the real stack - `wrangler dev` (the Worker and
 * its DeploymentRouter Durable Objects) in front of engine servers (the real scheduler, simulated GPU), loaded by
 * the bench client honouring `retry-after-ms` / `Retry-After` (src/bench). Everything on 127.0.0.1; requests
 * and duration are bounded. Writes docs/evaluation-e2e.json, which `npm run eval` puts in the report.
 *
 * One deployment per policy (same replicas), run one after the other, so each policy has its own router and
 * estimator and the fleet is idle when each run starts. Flags: --policies a,b (default: the header policies).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandFlags, numberFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import type { RequestOutcome } from "../src/bench/request-outcome";
import { sendRequest } from "../src/bench/send-request";
import { startWorkerOnFreePort, startWranglerDev, waitForWorker } from "../src/bench/stack";
import { seededRandom } from "../src/engine/rng";
import { percentile } from "../src/sim/metrics";
import type { E2eResult } from "../src/sim/report-markdown";
import { measureE2eCapacity, startE2eFleet } from "./e2e-fleet";
import { e2ePoliciesFlag } from "./e2e-policies-flag";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const { port, policyIds } = commandFlags(
  "npx tsx eval/e2e.ts [--policies <id,...>] [--port <n>]",
  { options: { policies: { type: "string" }, port: { type: "string" } } },
  ({ values }) => ({
    // --port 0 (the default): a free port.
    port: numberFlag("port", values.port, 0, { min: 0, max: 65535, integer: true }),
    policyIds: e2ePoliciesFlag(values.policies, [
      "static-5",
      "static-30",
      "router_queue_drain_rate",
      "queue_drain_rate",
      "retry_schedule",
    ]),
  }),
);

/** The e2e fleet: 3 engine servers, 2 requests each at a time, prompts 64 and outputs 32 tokens. */
const REPLICAS = 3;
const MAX_ONGOING = 2;
const PROMPT = 64;
const OUTPUT = 32;
const MAX_QUEUED = 16;
const MAX_RETRIES = 2;
/** Hard caps: requests per run and seconds per run (retries after the last arrival included). */
const MAX_REQUESTS = 400;
const MAX_RUN_S = 120;

const SCENARIOS = [
  {
    name: "burst-3x (short)",
    description: "0.5x for 10 s, 3x for 10 s, 0.5x for 20 s; queue 16 per router, 2 SDK-style retries.",
    phases: [
      { durationS: 10, load: 0.5 },
      { durationS: 10, load: 3 },
      { durationS: 20, load: 0.5 },
    ],
  },
  {
    name: "burst-10x (short)",
    description: "0.5x for 10 s, 10x for 4 s, 0.5x for 20 s; queue 16 per router, 2 SDK-style retries.",
    phases: [
      { durationS: 10, load: 0.5 },
      { durationS: 4, load: 10 },
      { durationS: 20, load: 0.5 },
    ],
  },
];

// The simulator's capacity of the same fleet (same timing model and scheduler), as the load unit.
const capacityRps = measureE2eCapacity(
  { replicas: REPLICAS, maxOngoingRequests: MAX_ONGOING, maxQueuedRequests: MAX_QUEUED },
  { promptTokens: PROMPT, outputTokens: OUTPUT },
);

const { engines, deployments } = await startE2eFleet(policyIds, {
  replicas: REPLICAS,
  maxOngoingRequests: MAX_ONGOING,
  maxQueuedRequests: MAX_QUEUED,
  queueTimeoutS: 30,
});
const config = JSON.stringify({ deployments, logRejections: false });
// A given --port is used as is; otherwise a free one (another run or test may hold any fixed port).
const wranglerOptions = { vars: { SPILLWAY_CONFIG: config }, quiet: true, root };
const { worker, base: baseUrl } = port
  ? { worker: startWranglerDev({ ...wranglerOptions, port }), base: `http://127.0.0.1:${port}` }
  : await startWorkerOnFreePort(wranglerOptions);
const results: E2eResult[] = [];
try {
  await waitForWorker(worker, `${baseUrl}/health`);
  const prompt = { prompt: Array.from({ length: PROMPT }, (_, i) => 100 + i), promptLen: PROMPT, outputLen: OUTPUT };
  for (const [s, scenario] of SCENARIOS.entries()) {
    const result: E2eResult = { scenario: scenario.name, description: scenario.description, policies: [] };
    for (const id of policyIds) {
      const started = performance.now();
      const arrivals = seededRandom(1000 + s); // same arrival times for every policy
      const tasks: Promise<RequestOutcome>[] = [];
      let t = 0;
      let phaseStart = 0;
      for (const phase of scenario.phases) {
        const rate = phase.load * capacityRps;
        for (;;) {
          t += -Math.log(1 - arrivals()) / rate;
          if (t >= phaseStart + phase.durationS || tasks.length >= MAX_REQUESTS) break;
          const wait = started + t * 1000 - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          tasks.push(
            sendRequest(prompt, {
              baseUrl,
              model: `e2e-${id}`,
              ignoreEos: true,
              honorRetryAfter: true,
              maxRetries: MAX_RETRIES,
            }),
          );
        }
        phaseStart += phase.durationS;
        t = phaseStart;
      }
      const deadline = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), MAX_RUN_S * 1000));
      const outcomes = await Promise.race([Promise.all(tasks), deadline]);
      if (outcomes === "timeout") throw new Error(`${scenario.name} / ${id} ran past ${MAX_RUN_S} s`);
      const errors = outcomes.filter((o) => !o.success && !/^HTTP (429|503)/.test(o.error));
      if (errors.length > 0) console.warn(`${errors.length} requests failed otherwise, e.g. ${errors[0]?.error}`);
      let retries = 0;
      let admittedRetries = 0;
      let servedAttempts = 0;
      const times: number[] = [];
      for (const o of outcomes) {
        retries += o.retries;
        // The bench client retries only refusals: a request that ended otherwise was admitted on its last attempt.
        const refusedAtLast = /^HTTP (429|503)/.test(o.error);
        if (o.retries > 0 && !refusedAtLast) admittedRetries += 1;
        if (o.success) {
          servedAttempts += o.retries + 1;
          times.push(o.latency);
        }
      }
      const served = outcomes.filter((o) => o.success).length;
      result.policies.push({
        id,
        requests: outcomes.length,
        served,
        retries,
        admittedRetries,
        admittedRetryRate: retries > 0 ? admittedRetries / retries : null,
        attemptsPerSuccess: served > 0 ? servedAttempts / served : null,
        timeToSuccessP50S: percentile(times, 50),
        timeToSuccessP99S: percentile(times, 99),
        gaveUp: outcomes.filter((o) => /^HTTP (429|503)/.test(o.error)).length,
      });
      console.log(`${scenario.name} / ${id}: ${JSON.stringify(result.policies.at(-1))}`);
      // Let the fleet go idle before the next policy.
      await new Promise((r) => setTimeout(r, 3_000));
    }
    results.push(result);
  }
} finally {
  await worker.stop();
  await Promise.all(engines.map((e) => e.close()));
}
// Policies not run this time keep their earlier figures (so one policy can be rerun alone).
const outPath = join(root, "docs/evaluation-e2e.json");
const earlier: E2eResult[] = existsSync(outPath) ? (JSON.parse(readFileSync(outPath, "utf8")) as E2eResult[]) : [];
for (const result of results) {
  const before = earlier.find((e) => e.scenario === result.scenario);
  const kept = before?.policies.filter((p) => !policyIds.includes(p.id)) ?? [];
  result.policies = [...kept, ...result.policies];
}
writeGenerated(outPath, `${JSON.stringify(results, null, 1)}\n`);
console.log(`wrote docs/evaluation-e2e.json (capacity unit ${capacityRps.toFixed(2)} req/s)`);
