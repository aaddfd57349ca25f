/**
 * The `spillway/config` entry: the configuration's parser and types alone, importable in Node as well as in a
 * Worker (nothing here imports a `cloudflare:` module, which the package's main entry needs for its Durable
 * Objects). An operator checks `SPILLWAY_CONFIG` in CI before a deploy with the same code the Worker runs.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * import { ConfigError, parseConfig } from "spillway/config";
 * try {
 *   parseConfig(readFileSync("spillway-config.json", "utf8"));
 * } catch (error) {
 *   if (error instanceof ConfigError) console.error(error.message); // every problem, `; ` between them
 *   process.exit(1);
 * }
 * ```
 */
export {
  ConfigError,
  type DeploymentConfig,
  parseConfig,
  type SpillwayConfig,
  type SpillwayConfigInput,
} from "./config";
export type { TenantPlanInput } from "./tenant-config";
