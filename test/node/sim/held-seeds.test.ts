import { describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { evaluatePolicy } from "../../../src/sim/evaluation";
import { HELD_OUT_SEED_OFFSET } from "../../../src/sim/held-out";
import {
  HELD_SEEDS_VARIANTS,
  type HeldSeedsRun,
  type HeldSeedsSummary,
  heldSeedsRun,
} from "../../../src/sim/held-seeds";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../../../src/sim/policies";
import { heldSeedsFills, staleScenarios } from "../../../src/sim/report-held-seeds";
import { smallBurst } from "./small-scenario";

const summary = (
  id: string,
  worstCurveGapSumPts: number,
  curveMet: number,
  sustained: { p50S: number; headerlessGapPts: number },
): HeldSeedsSummary => ({
  id,
  change: id,
  met: { curve: curveMet, served: 12, oracle: 8, attempts: 10 },
  scenarios: 12,
  worstCurveGapSumPts,
  meanWaitSumS: 240,
  perScenario: {
    "sustained-1.3x": {
      servedFraction: 0.89,
      attemptsPerOffered: 1.4,
      timeToSuccessP50S: sustained.p50S,
      meanWaitS: 30,
      worstCurveGap: { horizonS: 60, gapPts: -5 },
      headerlessGapPts: sustained.headerlessGapPts,
    },
  },
});

const run = (summaries: HeldSeedsSummary[]): HeldSeedsRun => ({
  generatedBy: "npm run eval:held-seeds",
  seedOffset: HELD_OUT_SEED_OFFSET,
  seedsPerScenario: 10,
  scenarios: [],
  defaultOnTuningSeeds: { "burst-3x": { "5": 0.5, "15": 0.75 } },
  summaries,
});

describe("the figures quoted from ten held-out seeds", () => {
  it("says ahead or behind from the summed worst curve gaps, with the curve targets met", () => {
    const fills = heldSeedsFills(
      run([
        summary("default", -53.7, 0, { p50S: 4.45, headerlessGapPts: 2.2 }),
        summary("demoted-headroom-1", -53.2, 1, { p50S: 4.5, headerlessGapPts: 2 }),
        summary("horizon-pack", -60.1, 0, { p50S: 4.5, headerlessGapPts: 2 }),
        summary("fifo-while-standing", -54, 0, { p50S: 4.94, headerlessGapPts: 2 }),
        summary("sdk-room-off", -54.9, 0, { p50S: 4.5, headerlessGapPts: 4.3 }),
      ]),
    );
    expect(fills.heldSeedsDemotedHeadroom).toContain(
      "it is ahead by 0.5 points (-53.2 against -53.7) and meets the curve target in 1 of 12 scenarios, the default in 0",
    );
    expect(fills.heldSeedsHorizonPack).toContain("it is behind by 6.4 points (-60.1 against -53.7)");
    expect(fills.heldSeedsFifoWhileStanding).toContain(
      "the default's p50 is 4.45 s against 4.94 s in arrival order: shorter there too",
    );
    expect(fills.heldSeedsHeaderlessSustained).toContain(
      "the gap is 2.2 points under the default and 4.3 without the room kept for them (row `sdk-room-off`)",
    );
    expect(fills.heldSeedsSdkRoomOff).toContain("it is behind by 1.2 points (-54.9 against -53.7)");
    expect(fills.heldSeedsHeaderlessSustained).toContain("within the 5 the issue allows");
  });

  it("quotes the 60 s quiet wait against the default: the attempts target, capacity-halves' attempts, the gaps", () => {
    const withHalves = (s: HeldSeedsSummary, attempts: number, attemptsPerOffered: number): HeldSeedsSummary => ({
      ...s,
      met: { ...s.met, attempts },
      perScenario: {
        ...s.perScenario,
        "capacity-halves": {
          ...(s.perScenario["sustained-1.3x"] as HeldSeedsSummary["perScenario"][string]),
          attemptsPerOffered,
        },
      },
    });
    const fills = heldSeedsFills(
      run([
        withHalves(summary("default", -53.2, 0, { p50S: 4.6, headerlessGapPts: 2 }), 12, 1.4567),
        withHalves(summary("demoted-quiet-60", -53.25, 0, { p50S: 4.6, headerlessGapPts: 2 }), 11, 1.48),
      ]),
    );
    expect(fills.heldSeedsDemotedQuiet60).toContain(
      "the default meets the attempts target in 12 of 12 scenarios, the 60 s rule in 11; in `capacity-halves` the default makes 1.457 attempts per offered request against 1.480, and the summed worst curve gaps are -53.2 against -53.3 points",
    );
    // Without the variant's row, it says the command was not run.
    expect(
      heldSeedsFills(run([summary("default", -53.2, 0, { p50S: 4.6, headerlessGapPts: 2 })])).heldSeedsDemotedQuiet60,
    ).toContain("not run");
  });

  it("says so where the held-out seeds disagree with the prose's direction", () => {
    const fills = heldSeedsFills(
      run([
        summary("default", -50, 0, { p50S: 5.2, headerlessGapPts: 5.6 }),
        summary("fifo-while-standing", -54, 0, { p50S: 4.9, headerlessGapPts: 2 }),
      ]),
    );
    expect(fills.heldSeedsFifoWhileStanding).toContain("not shorter there too");
    expect(fills.heldSeedsHeaderlessSustained).toContain("past the 5 the issue allows");
    expect(fills.heldSeedsHeaderlessSustained).not.toContain("without the room kept");
    // A variant the run does not hold is not quoted.
    expect(fills.heldSeedsHorizonPack).toContain("not run");
  });

  it("says every figure is missing when the command was not run", () => {
    for (const text of Object.values(heldSeedsFills(undefined))) expect(text).toContain("npm run eval:held-seeds");
  });

  it("finds the file stale when the default's curve on the tuning seeds has changed", () => {
    const file = run([]);
    const tuning = (fiveS: number) => [
      {
        name: "burst-3x",
        policies: [{ id: DEFAULT_POLICY_ID, servedWithinS: { "5": fiveS, "15": 0.75 } }],
      },
    ];
    expect(staleScenarios(file, tuning(0.5), DEFAULT_POLICY_ID)).toEqual([]);
    expect(staleScenarios(file, tuning(0.51), DEFAULT_POLICY_ID)).toEqual(["burst-3x"]);
    // A scenario the file never ran is stale too.
    expect(staleScenarios(file, [{ ...tuning(0.5)[0], name: "waves" } as never], DEFAULT_POLICY_ID)).toEqual(["waves"]);
  });

  it("runs the default and the quoted variants on the held-out seeds, and records the default on the tuning seeds", () => {
    const scenario = smallBurst();
    const seen: string[] = [];
    const out = heldSeedsRun([scenario], 2, (name) => seen.push(name));
    expect(seen).toEqual(["small-burst"]);
    expect(out.scenarios).toEqual([
      { name: "small-burst", seeds: [scenario.seed + HELD_OUT_SEED_OFFSET, scenario.seed + HELD_OUT_SEED_OFFSET + 1] },
    ]);
    expect(out.summaries.map((s) => s.id)).toEqual(["default", ...HELD_SEEDS_VARIANTS]);
    const tuning = evaluatePolicy(
      scenario,
      [scenario.seed, scenario.seed + 1, scenario.seed + 2],
      measureCapacity(scenario),
      EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as (typeof EVAL_POLICIES)[number],
    );
    expect(out.defaultOnTuningSeeds["small-burst"]).toEqual(tuning.servedWithinS);
    expect(() => heldSeedsRun([scenario], 0)).toThrow(/positive integer/);
  });
});
