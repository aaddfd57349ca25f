import { describe, expect, it } from "vitest";
import type { PolicyResult, ScenarioResult } from "../../../src/sim/evaluation";
import { envelopeRows, envelopeSection } from "../../../src/sim/report-envelope";

/** A policy's result with only what the rows read: its completion curve at 5, 15, 30, 60 and 120 s. */
function policy(id: string, curve: number[]): PolicyResult {
  const servedWithinS = Object.fromEntries([5, 15, 30, 60, 120].map((h, i) => [String(h), curve[i] as number]));
  return { id, servedWithinS } as unknown as PolicyResult;
}

const scenario = (name: string, policies: PolicyResult[]) => ({ name, policies }) as unknown as ScenarioResult;

describe("every policy held to the curve target against the rest", () => {
  // In "a", static-5 is best at 30 s, static-30 at 60 and 120 s, and the default at 5 and 15 s: each is behind the
  // others' best somewhere. In "b" the default is best or within 1 point everywhere.
  const results = [
    scenario("a", [
      policy("booked_capacity", [0.5, 0.7, 0.8, 0.9, 0.95]),
      policy("static-5", [0.45, 0.65, 0.83, 0.83, 0.83]),
      policy("static-30", [0.3, 0.6, 0.7, 0.93, 0.99]),
    ]),
    scenario("b", [
      policy("booked_capacity", [0.49, 0.7, 0.8, 0.9, 0.9]),
      policy("static-5", [0.5, 0.6, 0.7, 0.7, 0.7]),
      policy("static-30", [0.3, 0.6, 0.7, 0.85, 0.88]),
    ]),
  ];

  it("gives each policy its worst gap to the others' best per scenario, summed, and counts where it is nearest", () => {
    const [def, static5, static30] = envelopeRows(results);
    // a: -0.04 at 120 s (0.95 against 0.99); b: -0.01 at 5 s.
    expect(def).toMatchObject({ policy: "booked_capacity", scenarios: 2, curveWithin: 1, nearest: 2 });
    expect(def?.worstSum).toBeCloseTo(-0.05);
    expect(def?.worst).toMatchObject({ scenario: "a", horizonS: 120 });
    // a: -0.16 at 120 s (0.83 against 0.99); b: -0.2 at 60 s (0.7 against 0.9).
    expect(static5).toMatchObject({ curveWithin: 0, nearest: 0 });
    expect(static5?.worstSum).toBeCloseTo(-0.36);
    expect(static5?.worst).toMatchObject({ scenario: "b", horizonS: 60 });
    // a: -0.2 at 5 s (0.3 against 0.5); b: -0.2 at 5 s too (0.3 against static-5's 0.5), found first in "a".
    expect(static30?.worstSum).toBeCloseTo(-0.4);
    expect(static30?.worst).toMatchObject({ scenario: "a", horizonS: 5 });
  });

  it("renders the rows nearest first and says which policy comes nearest", () => {
    const section = envelopeSection(results, "booked_capacity");
    expect(section.indexOf("| static-5 |")).toBeLessThan(section.indexOf("| static-30 |"));
    expect(section).toContain("No policy meets it in more than 1 of 2 scenarios");
    expect(section).toContain("the next nearest policy's, static-5's, to -36.0");
    // Without the default, static-5 against static-30 alone: a: -0.16 at 120 s; b: -0.18 at 120 s.
    expect(section).toContain("| static-5 | 0 of 2 | 0 of 2 | -36.0 pts | -20.0 (b, 60 s) | 0 of 2 / -34.0 pts |");
    expect(section).toContain("| **booked_capacity** | 1 of 2 | 2 of 2 | -5.0 pts | -4.0 (a, 120 s) | - |");
    expect(section).toContain(
      "held to one another without it (last column), the other policies meet it in none of them",
    );
    const behind = envelopeSection(results, "static-30");
    expect(behind).toContain("nearer than the default: booked_capacity (-5.0), static-5 (-36.0)");
    expect(behind).not.toContain("static-30 (");
  });

  it("adds the queue-bound sweep's points: where the others meet the target, where the default does, where it is nearest", () => {
    const sweep = results.map((r, i) => ({ scenario: r.name, maxQueuedRequests: 8 * (i + 1), policies: r.policies }));
    expect(envelopeSection(results, "booked_capacity", sweep)).toContain(
      "Across the queue-bound sweep's 2 points (below), the other policies meet it at none, the default at 1, and the default's worst gap is the smallest at 2 of them.",
    );
    expect(envelopeSection(results, "booked_capacity")).not.toContain("queue-bound sweep");
  });
});
