import { decodeStepSeconds, defaultTimingModel, prefillSeconds } from "../engine/timing-model";
import type { BoundInstance, BoundWay } from "./curve-bound";
import { fleetSpeed, oracleModel } from "./oracle";
import type { Scenario } from "./scenario";
import type { WorkloadRequest } from "./workload";

/**
 * What one request costs the fleet and how soon it can be done when it decodes in a batch of `batchSize` or
 * more (and fewer than `nextBatchSize`): the two sides of batching, which the clairvoyant bound's single way (alone
 * on the fastest replica, at the fleet's measured rate) leaves apart.
 *
 * A decode step of B requests takes `a + b B + c (tokens held) / 1000` (src/engine/timing-model.ts). Split the
 * step among its requests, `a / B + b + c (own tokens) / 1000` each: the replica time a request uses. Its own
 * latency is the whole step. Its prefill samples its first token, so n output tokens take n - 1 steps. Over them,
 * with a mean batch B' in [batchSize, nextBatchSize):
 * - latency >= its prefill + (n - 1) (a + b batchSize + c (own prompt + (batchSize - 1) smallest prompt) / 1000), on
 *   the fastest replica;
 * - replica time >= (n - 1) (a / nextBatchSize + b + c prompt / 1000) + prompt / prefill rate (by Jensen: the mean
 *   of 1 / B is at least 1 / B').
 * So every real way to serve a request is at least as slow and at least as costly as one of these, whatever the
 * batches it met: work is in replica-seconds at speed 1.
 *
 * @example
 * ```ts
 * const way = batchWay(request, 4, 6, { fastestSpeed: 1, smallestPrompt: 256, tailS: 0.05 });
 * way.minCompletionS; // e.g. 3.4: in a batch of at least 4
 * way.work;           // e.g. 0.52: replica-seconds, with at most 6 sharing each step
 * ```
 */
export function batchWay(
  request: Pick<WorkloadRequest, "promptTokens" | "outputTokens">,
  batchSize: number,
  nextBatchSize: number,
  fleet: { fastestSpeed: number; smallestPrompt: number; tailS: number },
): BoundWay {
  const t = defaultTimingModel;
  const fastest = { ...t, speed: fleet.fastestSpeed };
  const heldTokens = request.promptTokens + (batchSize - 1) * fleet.smallestPrompt;
  const steps = Math.max(0, request.outputTokens - 1);
  const latencyS =
    prefillSeconds(fastest, { extendTokens: request.promptTokens }) +
    steps * decodeStepSeconds(fastest, { batchSize, tokensInBatch: heldTokens });
  const workS =
    request.promptTokens / t.prefillTokensPerS +
    steps * (t.decodeBaseS / nextBatchSize + t.decodePerRequestS + (t.decodePerKTokenS * request.promptTokens) / 1000);
  return { minCompletionS: latencyS + fleet.tailS, work: workS };
}

/**
 * The batch sizes a batch-aware bound distinguishes: each way covers batches from one to the next (the last, the
 * fleet's `maxOngoingRequests`, alone). Fewer sizes make a smaller program and a looser bound, never a wrong one.
 *
 * @example
 * ```ts
 * batchSizes(8); // [1, 2, 3, 4, 6, 8]
 * ```
 */
export function batchSizes(maxOngoing: number): number[] {
  const sizes = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64].filter((k) => k < maxOngoing);
  return [...sizes, maxOngoing];
}

/**
 * One seed's instance for `curveBound` (src/sim/curve-bound.ts) that sees batching: the oracle's windows as in
 * `boundInstance`, but each request may be served in any batch size ({@link batchWay}), and the budget is the
 * fleet's replica time (its replicas' speeds per second, fewer after the loss) rather than its measured start
 * rate, with a depth of what its slots hold at a full batch. A bound that lets every request finish as fast as
 * alone *and* starts them at a full fleet's rate cannot tell whether serving a backlog slows what arrives behind
 * it; this one can.
 *
 * @example
 * ```ts
 * const instance = batchBoundInstance(scenario, generateWorkload(scenario, capacity), capacity);
 * curveBound(highs, [instance], target).margin; // at most what boundInstance's instance gives, nearly
 * ```
 */
export function batchBoundInstance(
  scenario: Scenario,
  workload: readonly WorkloadRequest[],
  capacityRps: number,
): BoundInstance & { fullBatchRps: number } {
  const model = oracleModel(scenario, workload, capacityRps);
  const speed = fleetSpeed(scenario);
  const fastestSpeed = speed.fastest;
  const smallestPrompt = Math.min(...workload.map((r) => r.promptTokens));
  const sizes = batchSizes(scenario.fleet.maxOngoingRequests);
  const jobs = model.jobs.map((job, i) => {
    const request = workload[i] as WorkloadRequest;
    const fleet = { fastestSpeed, smallestPrompt, tailS: job.tail };
    const ways = sizes.map((k, si) => batchWay(request, k, sizes[si + 1] ?? k, fleet));
    return {
      arrivalS: job.arrival,
      releaseS: job.release,
      deadlineS: job.deadline,
      minCompletionS: (ways[0] as BoundWay).minCompletionS,
      ways,
    };
  });
  const fullBatchWork = jobs.reduce((s, j) => s + (j.ways.at(-1) as BoundWay).work, 0) / Math.max(1, jobs.length);
  return {
    jobs,
    startRateAt: speed.at,
    burstStarts: model.slots * fullBatchWork,
    endS: model.endS,
    fullBatchRps: speed.total / fullBatchWork,
  };
}
