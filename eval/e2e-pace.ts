/**
 * `npm run eval:e2e-pace`: how fast the end-to-end run's stack really serves, against the simulator's capacity of
 * the same fleet. It starts the stack `npm run eval:e2e` starts (wrangler dev, the Worker and its router Durable
 * Object, in front of three engine servers with 4 slots each, queue 16, the same request sizes) and keeps it
 * saturated with a closed loop of requests (`--concurrency`, default 24: every slot busy and a queue behind them,
 * never a full one), then counts the answers per second over a measured window after a warm-up.
 *
 * Why: the simulator's twins of the end-to-end run (`npm run eval:e2e-twin`) serve more than the real run at every
 * horizon, for every policy alike, which a fleet slower than the simulator's model would explain (the Worker's hop
 * to an engine and back, the release's call to the router, engines sharing two cores with wrangler). This measures
 * that pace instead of fitting it. Writes docs/e2e-pace.json (`--out`), which the twin reads.
 *
 * Flags: --concurrency <n> (default 24), --warmup <s> (default 10), --seconds <s> (measured, default 30),
 * --out <path>. Loopback only; it stops everything it started on exit, on error and after a bounded time.
 */

import { resolve } from "node:path";
import { commandFlags, positiveIntFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type ManagedProcess, startWorkerOnFreePort } from "../src/bench/stack";
import type { RunningEngineServer } from "../src/engine/index";
import { measureE2eCapacity, startE2eFleet } from "./e2e-fleet";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const { values, CONCURRENCY, WARMUP_S, MEASURED_S } = commandFlags(
  "npm run eval:e2e-pace -- [--concurrency <n>] [--warmup <s>] [--seconds <s>] [--out <path>]",
  {
    options: {
      concurrency: { type: "string" },
      warmup: { type: "string" },
      seconds: { type: "string" },
      out: { type: "string" },
    },
  },
  ({ values }) => ({
    values,
    CONCURRENCY: positiveIntFlag("concurrency", values.concurrency, 24),
    WARMUP_S: positiveIntFlag("warmup", values.warmup, 10),
    MEASURED_S: positiveIntFlag("seconds", values.seconds, 30),
  }),
);
/** The end-to-end run's fleet and request sizes (eval/e2e-openai.ts). */
const SHAPE = { replicas: 3, maxOngoingRequests: 4, maxQueuedRequests: 16, queueTimeoutS: 10 };
const OUTPUT_TOKENS = 32;
const POLICY = "static-30";

let engines: RunningEngineServer[] = [];
let worker: ManagedProcess | undefined;
const stopAll = async () => {
  await worker?.stop();
  await Promise.all(engines.map((e) => e.close()));
};
// Bounded: start-up, the warm-up and the measured window, plus slack for the loop to wind down.
const BUDGET_MS = 120_000 + (WARMUP_S + MEASURED_S) * 1000;
setTimeout(() => {
  console.error(`the run exceeded its ${BUDGET_MS / 1000} s budget: stopping wrangler and the engines`);
  void stopAll().finally(() => process.exit(1));
}, BUDGET_MS).unref();

const capacityRps = measureE2eCapacity(SHAPE, { promptTokens: 16, outputTokens: OUTPUT_TOKENS });
let answered: number[] = [];
const statuses: Record<string, number> = {};
try {
  const fleet = await startE2eFleet([POLICY], SHAPE);
  engines = fleet.engines;
  const started = await startWorkerOnFreePort({
    vars: { SPILLWAY_CONFIG: JSON.stringify({ deployments: fleet.deployments }) },
    quiet: true,
    root,
  });
  worker = started.worker;
  const url = `${started.base}/v1/completions`;
  const t0 = performance.now();
  const endMs = (WARMUP_S + MEASURED_S) * 1000;
  let n = 0;
  // One of the closed loop's clients: a request, its answer, the next, until the window ends.
  const client = async () => {
    while (performance.now() - t0 < endMs) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer sk-pace-${n}` },
        // ignore_eos: every answer is OUTPUT_TOKENS long, as in the end-to-end run and the capacity measurement.
        body: JSON.stringify({
          model: `e2e-${POLICY}`,
          prompt: `pace ${n++}`,
          max_tokens: OUTPUT_TOKENS,
          ignore_eos: true,
        }),
      });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.ok) answered.push(performance.now() - t0);
      // Refused only at the start: the loop's first requests arrive at once, more than the queue holds before the
      // first placements (24 into a 16-deep queue: 8 refusals). A short wait, and the client is back.
      else await new Promise((r) => setTimeout(r, 100));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  answered = answered.filter((ms) => ms >= WARMUP_S * 1000 && ms < endMs);
} finally {
  await stopAll();
}
const measuredRps = answered.length / MEASURED_S;
// The window's thirds, each its own rate: how much the pace moves within one run on a shared machine.
const thirdS = MEASURED_S / 3;
const windowRps = [0, 1, 2].map(
  (i) =>
    answered.filter((ms) => ms >= (WARMUP_S + i * thirdS) * 1000 && ms < (WARMUP_S + (i + 1) * thirdS) * 1000).length /
    thirdS,
);
const result = {
  generatedBy: ["npm run eval:e2e-pace", ...process.argv.slice(2)].join(" "),
  fleet: SHAPE,
  outputTokens: OUTPUT_TOKENS,
  concurrency: CONCURRENCY,
  warmupS: WARMUP_S,
  measuredS: MEASURED_S,
  statuses,
  answered: answered.length,
  measuredRps,
  windowRps,
  simulatedRps: capacityRps,
  pace: measuredRps / capacityRps,
};
const out = values.out ?? "docs/e2e-pace.json";
writeGenerated(resolve(root, out), `${JSON.stringify(result, null, 1)}\n`);
console.log(
  `${answered.length} answers in ${MEASURED_S} s: ${measuredRps.toFixed(2)} req/s against the simulator's ${capacityRps.toFixed(2)} (pace ${result.pace.toFixed(3)}; by thirds of the window ${windowRps.map((r) => r.toFixed(2)).join(", ")}); statuses ${JSON.stringify(statuses)}\nwrote ${out}`,
);
process.exit(0);
