import { describe, expect, it } from "vitest";
import { checkE2eTargets, type E2eFigures, poolE2eFigures } from "../../../src/sim/e2e-targets";
import { e2eDefaultLaterSection, e2eHeldSection, e2eRepeatSection, seedsOf } from "../../../src/sim/report-e2e-repeat";
import type { E2eOpenAiPolicy, E2eOpenAiRun } from "../../../src/sim/report-markdown";
import { e2ePolicy, e2eRun } from "../../support/e2e-run";

const curve = (s5: number, s15: number, s30: number, s60: number) => ({
  "5": s5,
  "15": s15,
  "30": s30,
  "60": s60,
  "120": s60,
});
const figures = (id: string, requests: number, served: number, c: Record<string, number>, attempts: number) => ({
  id,
  requests,
  servedFraction: served,
  servedWithinS: c,
  attemptsPerOffered: attempts,
});

describe("checkE2eTargets", () => {
  const def = figures("booked_capacity", 100, 0.995, curve(0.56, 0.6, 0.8, 0.99), 1.49);
  it("holds the default to the best reference policy at each horizon up to 60 s", () => {
    const check = checkE2eTargets(
      [
        def,
        figures("static-30", 100, 1, curve(0.55, 0.55, 0.7, 0.93), 1.55),
        figures("router_queue_drain_rate", 100, 0.62, curve(0.57, 0.625, 0.62, 0.62), 2),
      ],
      "booked_capacity",
    );
    expect(check?.worst.horizonS).toBe(15);
    expect(check?.worst.gap).toBeCloseTo(-0.025, 10);
    expect(check?.met).toEqual({ served: true, curve: false, attempts: true });
  });

  it("ignores policies that are not references, and horizons past 60 s", () => {
    const check = checkE2eTargets(
      [
        def,
        figures("static-5", 100, 1, curve(0.9, 0.9, 0.9, 1), 1.2),
        figures("static-30", 100, 1, curve(0.5, 0.5, 0.5, 0.5), 1.5),
      ],
      "booked_capacity",
    );
    expect(check?.met.curve).toBe(true);
    expect(check?.worst.gap).toBeCloseTo(0.06, 10); // at 5 s, the smallest lead
  });

  it("misses served under 99% and attempts over 1.5, and is undefined without the default or a reference", () => {
    const bad = { ...def, servedFraction: 0.98, attemptsPerOffered: 1.51 };
    expect(checkE2eTargets([bad, figures("static-30", 1, 1, curve(0, 0, 0, 0), 1)], bad.id)?.met).toEqual({
      served: false,
      curve: true,
      attempts: false,
    });
    expect(checkE2eTargets([def], def.id)).toBeUndefined();
    expect(checkE2eTargets([figures("static-30", 1, 1, curve(0, 0, 0, 0), 1)], def.id)).toBeUndefined();
  });
});

describe("poolE2eFigures", () => {
  it("weights each run's ratios by its requests, policy by policy", () => {
    const a: E2eFigures = figures("x", 300, 1, curve(0.5, 0.6, 0.7, 1), 1.4);
    const b: E2eFigures = figures("x", 100, 0.6, curve(0.1, 0.2, 0.3, 0.6), 1.8);
    const [x, y] = poolE2eFigures([[a, figures("y", 10, 1, curve(1, 1, 1, 1), 1)], [b]]);
    expect(x?.requests).toBe(400);
    expect(x?.servedFraction).toBeCloseTo(0.9, 10);
    expect(x?.servedWithinS["5"]).toBeCloseTo(0.4, 10);
    expect(x?.attemptsPerOffered).toBeCloseTo(1.5, 10);
    expect(y).toEqual(figures("y", 10, 1, curve(1, 1, 1, 1), 1));
  });
});

describe("e2eRepeatSection", () => {
  const policy = (id: string, perSeed: E2eOpenAiPolicy["perSeed"], attempts: number): E2eOpenAiPolicy =>
    e2ePolicy(id, {
      ...figures(id, 200, 1, curve(0.5, 0.6, 0.8, 1), attempts),
      served: 200,
      ...(perSeed ? { perSeed } : {}),
    });
  const run = (policies: E2eOpenAiPolicy[]): E2eOpenAiRun =>
    e2eRun(policies, { generatedBy: "npx tsx eval/e2e-openai.ts --seeds 2", seeds: [1, 2] });
  const seed = (s: number, attempts: number, s15: number) => ({
    seed: s,
    requests: 100,
    servedFraction: 1,
    servedWithinS: curve(0.5, s15, 0.8, 1),
    attemptsPerOffered: attempts,
  });
  const first = run([policy("booked_capacity", undefined, 1.52), policy("static-30", undefined, 1.55)]);
  const again = run([
    policy("booked_capacity", [seed(1, 1.45, 0.6), seed(2, 1.55, 0.55)], 1.5),
    policy("static-30", [seed(1, 1.5, 0.6), seed(2, 1.56, 0.6)], 1.53),
  ]);

  it("reads each seed's figures of every policy", () => {
    expect(seedsOf(again).map((s) => s.policies.map((p) => `${p.id}:${p.attemptsPerOffered}`))).toEqual([
      ["booked_capacity:1.45", "static-30:1.5"],
      ["booked_capacity:1.55", "static-30:1.56"],
    ]);
    expect(seedsOf(first).every((s) => s.policies.length === 0)).toBe(true);
  });

  it("prints both runs side by side, the targets alone and pooled, and seed by seed", () => {
    const text = e2eRepeatSection(first, again, "booked_capacity", "docs/again.json");
    expect(text).toContain("| booked_capacity | 100.0% / 100.0% |");
    expect(text).toContain("| 1.520 / 1.500 |");
    expect(text).toContain("on this run alone: served >= 99%: met (100.0%)");
    // Pooled: (1.52 * 200 + 1.5 * 200) / 400.
    expect(text).toContain("Pooled over both runs (400 requests per policy)");
    expect(text).toContain("attempts per offered <= 1.5: **missed** (1.510)");
    expect(text).toContain("| 2 | 100 | 100.0% | 50.0% | 55.0% |");
    expect(text).toContain(
      "Seed by seed the default's attempts per offered request run from 1.450 to 1.550 (at most 1.5 in 1 of 2 seeds) and its worst curve gap from -5.0 to +0.0 points (within 2 points in 1 of 2)",
    );
    expect(text).toContain("made the run above again: the same 2 seeds");
  });

  it("names the code each run ran, where the runs recorded it", () => {
    const withCommit = (r: E2eOpenAiRun, commit: string) => ({ ...r, commit });
    const same = e2eRepeatSection(withCommit(first, "aaa"), withCommit(again, "aaa"), "booked_capacity", "f.json");
    expect(same).toContain("made the run above again, with the code of commit `aaa`: the same 2 seeds");
    const other = e2eRepeatSection(withCommit(first, "aaa"), withCommit(again, "bbb"), "booked_capacity", "f.json");
    expect(other).toContain("with the code of commit `bbb` (the run above: `aaa`): the same 2 seeds");
  });

  it("holds the default run again alone to the other policies' figures in the headline run, pooled and seed by seed", () => {
    const later = {
      ...run([policy("booked_capacity", [seed(1, 1.4, 0.55), seed(2, 1.44, 0.45)], 1.42)]),
      generatedBy: "npx tsx eval/e2e-openai.ts --policies booked_capacity --seeds 2",
      commit: "ccc",
    };
    const text = e2eDefaultLaterSection({ ...again, commit: "aaa" }, later, "booked_capacity", "docs/later.json");
    expect(text).toContain("ran the default alone again, with the code of commit `ccc` (the headline run: `aaa`)");
    expect(text).toContain("| booked_capacity | 100.0% / 100.0% |");
    expect(text).toContain("| 1.500 / 1.420 |");
    // Only the default is tabled: static-30 was not run again.
    expect(text).not.toContain("| static-30 |");
    expect(text).toContain(
      "on this run: served >= 99%: met (100.0%); at 5, 15, 30 and 60 s at least the best of static-30",
    );
    expect(text).toContain("attempts per offered <= 1.5: met (1.420)");
    // Seed 2: 45% within 15 s against static-30's 60% on that seed in the headline run.
    expect(text).toContain("| 2 | 100 | 100.0% | 50.0% | 45.0% |");
    expect(text).toContain("-15.0 (15 s)");
  });

  it("quotes no run of the default on other seeds as a later run of the headline's", () => {
    const other = { ...again, seeds: [7, 8] };
    expect(e2eDefaultLaterSection(first, other, "booked_capacity", "docs/x.json")).toBe(
      "`docs/x.json` is not quoted: it is not a run of the default on the headline run's seeds.\n",
    );
    const withoutDefault = { ...again, policies: again.policies.filter((p) => p.id !== "booked_capacity") };
    expect(e2eDefaultLaterSection(first, withoutDefault, "booked_capacity", "docs/x.json")).toContain("is not quoted");
  });

  it("prints a run on other seeds alone, its targets alone and pooled with the headline run, and seed by seed", () => {
    const held = { ...again, seeds: [7, 8], generatedBy: "npx tsx eval/e2e-openai.ts --seeds 2 --first-seed 7" };
    const withSeeds = {
      ...held,
      policies: held.policies.map((p) => ({
        ...p,
        perSeed: p.perSeed?.map((s, i) => ({ ...s, seed: [7, 8][i] as number })),
      })),
    };
    const text = e2eHeldSection(first, withSeeds, "booked_capacity", "docs/held.json");
    expect(text).toContain("(`docs/held.json`) ran every policy on 2 other seeds (7, 8)");
    expect(text).toContain("| booked_capacity | 100.0% | 50.0% | 60.0% | 80.0% | 100.0% | 1.500 |");
    expect(text).toContain("on these seeds: served >= 99%: met (100.0%)");
    expect(text).toContain("Pooled with the headline run (400 requests per policy)");
    expect(text).toContain("attempts per offered <= 1.5: **missed** (1.510)");
    expect(text).toContain("| 8 | 100 | 100.0% | 50.0% | 55.0% |");
    expect(text).toContain("(at most 1.5 in 1 of 2 seeds)");
  });
});
