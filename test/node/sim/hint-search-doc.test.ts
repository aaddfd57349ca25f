import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScenarioResult } from "../../../src/sim/evaluation";
import { type HintSearchReport, renderHintSearch } from "../../../src/sim/hint-search-report";
import type { CompletionCurve } from "../../../src/sim/metrics";
import { bestOtherCurve } from "../../../src/sim/targets";

const root = resolve(import.meta.dirname, "../../..");
const report = JSON.parse(readFileSync(resolve(root, "docs/hint-search.json"), "utf8")) as HintSearchReport;
const evaluation = JSON.parse(readFileSync(resolve(root, "docs/evaluation.json"), "utf8")) as {
  scenarios: ScenarioResult[];
};

describe("docs/hint-search (npm run eval:hint-search)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/hint-search.md"), "utf8")).toBe(renderHintSearch(report));
  });

  it("searched on the evaluation's seeds and against its targets, and started from the default's own figures", () => {
    expect(report.scenarios.length).toBeGreaterThan(0);
    for (const s of report.scenarios) {
      const evaluated = evaluation.scenarios.find((e) => e.name === s.name);
      if (!evaluated) throw new Error(`${s.name} is not in docs/evaluation.json`);
      expect(s.seeds, s.name).toEqual(evaluated.seeds);
      expect(
        s.heldSeeds.some((seed) => s.seeds.includes(seed)),
        s.name,
      ).toBe(false);
      expect(s.envelope, s.name).toEqual(bestOtherCurve(evaluated));
      // The empty table is the default: its run is the evaluation's.
      const def = evaluated.policies.find((p) => p.id === evaluated.defaultPolicy);
      expect(s.start.servedWithinS as CompletionCurve, s.name).toEqual(def?.servedWithinS);
      // A coordinate search keeps a cell only when the run scores better: never worse than where it began.
      expect(s.best.worstGap + s.best.gapSum / 10, s.name).toBeGreaterThanOrEqual(
        s.start.worstGap + s.start.gapSum / 10,
      );
    }
  });
});
