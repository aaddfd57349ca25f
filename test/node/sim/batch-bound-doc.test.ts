import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type BatchBoundReport, renderBatchBound } from "../../../src/sim/batch-bound-report";

const root = resolve(import.meta.dirname, "../../..");
const report = JSON.parse(readFileSync(resolve(root, "docs/batch-bound.json"), "utf8")) as BatchBoundReport;
const evaluation = JSON.parse(readFileSync(resolve(root, "docs/evaluation.json"), "utf8")) as {
  scenarios: Array<{ name: string; seeds: number[] }>;
};

describe("docs/batch-bound (npm run eval:batch-bound)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/batch-bound.md"), "utf8")).toBe(renderBatchBound(report));
  });

  it("covers every evaluated scenario, on the evaluation's seeds", () => {
    expect(report.scenarios.map((s) => s.name)).toEqual(evaluation.scenarios.map((s) => s.name));
    for (const s of report.scenarios) {
      const evaluated = evaluation.scenarios.find((e) => e.name === s.name);
      expect(s.seeds, s.name).toEqual(evaluated?.seeds);
    }
  });

  it("bounds the default: its worst curve gap is no better than the batch-aware margin, in every scenario", () => {
    for (const s of report.scenarios) expect(s.defaultWorstGap, s.name).toBeLessThanOrEqual(s.batchMargin + 1e-6);
  });

  it("backs docs/retry-policy.md's claims: batching leaves the target within reach, and costs burst-10x little", () => {
    const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
    expect(doc).toContain("still finds the target within reach in every scenario");
    for (const s of report.scenarios) expect(s.batchMargin, s.name).toBeGreaterThanOrEqual(-0.02);
    expect(doc).toContain("does see it, and finds it small: with foresight, the curve target stays within reach here");
    const burst = report.scenarios.find((s) => s.name === "burst-10x");
    // Small: under a point of the offered requests.
    expect((burst?.aloneMargin ?? 0) - (burst?.batchMargin ?? 1)).toBeLessThan(0.01);
  });
});
