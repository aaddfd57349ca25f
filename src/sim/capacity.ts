import { EventLoop } from "./event-loop";
import { buildFleet, promptIds } from "./fleet";
import { randomStream } from "./random-streams";
import type { Scenario } from "./scenario";
import { sizeSampler } from "./workload";

/**
 * The fleet's capacity in requests per second: every replica kept at `maxOngoingRequests` concurrent
 * requests (drawn from the scenario's size distributions) for `measureS` after `warmupS`, completions
 * counted. Offered loads ("3x") are multiples of this.
 *
 * @example
 * ```ts
 * const rps = measureCapacity(scenario); // e.g. 9.4
 * ```
 */
export function measureCapacity(scenario: Scenario, warmupS = 30, measureS = 120): number {
  const loop = new EventLoop();
  const fleet = buildFleet(scenario, loop);
  const sizes = sizeSampler(scenario, randomStream(scenario.seed, "capacity"));
  let next = 0;
  let completions = 0;
  const startMs = warmupS * 1000;
  const endMs = (warmupS + measureS) * 1000;
  const feed = (name: string) => {
    const replica = fleet.get(name) as NonNullable<ReturnType<typeof fleet.get>>;
    const size = sizes();
    const id = next++;
    replica.submit(
      {
        id: String(id),
        promptTokenIds: promptIds(id, size.promptTokens),
        maxTokens: size.maxTokens,
        outputTokens: size.outputTokens,
      },
      () => {
        const t = loop.now();
        if (t >= startMs && t < endMs) completions += 1;
        if (t < endMs) feed(name);
      },
    );
  };
  for (const name of fleet.keys()) for (let i = 0; i < scenario.fleet.maxOngoingRequests; i++) feed(name);
  loop.run(endMs);
  return completions / measureS;
}
