/**
 * The llama.cpp engine on this machine: decode step time and tokens/s at batch 1, 4 and 8, prefill
 * throughput, and the token-budget scheduler's share of each step. Not a test: it prints figures.
 *
 *   npm run make-test-model && npm run bench:llama [-- --model FILE.gguf --threads N --steps N --trials N]
 *
 * It drives the real Scheduler and the llama engine in-process exactly as the engine loop does
 * (nextBatch -> engine -> completeBatch), without HTTP, so the step times are the engine's and the
 * scheduler's alone. Each trial: B requests (64-token prompts, ignore_eos) are admitted and prefilled,
 * then `--steps` decode steps are timed.
 */
import { existsSync } from "node:fs";
import os from "node:os";
import { createLlamaEngine } from "../engine/llama/llama-engine.js";
import { loadLlamaRuntime } from "../engine/llama/llama-runtime.js";
import { DEFAULT_TEST_MODEL_PATH } from "../engine/llama/test-model.js";
import { createLogger } from "../engine/log-line.js";
import { Scheduler } from "../scheduler/index.js";
import { commandFlags, positiveIntFlag } from "./command-line.js";

const {
  modelPath,
  threads,
  steps: STEPS,
  trials: TRIALS,
} = commandFlags(
  `npm run bench:llama -- [--model FILE.gguf (default ${DEFAULT_TEST_MODEL_PATH})] [--threads N (default cores - 1)] [--steps N (decode steps a trial, default 400)] [--trials N (default 5)]`,
  {
    options: {
      model: { type: "string", default: DEFAULT_TEST_MODEL_PATH },
      threads: { type: "string" },
      steps: { type: "string" },
      trials: { type: "string" },
    },
  },
  ({ values }) => ({
    modelPath: values.model,
    threads: positiveIntFlag("threads", values.threads, Math.max(1, os.availableParallelism() - 1)),
    steps: positiveIntFlag("steps", values.steps, 400),
    trials: positiveIntFlag("trials", values.trials, 5),
  }),
);
const PROMPT = 64;
const BATCHES = [1, 4, 8];
const CONTEXT = PROMPT + STEPS + 8;

if (!existsSync(modelPath)) {
  console.error(`bench:llama: no model at ${modelPath}; run npm run make-test-model first`);
  process.exit(1);
}

const runtime = await loadLlamaRuntime({
  modelPath,
  gpu: "cpu",
  sequences: Math.max(...BATCHES),
  contextLength: CONTEXT,
  threads,
  logger: createLogger("warning"),
});
const engine = createLlamaEngine({ sequences: runtime.sequences, eosTokenId: -1 });
const vocab = runtime.summary.vocabSize;

interface Trial {
  decodeMs: number[];
  schedulerMs: number[];
  prefillTokensPerS: number;
}

async function trial(batch: number, seed: number): Promise<Trial> {
  const scheduler = new Scheduler({
    maxTotalTokens: batch * CONTEXT + 1,
    maxRunningRequests: batch,
    disableRadixCache: true,
    decodeLogInterval: 1_000_000,
  });
  for (let i = 0; i < batch; i++) {
    const prompt = Array.from({ length: PROMPT }, (_, k) => 3 + ((seed * 7919 + i * 104729 + k * 31) % (vocab - 3)));
    scheduler.submit({ id: `t${seed}-r${i}`, promptTokenIds: prompt, maxNewTokens: STEPS + 1, ignoreEos: true });
  }
  const decodeMs: number[] = [];
  const schedulerMs: number[] = [];
  let prefillTokens = 0;
  let prefillMs = 0;
  for (;;) {
    const t0 = performance.now();
    const b = scheduler.nextBatch(t0 / 1000);
    const t1 = performance.now();
    if (b.kind === "idle") break;
    let tokens: number[];
    if (b.kind === "prefill") tokens = await engine.prefill(b);
    else tokens = await engine.decode(b);
    const t2 = performance.now();
    const { ended } = scheduler.completeBatch({ tokenIds: tokens });
    const t3 = performance.now();
    for (const e of ended) engine.release(e.id);
    if (b.kind === "prefill") {
      prefillTokens += b.entries.reduce((s, e) => s + e.extendTokens, 0);
      prefillMs += t2 - t1;
    } else if (b.requests.length === batch) {
      decodeMs.push(t2 - t1);
      schedulerMs.push(t1 - t0 + (t3 - t2));
    }
  }
  await engine.settle();
  return { decodeMs, schedulerMs, prefillTokensPerS: prefillTokens / (prefillMs / 1000) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

console.log(
  `llama.cpp CPU, ${runtime.summary.architecture} ${modelPath} (${runtime.summary.fileBytes} bytes), ` +
    `${threads} thread(s), ${os.cpus()[0]?.model ?? "cpu"} x ${os.availableParallelism()}, Node ${process.version}`,
);
console.log(`${TRIALS} trials x ${STEPS} decode steps per batch size; medians over trials of per-trial means\n`);
console.log(
  "| batch | decode step (ms) | tokens/s | scheduler per step (us) | scheduler share of step | prefill (tokens/s) |",
);
console.log("| ---: | ---: | ---: | ---: | ---: | ---: |");
await trial(1, 999); // warm-up: first evaluations allocate buffers
for (const batch of BATCHES) {
  const trials: Trial[] = [];
  for (let t = 0; t < TRIALS; t++) trials.push(await trial(batch, t));
  const step = median(trials.map((t) => mean(t.decodeMs)));
  const sched = median(trials.map((t) => mean(t.schedulerMs)));
  const prefill = median(trials.map((t) => t.prefillTokensPerS));
  const share = sched / (step + sched);
  console.log(
    `| ${batch} | ${step.toFixed(2)} | ${((batch * 1000) / (step + sched)).toFixed(0)} | ${(sched * 1000).toFixed(1)} | ` +
      `${(share * 100).toFixed(2)}% | ${prefill.toFixed(0)} |`,
  );
}
await runtime.close();
