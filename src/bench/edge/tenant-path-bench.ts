/**
 * `npm run bench:tenant-path`: what a leased quota tenant's admitted request costs the Worker over an anonymous
 * one, piece by piece, inside workerd (miniflare), without the network, the engines or the router: resolving the
 * key (`resolve`: the bearer key's SHA-256 and plan lookup), charging the quota from the lease and settling it
 * (`charge`), adding the rate-limit headers to the answer (`headers`, less `plainResponse`), reading the answer's
 * `usage` (`usage`), and all of it in the middleware's order (`all`). Each case runs `--n` times inside one
 * request, timed from outside; the rounds interleave the cases, and a case's figure is its median round less the
 * `empty` case's (the request itself).
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
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build, type Plugin } from "esbuild";
import { Miniflare } from "miniflare";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "20000" },
    rounds: { type: "string", default: "15" },
    before: { type: "string" },
  },
});
const N = Number(values.n);
const ROUNDS = Number(values.rounds);
const WORKER = resolve("src/bench/edge/tenant-path-worker.ts");
const CASES = ["empty", "resolve", "charge", "headers", "plainResponse", "usage", "all"];

/** Resolves the bench Worker's `../../` imports in another checkout's `src/` (its packages from this one). */
function otherTree(root: string): Plugin {
  return {
    name: "other-tree",
    setup(builder) {
      builder.onResolve({ filter: /^\.\.\/\.\.\// }, (args) =>
        args.importer === WORKER ? { path: `${resolve(root, "src/bench/edge", args.path)}.ts` } : undefined,
      );
    },
  };
}

async function bundle(outfile: string, root?: string): Promise<string> {
  await build({
    entryPoints: [WORKER],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    nodePaths: [resolve("node_modules")],
    plugins: root ? [otherTree(root)] : [],
    outfile,
    logLevel: "error",
  });
  return outfile;
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
  if (values.before) builds.push([`before (${values.before})`, await bundle(join(dir, "old.mjs"), values.before)]);
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
    for (const w of workers) for (const name of CASES) await time(w.url, name, N); // warm-up (JIT)
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the builds' order so neither always runs first after a pause.
      const order = round % 2 === 0 ? workers : [...workers].reverse();
      for (const name of CASES) {
        for (const w of order) {
          const key = `${w.name}|${name}`;
          ms[key] = [...(ms[key] ?? []), await time(w.url, name, N)];
        }
      }
    }
  } finally {
    await Promise.all(workers.map((w) => w.mf.dispose()));
    rmSync(dir, { recursive: true, force: true });
  }
  const perCall = (w: string, name: string) =>
    ((median(ms[`${w}|${name}`] ?? []) - median(ms[`${w}|empty`] ?? [])) * 1000) / N;
  console.log(`# tenant path (node ${process.version}, n ${N}, median of ${ROUNDS} interleaved rounds)\n`);
  console.log(`| case | ${workers.map((w) => `${w.name}: us per call`).join(" | ")} |`);
  console.log(`| --- | ${workers.map(() => "---").join(" | ")} |`);
  for (const name of CASES.filter((c) => c !== "empty")) {
    console.log(`| ${name} | ${workers.map((w) => perCall(w.name, name).toFixed(2)).join(" | ")} |`);
  }
  console.log(
    `\n(the empty case, a request of ${N} empty iterations: ${workers.map((w) => `${median(ms[`${w.name}|empty`] ?? []).toFixed(1)} ms`).join(", ")})`,
  );
}

await main();
