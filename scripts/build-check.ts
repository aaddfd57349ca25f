/**
 * `npm run build:check`: `wrangler deploy --dry-run --outdir dist` - bundles the Worker exactly as a deploy
 * would and validates wrangler.toml (bindings, migrations, Analytics Engine dataset), offline, uploading
 * nothing. Runs with the environment that keeps wrangler off the network (src/bench/stack.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { offlineWranglerEnv } from "../src/bench/stack";

mkdirSync(resolve(".wrangler/logs"), { recursive: true });
const result = spawnSync(resolve("node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", "dist"], {
  stdio: "inherit",
  env: offlineWranglerEnv(),
});
if (result.status !== 0) {
  console.error("build:check: wrangler deploy --dry-run failed");
  process.exit(result.status ?? 1);
}
console.log("build:check: the Worker bundles and wrangler.toml is valid (dist/)");
