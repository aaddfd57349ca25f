/**
 * The publishable packages (npm workspaces under packages/): `spillway` (the Worker middleware and its router
 * Durable Object) and `spillway-engine` (the engine server and its `spillway-engine` command). Both are built
 * from this repository's src/ tree.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

/** The workspaces that are published, by package name and folder. */
export const PACKAGES = [
  { name: "spillway", dir: "packages/spillway" },
  { name: "spillway-engine", dir: "packages/engine" },
] as const;

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed with ${result.status}`);
  return result.stdout;
}

/**
 * Builds every package and packs it with `npm pack` into `outDir`; returns the tarballs' paths by package name.
 *
 * @example
 * ```ts
 * const tarballs = buildAndPack(".wrangler/packed");
 * tarballs.spillway; // ".../.wrangler/packed/spillway-0.1.0.tgz"
 * ```
 */
export function buildAndPack(outDir: string): Record<(typeof PACKAGES)[number]["name"], string> {
  const out = resolve(outDir);
  mkdirSync(out, { recursive: true });
  const tarballs = {} as Record<(typeof PACKAGES)[number]["name"], string>;
  for (const pkg of PACKAGES) {
    const dir = resolve(pkg.dir);
    run("npm", ["run", "build", "--silent"], dir);
    const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", out], dir)) as { filename: string }[];
    tarballs[pkg.name] = join(out, (packed[0] as { filename: string }).filename);
  }
  return tarballs;
}
