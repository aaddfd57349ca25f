import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { engineParseArgsOptions } from "../../../src/engine/cli";

const readme = readFileSync(resolve(import.meta.dirname, "../../../README.md"), "utf8");

describe("README's engine server section", () => {
  it("names every flag `npm run engine` accepts", () => {
    const flags = Object.keys(engineParseArgsOptions()).filter((flag) => flag !== "help");
    expect(flags).toContain("max-total-tokens");
    expect(flags.filter((flag) => !new RegExp(`--${flag}\\b`).test(readme))).toEqual([]);
  });
});
