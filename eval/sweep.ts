import { evaluateScenario, type ScenarioResult } from "../src/sim/evaluation";
import { EVAL_POLICIES } from "../src/sim/policies";
import type { Scenario } from "../src/sim/scenario";

/** The queue-bound sweep (`npm run eval`): these scenarios with a queue that drains in about these many seconds at capacity. */
export const SWEEP_SCENARIOS = ["burst-3x", "burst-10x", "waves"];
export const SWEEP_DRAIN_S = [1, 2, 4, 8, 15];

/**
 * The sweep's queue bound for a full queue that drains in about `drainS` at `capacityRps` (at least one place).
 *
 * @example
 * ```ts
 * sweepQueueBound(1, 8.53); // 9
 * ```
 */
export function sweepQueueBound(drainS: number, capacityRps: number): number {
  return Math.max(1, Math.round(drainS * capacityRps));
}

/**
 * Every policy on `scenario` at each of the sweep's queue bounds ({@link SWEEP_DRAIN_S} at `capacityRps`), `seedCount`
 * seeds each, logging each point's run time after `label`: the loop of the one-dimension studies (`eval:wave-period`,
 * `eval:burst-train`), which vary the scenario and keep the sweep's queues.
 *
 * @example
 * ```ts
 * for (const { maxQueuedRequests, result } of atSweepQueueBounds(scenario, 8.53, 3, "period 4 s")) ...
 * // logs "period 4 s, queue 9: 12 s", ...
 * ```
 */
export function atSweepQueueBounds(
  scenario: Scenario,
  capacityRps: number,
  seedCount: number,
  label: string,
): { maxQueuedRequests: number; result: ScenarioResult }[] {
  return SWEEP_DRAIN_S.map((drainS) => {
    const started = performance.now();
    const maxQueuedRequests = sweepQueueBound(drainS, capacityRps);
    const result = evaluateScenario(
      { ...scenario, router: { ...scenario.router, maxQueuedRequests } },
      EVAL_POLICIES,
      seedCount,
    );
    console.log(`${label}, queue ${maxQueuedRequests}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return { maxQueuedRequests, result };
  });
}
