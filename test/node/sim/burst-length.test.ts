import { describe, expect, it } from "vitest";
import { readScenario } from "../../../eval/scenario-files";
import {
  type BurstLengthReport,
  burstLengthSummary,
  renderBurstLength,
  withBurstLength,
} from "../../../src/sim/burst-length";
import type { TargetCheck } from "../../../src/sim/targets";
import { repoJson, repoText } from "../../support/repo-files";

const report = repoJson<BurstLengthReport>("docs/burst-length.json");

describe("a burst of another length", () => {
  const burst = readScenario("burst-3x");

  it("changes the phase above capacity only", () => {
    const longer = withBurstLength(burst, 45);
    expect(longer.phases.map((p) => p.durationS)).toEqual(burst.phases.map((p) => (p.load > 1 ? 45 : p.durationS)));
    expect(longer.phases.map((p) => p.load)).toEqual(burst.phases.map((p) => p.load));
    expect({ ...longer, phases: burst.phases }).toEqual(burst);
  });

  it("gives the scenario back unchanged at its own length", () => {
    expect(withBurstLength(burst, burst.phases.find((p) => p.load > 1)?.durationS as number)).toEqual(burst);
  });

  it("refuses a length that is no positive number, and a scenario without exactly one burst", () => {
    expect(() => withBurstLength(burst, -1)).toThrow("positive number of seconds");
    expect(() => withBurstLength(readScenario("waves"), 20)).toThrow("waves: not a scenario of one burst");
  });
});

describe("docs/burst-length.md", () => {
  it("is rendered from docs/burst-length.json", () => {
    expect(repoText("docs/burst-length.md")).toBe(renderBurstLength(report));
  });

  it("reproduces docs/evaluation.json's curve gaps at each scenario's own burst length", () => {
    const targets = repoJson<{ targets: TargetCheck[] }>("docs/evaluation.json").targets;
    for (const { name, ownBurstS } of report.scenarios) {
      const own = report.rows.find((r) => r.scenario === name && r.burstS === ownBurstS);
      const check = targets.find((t) => t.scenario === name) as TargetCheck;
      expect(own?.curveGap).toEqual(check.curveGap);
      expect(own?.worst).toEqual(check.worstCurveGap);
    }
  });

  it("docs/retry-after-default.md's 'Where it loses' quotes the range of the bursts' worst gaps over their lengths", () => {
    const readme = repoText("docs/retry-after-default.md").replace(/\s+/g, " ");
    const quoted = readme.match(
      /with bursts of (\d+) to (\d+) s instead, the default misses the curve target at every length with an overload \(`burst-3x`: (-\d+\.\d) to (-\d+\.\d) points at 30 s; `burst-10x`: (-\d+\.\d) to (-\d+\.\d) at 5 or 30 s: \[burst-length\.md\]/,
    );
    expect(quoted).not.toBeNull();
    const lengths = report.rows.map((r) => r.burstS);
    expect([Math.min(...lengths), Math.max(...lengths)]).toEqual([Number(quoted?.[1]), Number(quoted?.[2])]);
    const three = burstLengthSummary(report, "burst-3x");
    const ten = burstLengthSummary(report, "burst-10x");
    const pts = (share: number) => (100 * share).toFixed(1);
    expect([pts(three.highest), pts(three.lowest), pts(ten.highest), pts(ten.lowest)]).toEqual(quoted?.slice(3, 7));
    expect(three.horizons).toEqual([30]);
    expect(ten.horizons).toEqual([5, 30]);
    expect(report.rows.filter((r) => r.worst.gap < 0).every((r) => r.worst.gap < -0.02)).toBe(true);
  });
});
