import { COMPLETION_HORIZONS_S, type CompletionCurve } from "../../../src/sim/metrics";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../../../src/sim/policies";
import { type Scenario, scenarioSchema } from "../../../src/sim/scenario";
import { runSimulation } from "../../../src/sim/simulation";
import type { RunTrace } from "../../../src/sim/trace";
import { generateWorkload } from "../../../src/sim/workload";

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

/** The default policy as the evaluation runs it. */
export function defaultPolicySpec(): PolicySpec {
  const policy = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID);
  if (!policy) throw new Error("no default policy");
  return policy;
}

/** The default policy's run of `smallBurst()`, its arrivals generated for a fleet of `capacityRps`. */
export function defaultRunOfSmallBurst(capacityRps: number): RunTrace {
  const scenario = smallBurst();
  return runSimulation(scenario, defaultPolicySpec(), generateWorkload(scenario, capacityRps));
}

/** A completion curve with the same share at every horizon (5 to 120 s): a bound's target in the bound tests. */
export function sameShareAtEveryHorizon(share: number): CompletionCurve {
  return Object.fromEntries(COMPLETION_HORIZONS_S.map((h) => [String(h), share]));
}
