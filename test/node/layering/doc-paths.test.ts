import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");

/**
 * The documents a reader follows to the code. docs/benchmarks.md is left out: it is a log, and names files as they
 * were when each figure was measured.
 */
const documents = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md") && name !== "benchmarks.md")
    .map((name) => `docs/${name}`),
  ...readdirSync(join(root, "eval"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `eval/${name}`),
];

/** Paths a document names that are not this repository's: the user's own Worker in the README's install steps. */
const notOurs = new Set(["src/index.ts"]);

describe("the paths the docs name", () => {
  it("are files of the repository", () => {
    const missing: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(root, doc), "utf8");
      for (const [path] of text.matchAll(
        /\b(?:src|test|eval|scripts|packages|examples)\/[\w./-]+\.(?:ts|md|json|sh)\b/g,
      ))
        if (!notOurs.has(path) && !existsSync(join(root, path))) missing.push(`${doc}: ${path}`);
    }
    expect(documents).toContain("docs/architecture.md");
    expect(missing).toEqual([]);
  });
});

describe("docs/architecture.md's table of the pure core", () => {
  it("has a row for every file of src/core", () => {
    const architecture = readFileSync(join(root, "docs/architecture.md"), "utf8");
    const files = readdirSync(join(root, "src/core")).filter((name) => name.endsWith(".ts"));
    expect(files).toContain("router-core.ts");
    // A row names its files in its first cell: "| `a.ts` |" or "| `a.ts`, `b.ts` |".
    const rows = architecture.split("\n").filter((line) => line.startsWith("| `"));
    const named = (file: string) => rows.some((row) => row.split(" | ")[0]?.includes(`\`${file}\``));
    expect(files.filter((file) => !named(file))).toEqual([]);
  });
});
