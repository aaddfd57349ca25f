import { type Scenario, scenarioSchema } from "../../../src/sim/scenario";

/** A small burst on a two-replica fleet: a few hundred requests, well under a second to simulate. */
export function smallBurst(over: Partial<Scenario> = {}): Scenario {
  return scenarioSchema.parse({
    name: "small-burst",
    title: "small burst",
    description: "test",
    seed: 11,
    phases: [
      { durationS: 10, load: 0.5 },
      { durationS: 8, load: 3 },
      { durationS: 20, load: 0.5 },
    ],
    tailS: 40,
    fleet: { replicas: [{ count: 2, speed: 4 }], maxOngoingRequests: 4, maxTotalTokens: 8192 },
    router: { shards: 1, maxQueuedRequests: 10, queueTimeoutS: 30 },
    requests: { prompt: { kind: "fixed", tokens: 64 }, output: { kind: "fixed", tokens: 32 } },
    client: { maxRetries: 3 },
    burstPhase: 1,
    ...over,
  });
}
