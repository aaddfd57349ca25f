import { describe, expect, it } from "vitest";
import { envelopeOwners, envelopeOwnersSection, type OwnersRun } from "../../../src/sim/report-envelope-owners";

const curve = (c5: number, c15: number, c30: number, c60: number, c120: number) => ({
  "5": c5,
  "15": c15,
  "30": c30,
  "60": c60,
  "120": c120,
});
/** Two scenarios: `fast` serves quickly and drops the rest; `late` serves everyone, late; the default between. */
const run = (name: string, fastFinal: number): OwnersRun => ({
  name,
  policies: [
    { id: "default", servedFraction: 0.99, servedWithinS: curve(0.4, 0.6, 0.7, 0.9, 0.99) },
    { id: "fast", servedFraction: fastFinal, servedWithinS: curve(0.5, 0.7, fastFinal, fastFinal, fastFinal) },
    { id: "late", servedFraction: 0.98, servedWithinS: curve(0.3, 0.4, 0.6, 0.95, 0.98) },
  ],
});

describe("envelopeOwners", () => {
  const rows = envelopeOwners([run("a", 0.8), run("b", 0.85)], "default");

  it("names the best other policy at each horizon, never the default", () => {
    expect(rows.map((r) => r.owners.map((o) => `${o.policy}:${o.scenarios.join("+")}`))).toEqual([
      ["fast:a+b"],
      ["fast:a+b"],
      ["fast:a+b"],
      ["late:a+b"],
      ["late:a+b"],
    ]);
  });

  it("counts where the best policy has already served all it will: at 30 s, the one that drops the rest", () => {
    const at = (h: number) => rows.find((r) => r.horizonS === h);
    expect(at(15)?.finalThere).toEqual([]);
    expect(at(30)?.finalThere).toEqual(["a", "b"]);
    expect(at(30)?.finalServed).toEqual({ min: 0.8, max: 0.85 });
    expect(at(60)?.finalThere).toEqual([]);
    expect(at(120)?.finalThere).toEqual(["a", "b"]);
    expect(at(120)?.bestServed).toEqual({ min: 0.98, max: 0.98 });
  });

  it("says it in docs/evaluation.md's words", () => {
    const text = envelopeOwnersSection([run("a", 0.8), run("b", 0.85)], "default");
    expect(text).toContain("| 30 s | fast (2) | 2 of 2 | 80.0% to 85.0% |");
    expect(text).toContain("| 15 s | fast (2) | 0 of 2 | - |");
    expect(text).toContain(
      "at 30 s, to policies that give up: in 2 of 2 scenarios the best other policy there (most often fast, in 2) has served by 30 s every request it will ever serve, 80.0% to 85.0% of them; and at 120 s to late, which serves 98.0% to 98.0% in the end.",
    );
  });
});
