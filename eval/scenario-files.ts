import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Scenario, scenarioSchema } from "../src/sim/scenario";

/** The evaluated scenarios' folder: one JSON file per scenario, named after it. */
const SCENARIO_DIR = resolve(import.meta.dirname, "scenarios");

/**
 * One scenario of eval/scenarios by name, checked against the scenario schema; a name without a file is an error
 * that says so (not a bare ENOENT).
 *
 * @example
 * ```ts
 * readScenario("burst-3x").phases.length; // 3
 * readScenario("nope"); // throws: no scenario nope in eval/scenarios
 * ```
 */
export function readScenario(name: string): Scenario {
  let text: string;
  try {
    text = readFileSync(join(SCENARIO_DIR, `${name}.json`), "utf8");
  } catch {
    throw new Error(`no scenario ${name} in eval/scenarios`);
  }
  return scenarioSchema.parse(JSON.parse(text));
}

/**
 * Every scenario of eval/scenarios, in file-name order, each checked against the scenario schema.
 *
 * @example
 * ```ts
 * readScenarios().map((s) => s.name); // ["burst-10x", "burst-3x", ...]
 * ```
 */
export function readScenarios(): Scenario[] {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => scenarioSchema.parse(JSON.parse(readFileSync(join(SCENARIO_DIR, f), "utf8"))));
}
