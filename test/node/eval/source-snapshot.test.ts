import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  changedSources,
  generatedWriter,
  SourcesChangedError,
  snapshotSources,
} from "../../../scripts/source-snapshot";

describe("a generated doc is written only from the code on disk", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "spillway-sources-"));
    mkdirSync(join(root, "src/core"), { recursive: true });
    mkdirSync(join(root, "eval"), { recursive: true });
    mkdirSync(join(root, "docs"), { recursive: true });
    writeFileSync(join(root, "src/core/policy.ts"), "export const hint = 30;\n");
    writeFileSync(join(root, "eval/run.ts"), "run();\n");
    writeFileSync(join(root, "package-lock.json"), "{}\n");
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("writes when nothing changed since the writer was made", () => {
    const write = generatedWriter(root);
    write(join(root, "docs/out.json"), "{}\n");
    expect(readFileSync(join(root, "docs/out.json"), "utf8")).toBe("{}\n");
  });

  it("writes nothing once a source file changed, and names it", () => {
    const write = generatedWriter(root);
    writeFileSync(join(root, "src/core/policy.ts"), "export const hint = 31;\n");
    expect(() => write(join(root, "docs/out.json"), "{}\n")).toThrow(SourcesChangedError);
    expect(() => write(join(root, "docs/out.json"), "{}\n")).toThrow(/src\/core\/policy\.ts/);
    expect(readdirSync(join(root, "docs"))).toEqual([]);
  });

  it("sees files added and removed, the lockfile, and not docs/", () => {
    const before = snapshotSources(root);
    writeFileSync(join(root, "eval/new.ts"), "");
    rmSync(join(root, "eval/run.ts"));
    writeFileSync(join(root, "package-lock.json"), '{"lockfileVersion":3}\n');
    writeFileSync(join(root, "docs/evaluation.md"), "# figures\n");
    expect(changedSources(before, snapshotSources(root))).toEqual(["eval/new.ts", "eval/run.ts", "package-lock.json"]);
  });

  it("covers this repository's sources", () => {
    const snapshot = snapshotSources(resolve(import.meta.dirname, "../../.."));
    expect(snapshot.has("src/core/retry-after.ts")).toBe(true);
    expect(snapshot.has("eval/run-eval.ts")).toBe(true);
    expect(snapshot.has("scripts/source-snapshot.ts")).toBe(true);
    expect([...snapshot.keys()].some((name) => name.includes("node_modules"))).toBe(false);
  });
});
