import { describe, expect, it } from "vitest";
import { readScenario } from "../../../eval/scenario-files";
import type { SweepPoint } from "../../../src/sim/report-markdown";
import {
  bestOtherServed,
  renderWavePeriod,
  servedMisses,
  shortQueueLeads,
  type WavePeriodPoint,
  type WavePeriodReport,
  wavesWithHalfPeriod,
} from "../../../src/sim/wave-period";
import { repoJson, repoText } from "../../support/repo-files";

const report = repoJson<WavePeriodReport>("docs/wave-period.json");

describe("waves with another period", () => {
  const waves = readScenario("waves");

  it("keeps the lead-in and the loads, and makes every wave and trough the half-period long", () => {
    const faster = wavesWithHalfPeriod(waves, 20);
    expect(faster.phases[0]).toEqual(waves.phases[0]);
    expect(faster.phases.map((p) => p.load)).toEqual(waves.phases.map((p) => p.load));
    expect(faster.phases.slice(1).every((p) => p.durationS === 20)).toBe(true);
    expect({ ...faster, phases: waves.phases }).toEqual(waves);
  });

  it("gives the scenario back unchanged at its own half-period", () => {
    expect(wavesWithHalfPeriod(waves, waves.phases[1]?.durationS as number)).toEqual(waves);
  });

  it("refuses a half-period that is no positive number, and a scenario that is not one of waves", () => {
    expect(() => wavesWithHalfPeriod(waves, 0)).toThrow("positive number of seconds");
    expect(() => wavesWithHalfPeriod(waves, Number.NaN)).toThrow("positive number of seconds");
    expect(() => wavesWithHalfPeriod(readScenario("burst-3x"), 20)).toThrow("burst-3x: not a scenario of waves");
  });
});

describe("the served target at each point", () => {
  const point = (served: Record<string, number>): WavePeriodPoint => ({
    halfPeriodS: 30,
    maxQueuedRequests: 9,
    queueDrainS: 1.1,
    served,
  });

  it("holds the default to the best other policy, and misses by more than a point only", () => {
    const behind = point({ booked_capacity: 0.87, "static-30": 0.9, "static-5": 0.95 });
    expect(bestOtherServed(behind)).toEqual({ id: "static-5", served: 0.95 });
    const close = point({ booked_capacity: 0.945, "static-30": 0.9, "static-5": 0.95 });
    const ahead = point({ booked_capacity: 0.99, "static-30": 0.9 });
    const doc: WavePeriodReport = { ...report, points: [behind, close, ahead] };
    expect(servedMisses(doc)).toEqual([behind]);
  });
});

describe("docs/wave-period.md", () => {
  it("is rendered from docs/wave-period.json", () => {
    expect(repoText("docs/wave-period.md")).toBe(renderWavePeriod(report));
  });

  it("reproduces the queue-bound sweep's own figures at the scenario's own half-period", () => {
    const sweeps = repoJson<{ sweeps: SweepPoint[] }>("docs/evaluation.json").sweeps.filter(
      (s) => s.scenario === report.scenario,
    );
    const own = report.points.filter((p) => p.halfPeriodS === report.ownHalfPeriodS);
    expect(own.map((p) => p.maxQueuedRequests)).toEqual(sweeps.map((s) => s.maxQueuedRequests));
    for (const [i, p] of own.entries())
      expect(p.served).toEqual(
        Object.fromEntries((sweeps[i] as SweepPoint).policies.map((q) => [q.id, q.servedFraction])),
      );
  });
});

describe("what docs/retry-after-default.md and the doc say of it", () => {
  it("the sweep's served misses are the report's at the scenario's own period, at its shortest queues, behind static 30 s", () => {
    const sweeps = repoJson<{ sweeps: SweepPoint[] }>("docs/evaluation.json").sweeps;
    const sweepMisses = sweeps.filter((s) => !s.targets.met.served);
    expect(sweepMisses.every((s) => s.scenario === report.scenario)).toBe(true);
    const ownMisses = servedMisses(report).filter((p) => p.halfPeriodS === report.ownHalfPeriodS);
    expect(ownMisses.map((p) => p.maxQueuedRequests)).toEqual(sweepMisses.map((s) => s.maxQueuedRequests));
    const { shortest } = shortQueueLeads(report);
    expect(ownMisses.every((p) => shortest.includes(p.maxQueuedRequests))).toBe(true);
    expect(ownMisses.every((p) => bestOtherServed(p).id === "static-30")).toBe(true);
  });

  it("docs/retry-after-default.md's 'Where it loses' names the half-periods where each side leads at the shortest queues", () => {
    const readme = repoText("docs/retry-after-default.md").replace(/\s+/g, " ");
    const quoted = readme.match(
      /static 30 s's lead at the two shortest queues holds where waves and troughs last ([\d s,]+), about as long as its hint, and the default serves the most there where they last ([\d s,]+): \[wave-period\.md\]/,
    );
    expect(quoted).not.toBeNull();
    const halves = (text: string) => text.split(",").map((h) => Number.parseFloat(h));
    const { staticLeads, defaultLeads } = shortQueueLeads(report);
    expect(halves(quoted?.[1] as string)).toEqual(staticLeads);
    expect(halves(quoted?.[2] as string)).toEqual(defaultLeads);
    // "About as long as its hint" (30 s): within 10 s of it (25 to 40 s until the longer best effort in recurring
    // overloads, 2026-12-07; 35 s since).
    expect(staticLeads.length).toBeGreaterThan(0);
    for (const h of staticLeads) expect(Math.abs(h - 30)).toBeLessThanOrEqual(10);
  });
});
