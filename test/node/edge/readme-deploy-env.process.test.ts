import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { offlineWranglerEnv } from "../../../src/bench/stack";
import { parseConfig } from "../../../src/edge/config";

const root = resolve(import.meta.dirname, "../../..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "spillway-deploy-env-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The `[env.production...]` block the README's "Deploying" section tells a user to add to wrangler.toml. */
function productionBlock(): string {
  const section = readme.slice(readme.indexOf("## Deploying"), readme.indexOf("### Edge metrics"));
  const block = [...section.matchAll(/```toml\n([\s\S]*?)```/g)]
    .map((m) => m[1] as string)
    .find((b) => b.includes("[env.production.vars]"));
  if (block === undefined) throw new Error("README, Deploying: no toml block with [env.production.vars]");
  return block;
}

// wrangler inherits neither `vars` nor Durable Object bindings nor Analytics Engine datasets into an environment:
// an environment with only its vars deploys a Worker without DEPLOYMENT_ROUTER (wrangler only warns).
describe("README, Deploying: the production environment", () => {
  it("deploys (dry run, offline) with the router, quota and metrics bindings and its own configuration", () => {
    const block = productionBlock();
    const config = /^SPILLWAY_CONFIG = '(.*)'$/m.exec(block)?.[1];
    expect(config).toBeDefined();
    const replicas = Object.values(parseConfig(config).deployments).flatMap((d) => d.replicas.map((r) => r.url));
    expect(replicas.length).toBeGreaterThan(0);
    expect(replicas.filter((url) => new URL(url).hostname === "127.0.0.1")).toEqual([]);

    const toml = readFileSync(join(root, "wrangler.toml"), "utf8").replace(
      /^main = "src\/edge\/worker\.ts"$/m,
      `main = ${JSON.stringify(join(root, "src/edge/worker.ts"))}`,
    );
    expect(toml).toContain(join(root, "src/edge/worker.ts"));
    writeFileSync(join(dir, "wrangler.toml"), `${toml}\n${block}`);
    const run = spawnSync(
      join(root, "node_modules/.bin/wrangler"),
      [
        "deploy",
        "--dry-run",
        "--env",
        "production",
        "--outdir",
        join(dir, "dist"),
        "--config",
        join(dir, "wrangler.toml"),
      ],
      { cwd: root, env: offlineWranglerEnv(root), encoding: "utf8", timeout: 100_000 },
    );
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).not.toContain("not inherited by environments");
    expect(output).toContain("env.DEPLOYMENT_ROUTER (DeploymentRouter)");
    expect(output).toContain("env.TENANT_QUOTA (TenantQuota)");
    expect(output).toContain("env.SPILLWAY_METRICS (spillway_decisions)");
    expect(output).toContain("env.SPILLWAY_CONFIG");
  }, 110_000);
});
