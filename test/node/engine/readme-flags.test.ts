import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { engineFlags, engineParseArgsOptions } from "../../../src/engine/cli";

const readme = readFileSync(resolve(import.meta.dirname, "../../../README.md"), "utf8");

describe("README's engine server section", () => {
  it("names every flag `npm run engine` accepts", () => {
    const flags = Object.keys(engineParseArgsOptions()).filter((flag) => flag !== "help");
    expect(flags).toContain("max-total-tokens");
    expect(flags.filter((flag) => !new RegExp(`--${flag}\\b`).test(readme))).toEqual([]);
  });

  // startEngineServer's options are the flags camel-cased (a strict schema: a misspelt key is refused), but for a few.
  it("names the programmatic options that are not their flag camel-cased", () => {
    const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const others = engineFlags().filter(({ flag, key }) => camel(flag) !== key);
    expect(others.length).toBeGreaterThan(0);
    const paragraph = readme.split("\n\n").find((p) => p.includes("takes the same options camel-cased")) ?? "";
    expect(
      others.filter(({ flag, key }) => !paragraph.includes(`\`--${flag}\``) || !paragraph.includes(`\`${key}`)),
    ).toEqual([]);
  });
});
