import { randomStream } from "./random-streams";
import type { LengthDistribution, Scenario } from "./scenario";

/** One logical request of the workload: what a client wants served, independent of any policy. */
export interface WorkloadRequest {
  id: number;
  /** First attempt, ms. */
  arrivalMs: number;
  promptTokens: number;
  /** Tokens the model generates before it stops. */
  outputTokens: number;
  /** `max_tokens` of the request (>= outputTokens; equal means it runs to the limit, like ignore_eos). */
  maxTokens: number;
  /** Who sends it (tenant, weight, priority class), as the Worker passes it to its router; absent: one tenant. */
  tenant?: { tenant: string; weight: number; priority: "interactive" | "batch" };
}

/**
 * Draws a length from a distribution with a uniform source.
 *
 * @example
 * ```ts
 * drawLength({ kind: "fixed", tokens: 128 }, Math.random); // 128
 * ```
 */
export function drawLength(dist: LengthDistribution, random: () => number): number {
  if (dist.kind === "fixed") return dist.tokens;
  // Box-Muller: one standard normal from two uniforms (1 - u keeps the log finite).
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const value = Math.round(dist.median * Math.exp(dist.sigma * z));
  return Math.min(dist.max, Math.max(dist.min, value));
}

/** A size sampler for a scenario's requests (prompt, output, max_tokens). */
export function sizeSampler(scenario: Scenario, random: () => number) {
  return () => {
    const promptTokens = drawLength(scenario.requests.prompt, random);
    const outputTokens = drawLength(scenario.requests.output, random);
    const maxTokens = Math.ceil(outputTokens * scenario.requests.maxTokensFactor);
    return { promptTokens, outputTokens, maxTokens };
  };
}

/**
 * The scenario's arrivals: Poisson within each phase at `load * capacityRps`, sizes from the scenario's
 * distributions, all from the scenario's seed (every policy gets exactly these requests).
 *
 * @example
 * ```ts
 * const requests = generateWorkload(scenario, 9.5); // capacity measured by measureCapacity()
 * ```
 */
export function generateWorkload(scenario: Scenario, capacityRps: number): WorkloadRequest[] {
  const arrivals = randomStream(scenario.seed, "arrivals");
  const sizes = sizeSampler(scenario, randomStream(scenario.seed, "sizes"));
  const requests: WorkloadRequest[] = [];
  let phaseStartS = 0;
  for (const phase of scenario.phases) {
    const rate = phase.load * capacityRps;
    const endS = phaseStartS + phase.durationS;
    if (rate > 0) {
      let t = phaseStartS;
      for (;;) {
        t += -Math.log(1 - arrivals()) / rate;
        if (t >= endS) break;
        requests.push({ id: requests.length, arrivalMs: t * 1000, ...sizes() });
      }
    }
    phaseStartS = endS;
  }
  return requests;
}
