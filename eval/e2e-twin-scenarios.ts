import type { Scenario } from "../src/sim/scenario";
import { E2E_PHASES, type E2ePhase } from "./e2e-schedule";

/** The quiet spell before an end-to-end run: a trickle, as after a warm-up or a run's tail. */
export const QUIET_LEAD_IN: E2ePhase = { durationS: 40, load: 0.02 };

/**
 * The simulator's twins of the end-to-end run (`npm run eval:e2e`): demo-burst-3x's stack and clients under the
 * end-to-end phases, from a cold router and after a quiet spell. Used by `npm run eval:e2e-twin` and, as a check
 * on every candidate it keeps, by `npm run eval:tune`.
 *
 * @example
 * ```ts
 * e2eTwinScenarios(demo).map((t) => t.id); // ["cold", "after-quiet"]
 * ```
 */
export function e2eTwinScenarios(demo: Scenario): { id: string; description: string; scenario: Scenario }[] {
  const twin = (phases: readonly E2ePhase[], burstPhase: number): Scenario => ({
    ...demo,
    phases: [...phases],
    burstPhase,
  });
  return [
    { id: "cold", description: "the end-to-end phases from a cold router", scenario: twin(E2E_PHASES, 1) },
    {
      id: "after-quiet",
      description: "the same after a quiet spell (40 s at 0.02x)",
      scenario: twin([QUIET_LEAD_IN, ...E2E_PHASES], 2),
    },
  ];
}
