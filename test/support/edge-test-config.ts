import type { SpillwayConfigInput } from "../../src/edge/config";

/** The admin token of the workerd tests' stats endpoint. */
export const TEST_ADMIN_TOKEN = "test-admin-token";
/** The secret the workerd tests' Worker signs with; fake replicas named `signed-*` refuse anything else. */
export const TEST_SIGNING_SECRET = "test-signing-secret";

/**
 * The deployments the workerd tests use: each test gets its own deployment and its own virtual replicas on
 * the fake engine, so no two tests share a router or a replica.
 *
 * @example
 * ```ts
 * const config = edgeTestConfig("http://127.0.0.1:4321");
 * ```
 */
export function edgeTestConfig(fake: string): SpillwayConfigInput {
  const r = (id: string) => `${fake}/r/${id}`;
  const tight = { maxOngoingRequests: 1, maxQueuedRequests: 1 };
  return {
    logRejections: false,
    maxBodyBytes: 64 * 1024,
    deployments: {
      "ray-default": { replicas: [r("ray-default")], ...tight },
      "ray-503-static": {
        replicas: [r("ray-503-static")],
        ...tight,
        backpressure: { statusCode: 503, retryAfterPolicy: "static", retryAfterS: 5 },
      },
      fifo: { replicas: [r("fifo")], maxOngoingRequests: 1, maxQueuedRequests: 10 },
      "shorter-queue": { replicas: [r("sq-long"), r("sq-short")], maxOngoingRequests: 10 },
      computed: {
        replicas: [r("computed")],
        maxOngoingRequests: 1,
        maxQueuedRequests: 30,
        // Ray's cases check the RFC's drain formula, so this deployment names it (the default is booked_capacity).
        backpressure: { retryAfterPolicy: "router_queue_drain_rate", retryAfterS: 7 },
        estimator: { intervalS: 0.2 },
      },
      streaming: { replicas: [r("streaming")], maxOngoingRequests: 4 },
      "disconnect-queued": { replicas: [r("dq")], maxOngoingRequests: 1, maxQueuedRequests: 5 },
      "disconnect-streaming": { replicas: [r("ds")], maxOngoingRequests: 1 },
      failover: { replicas: [r("fo-a"), r("fo-b"), r("fo-c")], maxOngoingRequests: 4 },
      "all-down": { replicas: ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b"], backpressure: { retryAfterS: 9 } },
      sharded: { replicas: [r("sharded")], maxOngoingRequests: 8, routerShards: 4 },
      misc: { replicas: [r("misc")] },
      "midstream-kill": { replicas: [r("mk")], maxOngoingRequests: 2 },
      "json-kill": { replicas: [r("jk")], maxOngoingRequests: 2 },
      hang: { replicas: [r("hang")], maxOngoingRequests: 1, upstreamTimeoutS: 0.3 },
      "slow-probe": { replicas: [r("sp-slow"), r("sp-fast")], maxOngoingRequests: 1 },
      signed: { replicas: [r("signed-a")] },
      restart: {
        replicas: [r("restart")],
        maxOngoingRequests: 1,
        maxQueuedRequests: 20,
        backpressure: { retryAfterS: 7 },
        estimator: { intervalS: 0.2 },
      },
    },
  };
}
