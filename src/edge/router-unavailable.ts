import { DEFAULT_SATURATION_OPTIONS, decideRetryAfter, type LoadSignals } from "../core/retry-after";
import type { ReleaseOutcome } from "../core/router-core";
import type { DeploymentConfig } from "./config";
import { openAIError } from "./openai-error";
import { takePassSlot } from "./pass-through";
import type { ReplicaTarget } from "./replica-probe";

/** What the Worker knows of the load without its router: nothing (the static rung answers). */
const WITHOUT_ROUTER: LoadSignals = {
  queueDepth: 0,
  drainRate: undefined,
  warm: false,
  replicaQueueLengthSum: 0,
  numReplicas: 0,
  maxOngoingRequests: 0,
  backoffStreak: 0,
};

/**
 * What the Worker does when a deployment's router (its Durable Object) cannot answer - overloaded, or
 * unreachable even after one re-acquire - as the operator chose with `routerUnavailable`:
 * - `shed` (the default): 503 with the static Retry-After (`backpressure.retryAfterS`, jittered by
 *   `backpressure.jitter` as every static hint is, so the clients shed together do not come back together; also as
 *   `retry-after-ms`; no header when unset). No estimate exists without the router, so none is invented.
 * - `pass`: forward to a replica picked at random, at most `maxOngoingRequests` at once per Worker isolate
 *   (blind routing, bounded); past that bound, shed as above.
 * Either way one structured log line records it (`spillway.router_unavailable`). `random` (uniform in [0, 1)) draws
 * both the replica passed to and the jitter of the hint; the Worker passes nothing (`Math.random`).
 *
 * @example
 * ```ts
 * const decision = routerUnavailable(deploymentConfig, "llama", { cause: "overloaded", message: "..." });
 * if ("response" in decision) return decision.response;
 * forwardTo(decision.replica); // then decision.release(replicaFailed)
 * ```
 */
export function routerUnavailable(
  config: DeploymentConfig,
  deployment: string,
  why: { cause: "overloaded" | "unreachable"; message: string },
  random: () => number = Math.random,
): { response: Response } | { replica: string; release: (replicaFailed: ReleaseOutcome) => void } {
  const passSlot =
    config.routerUnavailable === "pass" ? takePassSlot(deployment, config.maxOngoingRequests) : undefined;
  console.log(
    JSON.stringify({
      event: "spillway.router_unavailable",
      deployment,
      cause: why.cause,
      action: passSlot ? "pass" : "shed",
      message: why.message,
    }),
  );
  if (passSlot) {
    // The injected draw, as for the hint's jitter below: a seeded caller replays the pick (Math.random would not).
    const replica = (config.replicas[Math.floor(random() * config.replicas.length)] as ReplicaTarget).url;
    return { replica, release: () => passSlot() };
  }
  const headers: Record<string, string> = {};
  const { retryAfterS, jitter } = config.backpressure;
  const hint = decideRetryAfter(
    WITHOUT_ROUTER,
    { retryAfterPolicy: "static", retryAfterS, jitter, saturation: DEFAULT_SATURATION_OPTIONS },
    random,
  );
  if (hint.retryAfterS !== undefined && hint.retryAfterMs !== undefined) {
    headers["retry-after"] = String(hint.retryAfterS);
    headers["retry-after-ms"] = String(hint.retryAfterMs);
  }
  return {
    response: openAIError(
      503,
      `The router of deployment ${deployment} is unavailable; retry later`,
      "server_error",
      "service_unavailable",
      headers,
    ),
  };
}
