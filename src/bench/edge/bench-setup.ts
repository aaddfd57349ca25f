import { resolve } from "node:path";
import { type BuildOptions, build } from "esbuild";
import type { MiniflareOptions } from "miniflare";
import { startEngineServer } from "../../engine/index";

/**
 * Bundles a Worker entry for workerd (the edge benches' miniflare instances): ESM, workerd's export conditions,
 * `cloudflare:*` and `node:*` left to the runtime, packages resolved from this checkout (also for an entry in
 * another one, as `--before` passes).
 *
 * @example
 * ```ts
 * await bundleWorker("src/bench/edge/passthrough-worker.ts", ".wrangler/bench/passthrough.mjs");
 * ```
 */
export async function bundleWorker(entry: string, outfile: string, extra: BuildOptions = {}): Promise<string> {
  await build({
    nodePaths: [resolve("node_modules")],
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    external: ["cloudflare:*", "node:*"],
    outfile,
    logLevel: "error",
    ...extra,
  });
  return outfile;
}

/**
 * Starts engine servers with zero-cost engines (infinite speed, no logs) on loopback: what the edge benches put
 * behind the Worker so that the Worker's own cost is what they measure.
 *
 * @example
 * ```ts
 * const engines = await startZeroCostEngines(2);
 * try { ... engines.map((e) => e.url) ... } finally { await Promise.all(engines.map((e) => e.close())); }
 * ```
 */
export function startZeroCostEngines(count: number) {
  return Promise.all(
    Array.from({ length: count }, () =>
      startEngineServer({
        port: 0,
        speed: Number.POSITIVE_INFINITY,
        accessLog: false,
        logLevel: "error",
        log: () => {},
      }),
    ),
  );
}

/**
 * Miniflare's options for a bundled bench Worker on loopback: with `withDurableObjects`, spillway's two Durable
 * Object classes (its router and the tenant quota) as the Worker exports them.
 *
 * @example
 * ```ts
 * const mf = new Miniflare(benchWorkerOptions(scriptPath, { SPILLWAY_CONFIG: config }, true));
 * ```
 */
export function benchWorkerOptions(
  scriptPath: string,
  bindings: Record<string, string>,
  withDurableObjects: boolean,
): MiniflareOptions {
  return {
    modules: true,
    scriptPath,
    compatibilityDate: "2026-04-26",
    compatibilityFlags: ["enable_request_signal"],
    bindings,
    ...(withDurableObjects
      ? {
          durableObjects: {
            DEPLOYMENT_ROUTER: { className: "DeploymentRouter", useSQLite: true },
            TENANT_QUOTA: { className: "TenantQuota", useSQLite: true },
          },
        }
      : {}),
    cf: false,
    host: "127.0.0.1",
    port: 0,
  };
}
