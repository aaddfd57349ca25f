import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type OnlineBoundReport, renderOnlineBound } from "../../../src/sim/online-bound-report";

const root = resolve(import.meta.dirname, "../../..");
const report = JSON.parse(readFileSync(resolve(root, "docs/online-bound.json"), "utf8")) as OnlineBoundReport;

describe("docs/online-bound (npm run eval:twins)", () => {
  it("the document is the rendering of its JSON: every figure in it comes from the data", () => {
    expect(readFileSync(resolve(root, "docs/online-bound.md"), "utf8")).toBe(renderOnlineBound(report));
  });

  it("each pair's bounds are ordered: online <= with foresight <= each twin alone", () => {
    expect(report.pairs.length).toBeGreaterThan(0);
    for (const p of report.pairs) {
      expect(p.online, p.twin).toBeLessThanOrEqual(p.withForesight + 1e-6);
      expect(p.withForesight, p.twin).toBeLessThanOrEqual(Math.min(p.alone.base, p.alone.twin) + 1e-6);
      // The default policy is online: it cannot do better than the online bound in both twins.
      expect(Math.min(p.defaultWorstGap.base, p.defaultWorstGap.twin), p.twin).toBeLessThanOrEqual(p.online + 1e-6);
    }
  });

  it("backs docs/retry-policy.md's claim: tying the starts before the twins part costs the bound nothing", () => {
    const doc = readFileSync(resolve(root, "docs/retry-policy.md"), "utf8").replace(/\s+/g, " ");
    expect(doc).toContain("tying every start made before the parting costs the bound nothing");
    // Nothing: under a twentieth of a point (the solver's tolerance) in every pair.
    for (const p of report.pairs) expect(p.withForesight - p.online, p.twin).toBeLessThan(0.0005);
  });
});
