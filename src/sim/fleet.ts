import { defaultTimingModel } from "../engine/timing-model";
import type { SchedulerOptions } from "../scheduler/index";
import type { EventLoop } from "./event-loop";
import type { Scenario } from "./scenario";
import { SimReplica } from "./sim-replica";

/**
 * The scenario's replicas, named like engine URLs (ids only: nothing listens there). The prefix cache is off
 * because every simulated prompt is unique (it could never hit) and it only costs simulation time.
 *
 * @example
 * ```ts
 * const replicas = buildFleet(scenario, loop); // Map of "http://127.0.0.1:9000" -> SimReplica, ...
 * ```
 */
export function buildFleet(scenario: Scenario, loop: EventLoop): Map<string, SimReplica> {
  const fleet = new Map<string, SimReplica>();
  const { maxTotalTokens } = scenario.fleet;
  const schedulerOptions: SchedulerOptions = {
    maxTotalTokens,
    disableRadixCache: true,
  };
  for (const group of scenario.fleet.replicas) {
    for (let i = 0; i < group.count; i++) {
      const name = `http://127.0.0.1:${9000 + fleet.size}`;
      fleet.set(name, new SimReplica(name, loop, schedulerOptions, { ...defaultTimingModel, speed: group.speed }));
    }
  }
  return fleet;
}

/** Prompt token ids for a simulated request: unique first token, so no two prompts share a prefix. */
export function promptIds(uniqueId: number, length: number): number[] {
  const ids = new Array<number>(length).fill(7);
  ids[0] = 1000 + uniqueId;
  return ids;
}
