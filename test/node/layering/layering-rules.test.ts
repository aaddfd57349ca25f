import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The repository's layering rules (`.dependency-cruiser.cjs`) and purity rules (`biome.json`: restricted globals
 * and the `lint/no-impure-calls.grit` plugin for src/core and src/scheduler) fail on a violation. Each is run, with
 * the repository's own configuration, on a small project in a temporary folder holding one violation per rule and
 * code that breaks none.
 */

const repo = resolve(import.meta.dirname, "../../..");
const bin = (name: string) => join(repo, "node_modules/.bin", name);
const folders: string[] = [];

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "spillway-layering-"));
  folders.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe("dependency rules (npm run lint:deps)", () => {
  it("reports each forbidden import by its rule, and nothing else", () => {
    const root = project({
      "tsconfig.json": JSON.stringify({ compilerOptions: { module: "ESNext", moduleResolution: "Bundler" } }),
      "src/edge/config.ts": "export const defaults = 1;\n",
      "scripts/tool.ts": "export const tool = 1;\n",
      "src/core/clean.ts": "export const clean = 1;\n",
      "src/core/uses-edge.ts": 'import { defaults } from "../edge/config";\nexport const d = defaults;\n',
      "src/scheduler/uses-node.ts": 'import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n',
      "src/core/uses-workers.ts":
        'import { DurableObject } from "cloudflare:workers";\nexport const D = DurableObject;\n',
      "src/sim/uses-edge.ts": 'import { defaults } from "../edge/config";\nexport const d = defaults;\n',
      "src/bench/uses-script.ts": 'import { tool } from "../../scripts/tool";\nexport const t = tool;\n',
      "src/engine/uses-core.ts": 'import { clean } from "../core/clean";\nexport const c = clean;\n',
      "scripts/uses-src.ts": 'import { clean } from "../src/core/clean";\nexport const c = clean;\n',
    });
    // The "err" reporter (the one `npm run lint:deps` uses) exits non-zero on errors; one line per violation.
    const run = spawnSync(
      bin("depcruise"),
      ["src", "scripts", "--config", join(repo, ".dependency-cruiser.cjs"), "--output-type", "err", "--no-progress"],
      { cwd: root, encoding: "utf8" },
    );
    const violations = [...run.stdout.matchAll(/^\s*error (\S+): (\S+) → (\S+)$/gm)]
      .map(([, rule, from, to]) => `${rule}: ${from} -> ${to}`)
      .sort();
    expect(violations).toEqual([
      "core-and-scheduler-are-pure: src/core/uses-edge.ts -> src/edge/config.ts",
      "core-and-scheduler-use-no-platform: src/core/uses-workers.ts -> cloudflare:workers",
      "core-and-scheduler-use-no-platform: src/scheduler/uses-node.ts -> fs",
      "sim-takes-router-defaults-from-core: src/sim/uses-edge.ts -> src/edge/config.ts",
      "src-never-imports-scripts: src/bench/uses-script.ts -> scripts/tool.ts",
    ]);
    expect(run.status).not.toBe(0);
  });
});

describe("purity rules (biome check)", () => {
  it("flag clocks, timers, fetch and randomness in src/core and src/scheduler only", () => {
    const impure = [
      "export const now = () => Date.now();",
      "export const wait = () => setTimeout(() => {}, 10);",
      "export const get = () => fetch('http://127.0.0.1');",
      "export const coin = () => Math.random();",
      "export const id = () => crypto.randomUUID();",
      "export const hash = (b: Uint8Array) => crypto.subtle.digest('SHA-256', b);",
      "",
    ].join("\n");
    const config = JSON.parse(readFileSync(join(repo, "biome.json"), "utf8"));
    config.$schema = undefined;
    config.vcs = { enabled: false };
    const root = project({
      "biome.json": JSON.stringify(config),
      "src/core/impure.ts": impure,
      "src/scheduler/impure.ts": impure,
      "src/edge/free.ts": impure,
    });
    cpSync(join(repo, "lint"), join(root, "lint"), { recursive: true });
    const run = spawnSync(bin("biome"), ["lint", "--reporter=json", "src"], { cwd: root, encoding: "utf8" });
    const report = JSON.parse(run.stdout) as {
      diagnostics: Array<{ category: string; location: { path: string; start: { line: number } } }>;
    };
    const found = report.diagnostics.map((d) => `${d.location.path}:${d.location.start.line} ${d.category}`).sort();
    const expected = (path: string) => [
      `${path}:1 lint/style/noRestrictedGlobals`,
      `${path}:2 lint/style/noRestrictedGlobals`,
      `${path}:3 lint/style/noRestrictedGlobals`,
      `${path}:4 plugin`,
      `${path}:5 plugin`,
    ];
    expect(found).toEqual([...expected("src/core/impure.ts"), ...expected("src/scheduler/impure.ts")].sort());
    expect(run.status).not.toBe(0);
  });
});
