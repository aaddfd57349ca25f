/**
 * Scheduler cost per engine step: one admission round plus one decode step (nextBatch + completeBatch) with
 * 1,024 requests running and 10,000 waiting that do not fit. Not a test: it prints figures.
 *
 *   npm run bench:scheduler
 *
 * The pool is sized so that exactly 1,024 requests (128-token prompt + 2,000 ignore_eos output = 2,128 slots
 * reserved each) fit; each measured step runs a full admission round (the head of the queue is checked and
 * refused for token budget) and then a decode step for all 1,024.
 */
import os from "node:os";
import { seededRandom } from "../engine/rng";
import { type SchedulePolicy, Scheduler } from "../scheduler/index.js";

const RUNNING = 1024;
const WAITING = 10_000;
const PROMPT = 128;
const MAX_NEW = 2000;
const STEPS = 1000;
const TRIALS = 5;

interface Setup {
  label: string;
  policy: SchedulePolicy;
  sharedPrefix: number;
  disableRadixCache: boolean;
}

function build(setup: Setup): Scheduler {
  const s = new Scheduler({
    // Cached shared prefixes are stored once, so each request needs only its own part.
    maxTotalTokens: RUNNING * (PROMPT - setup.sharedPrefix + MAX_NEW) + setup.sharedPrefix + 1000,
    maxRunningRequests: 4096,
    schedulePolicy: setup.policy,
    disableRadixCache: setup.disableRadixCache,
    random: seededRandom(1),
  });
  const system = Array.from({ length: setup.sharedPrefix }, (_, i) => 1_000_000 + i);
  for (let i = 0; i < RUNNING + WAITING; i++) {
    const own = Array.from({ length: PROMPT - setup.sharedPrefix }, (_, k) => i * PROMPT + k);
    s.submit({ id: `r${i}`, promptTokenIds: [...system, ...own], maxNewTokens: MAX_NEW, ignoreEos: true });
  }
  // Admit until 1,024 run (prefill rounds are capped by maxPrefillTokens).
  for (let guard = 0; s.state().running < RUNNING && guard < 1000; guard++) {
    const b = s.nextBatch(0);
    if (b.kind === "idle") break;
    const n = b.kind === "prefill" ? b.entries.length : b.requests.length;
    s.completeBatch({ tokenIds: new Array(n).fill(1) });
  }
  const st = s.state();
  if (st.running !== RUNNING || st.waiting !== WAITING) {
    throw new Error(`setup: ${st.running} running, ${st.waiting} waiting`);
  }
  return s;
}

const WINDOW = 50;

/** Per-step cost in windows of WINDOW steps: the machine is shared, so quantiles of windows say more than a mean. */
function measure(setup: Setup): { median: number; p10: number; min: number; nextMedian: number } {
  const windows: number[] = [];
  const nextWindows: number[] = [];
  const tokenIds = new Array<number>(RUNNING).fill(7);
  for (let trial = 0; trial < TRIALS; trial++) {
    const s = build(setup);
    for (let i = 0; i < 200; i++) {
      s.nextBatch(i); // warm up the JIT on this instance
      s.completeBatch({ tokenIds });
    }
    for (let w = 0; w < STEPS / WINDOW; w++) {
      let nextNs = 0n;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < WINDOW; i++) {
        const a = process.hrtime.bigint();
        const b = s.nextBatch(i);
        nextNs += process.hrtime.bigint() - a;
        if (b.kind !== "decode" || b.requests.length !== RUNNING) throw new Error(`step ${i}: ${b.kind}`);
        s.completeBatch({ tokenIds });
      }
      windows.push(Number(process.hrtime.bigint() - t0) / 1000 / WINDOW);
      nextWindows.push(Number(nextNs) / 1000 / WINDOW);
    }
  }
  const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] as number;
  return { median: q(windows, 0.5), p10: q(windows, 0.1), min: q(windows, 0), nextMedian: q(nextWindows, 0.5) };
}

const setups: Setup[] = [
  { label: "fcfs, radix cache on, distinct prompts", policy: "fcfs", sharedPrefix: 0, disableRadixCache: false },
  { label: "fcfs, radix cache on, 64-token shared prefix", policy: "fcfs", sharedPrefix: 64, disableRadixCache: false },
  { label: "fcfs, radix cache off", policy: "fcfs", sharedPrefix: 0, disableRadixCache: true },
  { label: "lof (re-sorts only after arrivals)", policy: "lof", sharedPrefix: 0, disableRadixCache: false },
  { label: "random (shuffles 10,000 waiting per round)", policy: "random", sharedPrefix: 0, disableRadixCache: false },
];

const load = () => os.loadavg()[0]?.toFixed(2);
console.log(
  `scheduler step = admission round + decode step (nextBatch + completeBatch); ${RUNNING} running, ${WAITING} waiting;`,
);
console.log(
  `${TRIALS} trials x ${STEPS} steps, in windows of ${WINDOW}; node ${process.version}; ${os.cpus().length} CPUs, load average ${load()}`,
);
for (const setup of setups) {
  const r = measure(setup);
  console.log(
    `${setup.label.padEnd(46)} median ${r.median.toFixed(1).padStart(6)} us/step, p10 ${r.p10.toFixed(1).padStart(6)}, best ${r.min.toFixed(1).padStart(6)} (nextBatch alone: median ${r.nextMedian.toFixed(1)})`,
  );
}
console.log(`load average at the end ${load()}`);
