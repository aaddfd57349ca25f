import { type RunningEngineServer, startEngineServer } from "../src/engine/index";
import { measureCapacity } from "../src/sim/capacity";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "../src/sim/policies";
import { scenarioSchema } from "../src/sim/scenario";
import { DEFAULT_POLICY_VARIANTS } from "../src/sim/variants";

/** The shape of one policy's deployment in the end-to-end runs. */
export interface E2eFleetShape {
  replicas: number;
  maxOngoingRequests: number;
  maxQueuedRequests: number;
  queueTimeoutS: number;
}

/**
 * The simulator's capacity (requests/s) of the end-to-end fleet with every request of the given sizes: the same
 * timing model and scheduler as the engines, so offered load can be set as a multiple of it.
 *
 * @example
 * ```ts
 * const capacityRps = measureE2eCapacity({ replicas: 3, maxOngoingRequests: 4, maxQueuedRequests: 16,
 *   queueTimeoutS: 30 }, { promptTokens: 16, outputTokens: 32 });
 * ```
 */
export function measureE2eCapacity(
  shape: Pick<E2eFleetShape, "replicas" | "maxOngoingRequests" | "maxQueuedRequests">,
  sizes: { promptTokens: number; outputTokens: number },
): number {
  return measureCapacity(
    scenarioSchema.parse({
      name: "e2e",
      title: "e2e",
      description: "e2e",
      seed: 1,
      phases: [{ durationS: 1, load: 1 }],
      tailS: 0,
      fleet: {
        replicas: [{ count: shape.replicas, speed: 1 }],
        maxOngoingRequests: shape.maxOngoingRequests,
        maxTotalTokens: 8192,
      },
      router: { maxQueuedRequests: shape.maxQueuedRequests, queueTimeoutS: 30 },
      requests: {
        prompt: { kind: "fixed", tokens: sizes.promptTokens },
        output: { kind: "fixed", tokens: sizes.outputTokens },
      },
      client: { maxRetries: 2 },
    }),
  );
}

/**
 * The policy an end-to-end run names: one of the evaluation's, or a variant of the default
 * (`booked_capacity:<variant id>`, src/sim/variants.ts) that changes only what a deployment's configuration can set
 * (its `booking` block). Throws on an unknown id, and on a variant of the ledger's tunables, which the Worker's
 * configuration does not take.
 *
 * @example
 * ```ts
 * e2ePolicy("booked_capacity:newest-first-order").booking; // { demotedOrder: "newest_first" }
 * ```
 */
export function e2ePolicy(id: string): PolicySpec {
  const policy = EVAL_POLICIES.find((p) => p.id === id);
  if (policy) return policy;
  const variant = id.startsWith(`${DEFAULT_POLICY_ID}:`)
    ? DEFAULT_POLICY_VARIANTS.find((v) => v.id === id.slice(DEFAULT_POLICY_ID.length + 1))
    : undefined;
  if (!variant) throw new Error(`unknown policy ${id}`);
  if (variant.spec.ledger || variant.spec.clairvoyantForecast)
    throw new Error(
      `${id}: only a variant of the booking settings runs end to end (the Worker takes no ledger tunables)`,
    );
  return variant.spec;
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
  const policies = policyIds.map(e2ePolicy);
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
        ...(policy.booking ? { booking: policy.booking } : {}),
      },
    ]),
  );
  return { engines, deployments };
}
