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

/**
 * The end-to-end run as its router lives it: one Durable Object serves all of a policy's seeds, one after another,
 * so whatever its ledger learnt in one burst (trust, show rate, baseline, the refusals it remembers) is there at the
 * next. `bursts` copies of the end-to-end phases on one router, a quiet spell of `quietS` between them (the previous
 * seed's tail and the pause), where each twin of {@link e2eTwinScenarios} starts anew.
 *
 * @example
 * ```ts
 * const chained = e2eChainedTwin(readScenario("demo-burst-3x"), 6, 60); // six bursts, 60 s at 0.02x between them
 * ```
 */
export function e2eChainedTwin(demo: Scenario, bursts: number, quietS: number): Scenario {
  const phases = Array.from({ length: bursts }, (_, i) => [
    ...(i > 0 ? [{ durationS: quietS, load: QUIET_LEAD_IN.load }] : []),
    ...E2E_PHASES,
  ]).flat();
  return { ...demo, phases, burstPhase: 1 };
}
