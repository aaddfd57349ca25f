import { type RunningEngineServer, startEngineServer } from "../src/engine/index";
import { EVAL_POLICIES } from "../src/sim/policies";

/** The shape of one policy's deployment in the end-to-end runs. */
export interface E2eFleetShape {
  replicas: number;
  maxOngoingRequests: number;
  maxQueuedRequests: number;
  queueTimeoutS: number;
}

/**
 * The end-to-end runs' fleet: an engine serves one model name, so each policy's deployment (`e2e-<policy id>`) gets
 * its own engines (idle until its run), and the deployments that `SPILLWAY_CONFIG` names. Throws on an unknown
 * policy id. Both `eval/e2e.ts` and `eval/e2e-openai.ts` build their stack with it.
 *
 * @example
 * ```ts
 * const { engines, deployments } = await startE2eFleet(["static-30"], { replicas: 3, maxOngoingRequests: 4,
 *   maxQueuedRequests: 16, queueTimeoutS: 30 });
 * ```
 */
export async function startE2eFleet(
  policyIds: string[],
  shape: E2eFleetShape,
): Promise<{ engines: RunningEngineServer[]; deployments: Record<string, unknown> }> {
  const policies = policyIds.map((id) => {
    const policy = EVAL_POLICIES.find((p) => p.id === id);
    if (!policy) throw new Error(`unknown policy ${id}`);
    return policy;
  });
  const engines = await Promise.all(
    policyIds.flatMap((id) =>
      Array.from({ length: shape.replicas }, () =>
        startEngineServer({
          port: 0,
          host: "127.0.0.1",
          servedModelName: `e2e-${id}`,
          maxTotalTokens: 8192,
          disableRadixCache: true,
          logLevel: "error",
          accessLog: false,
          log: () => {},
        }),
      ),
    ),
  );
  const deployments = Object.fromEntries(
    policies.map((policy, i) => [
      `e2e-${policyIds[i]}`,
      {
        replicas: engines.slice(i * shape.replicas, (i + 1) * shape.replicas).map((e) => e.url),
        maxOngoingRequests: shape.maxOngoingRequests,
        maxQueuedRequests: shape.maxQueuedRequests,
        queueTimeoutS: shape.queueTimeoutS,
        backpressure: {
          retryAfterPolicy: policy.retryAfterPolicy,
          ...(policy.retryAfterS !== undefined ? { retryAfterS: policy.retryAfterS } : {}),
        },
      },
    ]),
  );
  return { engines, deployments };
}
