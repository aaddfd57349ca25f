/**
 * `npm run bench:tenant-path`: what a leased quota tenant's admitted request costs the Worker over an anonymous
 * one, piece by piece, inside workerd (miniflare), without the network, the engines or the router: resolving the
 * key (`resolve`: the bearer key's SHA-256 and plan lookup), charging the quota from the lease and settling it
 * (`charge`), adding the rate-limit headers to the answer (`headers`, less `plainResponse`), reading the answer's
 * `usage` (`usage`), and all of it in the middleware's order (`all`); and the usage tap on a streamed answer of
 * 201 SSE chunks (`streamTapped` less `streamPlain`, the same stream read without the tap); and, which every
 * streamed answer takes, the Worker's read and relay of such a stream (`streamRead` less `streamPlain`) and the
 * whole-event framing in that read (`streamReadFramed` less `streamRead`). Each case runs `--n` times inside one
 * request, timed from outside; the rounds interleave the cases, and a case's figure is its fastest round less
 * the `empty` case's (the request itself), with the same for the median rounds beside it.
 *
 * `--before DIR` also builds the same loops against another checkout's `src/` (e.g. the main branch's), so one
 * run compares old and new code interleaved on the same machine state. Flags: --n (default 20000), --rounds
 * (default 15), --before DIR.
 *
 * @example
 * ```sh
 * npm run bench:tenant-path -- --before /path/to/main
 * ```
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Plugin } from "esbuild";
import { Miniflare } from "miniflare";
import { commandFlags, positiveIntFlag } from "../command-line";
import { bundleWorker } from "./bench-setup";

const {
  n: N,
  rounds: ROUNDS,
  before: BEFORE,
} = commandFlags(
  "npm run bench:tenant-path -- [--n N (calls a case, default 20000)] [--rounds N (default 15)] [--before OTHER-CHECKOUT]",
  { options: { n: { type: "string" }, rounds: { type: "string" }, before: { type: "string" } } },
  ({ values }) => ({
    n: positiveIntFlag("n", values.n, 20000),
    rounds: positiveIntFlag("rounds", values.rounds, 15),
    before: values.before,
  }),
);
const WORKER = resolve("src/bench/edge/tenant-path-worker.ts");
const CASES = [
  "empty",
  "resolve",
  "charge",
  "headers",
  "plainResponse",
  "usage",
  "all",
  "streamTapped",
  "streamRead",
  "streamReadFramed",
  "streamPlain",
];
/** A streamed answer (201 chunks) costs a few hundred times a single piece: its cases run `n / STREAM_SCALE` times. */
const STREAM_SCALE = 200;
const callsOf = (name: string) => (name.startsWith("stream") ? Math.ceil(N / STREAM_SCALE) : N);

/** Resolves the bench Worker's `../../` imports in another checkout's `src/` (its packages from this one). */
function otherTree(root: string): Plugin {
  return {
    name: "other-tree",
    setup(builder) {
      // A module the other checkout lacks comes from this tree (undefined: esbuild resolves it as usual).
      builder.onResolve({ filter: /^\.\.\/\.\.\// }, (args) => {
        const path = `${resolve(root, "src/bench/edge", args.path)}.ts`;
        return args.importer === WORKER && existsSync(path) ? { path } : undefined;
      });
    },
  };
}

function bundle(outfile: string, root?: string): Promise<string> {
  return bundleWorker(WORKER, outfile, { plugins: root ? [otherTree(root)] : [] });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  mkdirSync(".wrangler", { recursive: true });
  const dir = mkdtempSync(join(".wrangler", "tenant-path-"));
  const builds: Array<[string, string]> = [["this tree", await bundle(join(dir, "new.mjs"))]];
  if (BEFORE) builds.push([`before (${BEFORE})`, await bundle(join(dir, "old.mjs"), BEFORE)]);
  const workers = await Promise.all(
    builds.map(async ([name, scriptPath]) => {
      const mf = new Miniflare({
        modules: true,
        scriptPath,
        compatibilityDate: "2026-04-26",
        cf: false,
        host: "127.0.0.1",
        port: 0,
      });
      return { name, mf, url: (await mf.ready).origin };
    }),
  );
  const ms: Record<string, number[]> = {};
  try {
    const time = async (url: string, name: string, n: number) => {
      const t0 = performance.now();
      const response = await fetch(`${url}/?case=${name}&n=${n}`);
      if (!response.ok) throw new Error(`${name}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      return performance.now() - t0;
    };
    for (const w of workers) for (const name of CASES) await time(w.url, name, callsOf(name)); // warm-up (JIT)
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the builds' order so neither always runs first after a pause.
      const order = round % 2 === 0 ? workers : [...workers].reverse();
      for (const name of CASES) {
        for (const w of order) {
          const key = `${w.name}|${name}`;
          ms[key] = [...(ms[key] ?? []), await time(w.url, name, callsOf(name))];
        }
      }
    }
  } finally {
    await Promise.all(workers.map((w) => w.mf.dispose()));
    rmSync(dir, { recursive: true, force: true });
  }
  // Per round: the case less the same round's empty request; noise only ever adds, so the fastest round is
  // the least disturbed one (the median beside it says how disturbed the rest were).
  // Noise only ever adds: the fastest round of a case less the fastest of its baseline is the least disturbed
  // figure; the medians' difference beside it says how disturbed the rest were.
  const perCall = (w: string, name: string, less = "empty") => {
    const [times, base] = [ms[`${w}|${name}`] ?? [], ms[`${w}|${less}`] ?? []];
    const fastest = ((Math.min(...times) - Math.min(...base)) * 1000) / callsOf(name);
    const typical = ((median(times) - median(base)) * 1000) / callsOf(name);
    return `${fastest.toFixed(2)} (${typical.toFixed(2)})`;
  };
  console.log(`# tenant path (node ${process.version}, n ${N}, ${ROUNDS} interleaved rounds)\n`);
  console.log(`| case | ${workers.map((w) => `${w.name}: us per call, fastest (median)`).join(" | ")} |`);
  console.log(`| --- | ${workers.map(() => "---").join(" | ")} |`);
  for (const name of CASES.filter((c) => c !== "empty" && !c.startsWith("stream"))) {
    console.log(`| ${name} | ${workers.map((w) => perCall(w.name, name)).join(" | ")} |`);
  }
  // A stream's own cost cancels out: the tap's is the tapped stream less the plain one, in the same round.
  const tap = workers.map((w) => perCall(w.name, "streamTapped", "streamPlain"));
  console.log(`| usage tap on a streamed answer of 201 chunks (streamTapped less streamPlain) | ${tap.join(" | ")} |`);
  const relay = workers.map((w) => perCall(w.name, "streamRead", "streamPlain"));
  console.log(`| the Worker's read and relay of it (streamRead less streamPlain) | ${relay.join(" | ")} |`);
  const framing = workers.map((w) => perCall(w.name, "streamReadFramed", "streamRead"));
  console.log(`| whole-event framing in that read (streamReadFramed less streamRead) | ${framing.join(" | ")} |`);
  console.log(
    `\n(the empty case, a request of ${N} empty iterations: ${workers.map((w) => `${median(ms[`${w.name}|empty`] ?? []).toFixed(1)} ms`).join(", ")})`,
  );
}

await main();
