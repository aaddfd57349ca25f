import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type QueueBoundReport, renderQueueBound } from "../../../src/sim/queue-bound";

const root = resolve(import.meta.dirname, "../../..");
const report = JSON.parse(readFileSync(resolve(root, "docs/queue-bound.json"), "utf8")) as QueueBoundReport;
const evaluation = JSON.parse(readFileSync(resolve(root, "docs/evaluation.json"), "utf8")) as {
  scenarios: Array<{ name: string; seeds: number[]; policies: Array<{ id: string; attemptsPerOffered: number }> }>;
};

describe("docs/queue-bound (npm run eval:queue-bound)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/queue-bound.md"), "utf8")).toBe(renderQueueBound(report));
  });

  it("covers every evaluated scenario, on the evaluation's seeds, held to static 30 s's attempts", () => {
    expect(report.scenarios.map((s) => s.name)).toEqual(evaluation.scenarios.map((s) => s.name));
    for (const s of report.scenarios) {
      const evaluated = evaluation.scenarios.find((e) => e.name === s.name);
      expect(s.seeds, s.name).toEqual(evaluated?.seeds);
      expect(s.attemptsAtMost, s.name).toBe(evaluated?.policies.find((p) => p.id === "static-30")?.attemptsPerOffered);
    }
  });

  it("bounds the default and tightens the clairvoyant bound: default's gap <= queue-aware margin <= margin without", () => {
    for (const s of report.scenarios) {
      expect(s.defaultWorstGap, s.name).toBeLessThanOrEqual(s.margin + 1e-6);
      expect(s.margin, s.name).toBeLessThanOrEqual(s.aloneMargin + 1e-4);
    }
  });

  it("backs docs/retry-policy.md's claim: the queue and the attempts target leave the target within reach", () => {
    const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
    expect(doc).toContain("Nor are the queue's bound and the attempts target");
    expect(doc).toContain(
      "still finds the target within reach in every scenario. Nor do the served and oracle targets",
    );
    for (const s of report.scenarios) expect(s.margin, s.name).toBeGreaterThanOrEqual(-0.02);
  });
});
