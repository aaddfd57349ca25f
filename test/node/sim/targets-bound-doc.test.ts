import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScenarioResult } from "../../../src/sim/evaluation";
import type { QueueBoundReport } from "../../../src/sim/queue-bound";
import { bestOtherCurve, checkTargets } from "../../../src/sim/targets";
import { renderTargetsBound, servedFloor, type TargetsBoundReport } from "../../../src/sim/targets-bound";

const root = resolve(import.meta.dirname, "../../..");
const read = <T>(path: string) => JSON.parse(readFileSync(resolve(root, path), "utf8")) as T;
const report = read<TargetsBoundReport>("docs/targets-bound.json");
const queueBound = read<QueueBoundReport>("docs/queue-bound.json");
const evaluation = read<{ scenarios: ScenarioResult[] }>("docs/evaluation.json");

describe("docs/targets-bound (npm run eval:targets-bound)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/targets-bound.md"), "utf8")).toBe(renderTargetsBound(report));
  });

  it("holds every evaluated scenario, on its seeds, to the evaluation's targets and the default's record", () => {
    expect(report.scenarios.map((s) => s.name)).toEqual(evaluation.scenarios.map((s) => s.name));
    for (const s of report.scenarios) {
      const evaluated = evaluation.scenarios.find((e) => e.name === s.name) as ScenarioResult;
      expect(s.seeds, s.name).toEqual(evaluated.seeds);
      expect(s.target, s.name).toEqual(bestOtherCurve(evaluated));
      expect(s.served, s.name).toEqual(servedFloor(evaluated));
      expect(s.attemptsAtMost, s.name).toBe(evaluated.policies.find((p) => p.id === "static-30")?.attemptsPerOffered);
      expect(s.defaultMet, s.name).toEqual(checkTargets(evaluated).met);
      expect(s.defaultWorstGap, s.name).toBe(checkTargets(evaluated).worstCurveGap.gap);
      expect(s.queueAwareMargin, s.name).toBe(queueBound.scenarios.find((q) => q.name === s.name)?.margin);
      // The p50 target is the sustained overload's, as the evaluation's own bound holds it.
      expect(s.withP50?.p50S, s.name).toBe(evaluated.curveBound?.withP50?.p50S);
    }
  });

  it("serves its floor, and each target added only tightens the bound", () => {
    for (const s of report.scenarios) {
      expect(s.servedShare, s.name).toBeGreaterThanOrEqual(s.served.floor - 1e-6);
      expect(s.margin, s.name).toBeLessThanOrEqual(s.queueAwareMargin + 1e-4);
      if (s.withP50) {
        expect(s.withP50.margin, s.name).toBeLessThanOrEqual(s.margin + 1e-4);
        expect(s.withP50.servedShare, s.name).toBeGreaterThanOrEqual(s.served.floor - 1e-6);
      }
    }
  });

  it("backs docs/retry-policy.md's claim: one schedule meets every simulator target at once in every scenario", () => {
    const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
    expect(doc).toContain("Nor do the served and oracle targets pull against it");
    expect(doc).toContain("one schedule still meets every simulator target at once in every scenario");
    for (const s of report.scenarios) {
      expect(s.margin, s.name).toBeGreaterThanOrEqual(-0.02);
      if (s.withP50) expect(s.withP50.margin, s.name).toBeGreaterThanOrEqual(-0.02);
    }
  });

  it("bounds the default wherever the default meets the targets the bound adds", () => {
    const bounded = report.scenarios.filter((s) => s.defaultMet.served && s.defaultMet.oracle && s.defaultMet.attempts);
    expect(bounded.length).toBeGreaterThan(0);
    for (const s of bounded) expect(s.defaultWorstGap, s.name).toBeLessThanOrEqual(s.margin + 1e-6);
  });
});
