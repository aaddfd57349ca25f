import { describe, expect, it } from "vitest";
import { evaluateScenario } from "../../../src/sim/evaluation";
import { headerClientShares, headerlessMet } from "../../../src/sim/header-clients";
import { HELD_OUT_SEED_OFFSET, heldOutScenario, metCounts } from "../../../src/sim/held-out";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { heldOutSection } from "../../../src/sim/report-markdown";
import { heldOutVariantsNote } from "../../../src/sim/report-policy";
import { checkTargets } from "../../../src/sim/targets";
import type { VariantSummary } from "../../../src/sim/variants";
import { smallBurst } from "./small-scenario";

const summary = (id: string, worstCurveGapSumPts: number): VariantSummary => ({
  id,
  change: id,
  met: { curve: 0, served: 0, oracle: 0, attempts: 0 },
  scenarios: 1,
  worstCurveGapSumPts,
  meanWaitSumS: 200,
  perScenario: {},
});

describe("held-out seeds", () => {
  it("tells the variants ahead of the default on both seed sets from those ahead on one only", () => {
    const tuned = [summary("default", -60), summary("a", -55), summary("b", -58), summary("c", -70), summary("d", -65)];
    const held = [summary("default", -62), summary("a", -61), summary("b", -70), summary("c", -50), summary("d", -63)];
    const note = heldOutVariantsNote(tuned, held);
    expect(note).toContain("sum to -62.0 points, against -60.0 on the tuning seeds");
    expect(note).toContain(
      "on both seed sets: `a` (ahead by at most 5.0 points on either set, where the default's own sum moves by 2.0 between the sets); on the tuning seeds only: `b`; on the held-out seeds only: `c`.",
    );
    expect(note).not.toContain("`d`");
  });

  it("says so when the held-out seeds were not run", () => {
    expect(heldOutVariantsNote([summary("default", -60)], [])).toContain("not run");
  });

  it("scores a scenario on its held-out seeds with the same targets, and counts them beside the tuning seeds'", () => {
    const scenario = smallBurst();
    const policies = EVAL_POLICIES.filter((p) => ["static-30", "booked_capacity", "none"].includes(p.id));
    const tuned = evaluateScenario(scenario, policies, 1);
    const heldResult = evaluateScenario({ ...scenario, seed: scenario.seed + HELD_OUT_SEED_OFFSET }, policies, 1);
    const held = heldOutScenario(heldResult);
    expect(held.seeds).toEqual([scenario.seed + HELD_OUT_SEED_OFFSET]);
    expect(held.check).toEqual(checkTargets(heldResult));
    expect(held.served.oracle).toBe(heldResult.oracle.servedFraction);
    const section = heldOutSection({ seedOffset: HELD_OUT_SEED_OFFSET, scenarios: [held], variants: [] }, [
      checkTargets(tuned),
    ]);
    const onHeld = metCounts([held.check]);
    const onTuned = metCounts([checkTargets(tuned)]);
    expect(section).toContain(`| small-burst | ${scenario.seed + HELD_OUT_SEED_OFFSET} |`);
    expect(section).toContain(`curve within 2 points ${onHeld.curve} of 1 (${onTuned.curve})`);
    expect(section).toContain(`attempts at most static 30 s's ${onHeld.attempts} of 1 (${onTuned.attempts})`);
    // The header-less target is checked on the held-out seeds too, from the default's own shares.
    const shares = headerClientShares(heldResult, heldResult.defaultPolicy);
    expect(shares.headerless).toBeDefined();
    expect(held.headerClients).toEqual({
      sdk: shares.sdk,
      headerless: shares.headerless,
      python: shares.python ?? null,
    });
    const met = headerlessMet(shares) ? 1 : 0;
    expect(section).toContain("Clients without SDK headers on the held-out seeds");
    expect(section).toContain(`within 5 points in ${met} of 1 scenarios`);
  });

  it("states the sustained overload's p50 target on the held-out seeds, met or missed, from the default's summary", () => {
    const held = {
      name: "sustained-1.3x",
      seeds: [1003, 1004, 1005],
      check: checkTargets(
        evaluateScenario(
          smallBurst(),
          EVAL_POLICIES.filter((p) => ["static-30", "booked_capacity"].includes(p.id)),
          1,
        ),
      ),
      served: { default: 0.901, bestOther: 0.871, oracle: 1 },
      attempts: { default: 1.4, static30: 1.6 },
      headerClients: { sdk: 0.9, headerless: 0.88, python: 0.87 },
    };
    const withP50 = (p50: number) => ({
      ...summary("default", -60),
      perScenario: {
        "sustained-1.3x": {
          servedFraction: 0.901,
          attemptsPerOffered: 1.4,
          timeToSuccessP50S: p50,
          meanWaitS: 30,
          worstCurveGap: { horizonS: 60, gapPts: -5 },
        },
      },
    });
    const section = (p50: number) =>
      heldOutSection({ seedOffset: HELD_OUT_SEED_OFFSET, scenarios: [held], variants: [withP50(p50)] }, []);
    expect(section(5.14)).toContain("p50 5.14 s (**missed**), served 90.1% against the best other 87.1%.");
    expect(section(4.9)).toContain("p50 4.90 s (met)");
    // Without the variants' run there is no p50 on these seeds to state.
    expect(heldOutSection({ seedOffset: HELD_OUT_SEED_OFFSET, scenarios: [held], variants: [] }, [])).not.toContain(
      "**Sustained 1.3x**",
    );
  });
});
