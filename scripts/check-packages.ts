/**
 * `npm run check:packages` (part of `npm run build:check`): builds and packs the packages, then lints the packed
 * tarballs with publint and @arethetypeswrong/cli (ESM-only profile: the packages ship ESM alone), and checks
 * that the Worker package depends on nothing that needs Node, and that its `spillway/config` entry imports no
 * `cloudflare:` module (Node loads it).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { buildAndPack } from "./packages";

const out = resolve(".wrangler/packed");
rmSync(out, { recursive: true, force: true });
const tarballs = buildAndPack(out);
let failed = false;
for (const [name, tarball] of Object.entries(tarballs)) {
  for (const [tool, args] of [
    ["publint", ["run", tarball, "--level", "warning", "--strict"]],
    ["attw", [tarball, "--profile", "esm-only"]],
  ] as const) {
    const result = spawnSync(resolve("node_modules/.bin", tool), args, { stdio: "inherit" });
    if (result.status !== 0) {
      console.error(`check:packages: ${tool} reported errors in ${name}`);
      failed = true;
    }
  }
}

// The Worker package runs in workerd: no dependency that needs Node, and no `node:` import in its bundle.
const WORKER_SAFE_DEPENDENCIES = new Set(["zod"]);
const manifest = JSON.parse(
  execFileSync("tar", ["-xOzf", tarballs.spillway, "package/package.json"], { encoding: "utf8" }),
) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
const extra = Object.keys(manifest.dependencies ?? {}).filter((d) => !WORKER_SAFE_DEPENDENCIES.has(d));
// Every module of the bundle (the entries share chunks).
const listed = execFileSync("tar", ["-tzf", tarballs.spillway], { encoding: "utf8" }).split("\n");
const modules = listed.filter((path) => /^package\/dist\/[^/]+\.js$/.test(path));
const source = (path: string) => execFileSync("tar", ["-xOzf", tarballs.spillway, path], { encoding: "utf8" });
// Static (`import ... from "x"`, `export ... from "x"`), bare (`import "x"`) and dynamic (`import("x")`) imports: the
// first form alone let a bundle's `import "node:..."` or `await import("cloudflare:...")` through.
const IMPORT_SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g;
const importsOf = (path: string) => [...source(path).matchAll(IMPORT_SPECIFIER)].map((m) => m[1] as string);
const nodeImports = modules.flatMap(importsOf).filter((specifier) => specifier.startsWith("node:"));
// `spillway/config` is for Node too (a CI check of SPILLWAY_CONFIG): no `cloudflare:` module in its import graph.
const reached = new Set<string>();
const visit = (path: string) => {
  if (reached.has(path)) return;
  reached.add(path);
  for (const specifier of importsOf(path)) {
    if (specifier.startsWith("./")) visit(`package/dist/${specifier.slice(2)}`);
    else if (specifier.startsWith("cloudflare:")) {
      console.error(`check:packages: spillway/config imports ${specifier} (through ${path}): Node cannot load it`);
      failed = true;
    }
  }
};
visit("package/dist/config.js");
if (extra.length > 0 || nodeImports.length > 0 || !manifest.peerDependencies?.hono) {
  console.error(
    `check:packages: the spillway package must depend only on ${[...WORKER_SAFE_DEPENDENCIES]} (hono as a peer); ` +
      `found dependencies ${JSON.stringify(extra)}, node imports ${JSON.stringify(nodeImports)}`,
  );
  failed = true;
}
if (failed) process.exit(1);
console.log(`check:packages: ${Object.values(tarballs).join(", ")}: publint and attw clean, Worker package Node-free`);
