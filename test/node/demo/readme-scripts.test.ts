import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const readme = readFileSync(resolve(root, "README.md"), "utf8");
const scripts = Object.keys(
  (JSON.parse(readFileSync(resolve(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
);

describe("README's commands", () => {
  it("names every npm script", () => {
    expect(scripts).toContain("soak:heap");
    // `npm test` and `npm start` are run without `run`.
    const named = (script: string) =>
      new RegExp(`npm (run )?${script.replace(/[:.]/g, "\\$&")}(?![\\w:-])`).test(readme);
    expect(scripts.filter((script) => !named(script))).toEqual([]);
  });
});
