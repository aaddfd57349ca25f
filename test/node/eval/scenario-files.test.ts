import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readScenario, readScenarios } from "../../../eval/scenario-files";

describe("eval/scenario-files", () => {
  it("reads every scenario file, in file-name order, each named after its file", () => {
    const files = readdirSync(resolve(import.meta.dirname, "../../../eval/scenarios"))
      .filter((f) => f.endsWith(".json"))
      .sort();
    expect(readScenarios().map((s) => `${s.name}.json`)).toEqual(files);
    expect(readScenario("burst-3x").name).toBe("burst-3x");
  });

  it("names the scenario it cannot find", () => {
    expect(() => readScenario("no-such-scenario")).toThrow("no scenario no-such-scenario in eval/scenarios");
  });
});
