import type { SpillwayConfigInput } from "../../src/edge/config";

/** The admin token of the workerd tests' stats endpoint. */
export const TEST_ADMIN_TOKEN = "test-admin-token";
/** The secret the workerd tests' Worker signs with; fake replicas named `signed-*` refuse anything else. */
export const TEST_SIGNING_SECRET = "test-signing-secret";

/** The API key the fake backends with ids `key-*` require (vLLM's `--api-key`). */
export const TEST_UPSTREAM_KEY = "test-upstream-key";
/**
 * The gateway key in the URL of test/edge/replica-url-credentials.test.ts's replicas (`?key=...`): logs, metrics,
 * stats and the overview must never show it.
 */
export const TEST_REPLICA_URL_KEY = "replica-url-secret-key";
/** API keys of the workerd tests' tenants (their SHA-256 digests are in the configuration, never the keys). */
export const TEST_KEYS = {
  /** 3 requests per minute. */
  small: "sk-test-small",
  /** 1000 tokens per minute. */
  tokens: "sk-test-tokens",
  /** May ask for `service_tier: "priority"`. */
  priority: "sk-test-priority",
  /** Two plain tenants sharing a deployment. */
  alpha: "sk-test-alpha",
  beta: "sk-test-beta",
  /** 600 requests and 6,000,000 tokens per minute: large enough to be served from quota leases. */
  bulk: "sk-test-bulk",
  /** test/edge/client-answers.test.ts alone: 1 request per minute, and 100 tokens per minute. */
  answersQuota: "sk-test-answers-quota",
  answersTokens: "sk-test-answers-tokens",
} as const;

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
  const b = (kind: "vllm" | "sglang" | "tgi", id: string) => `${fake}/b/${kind}/${id}`;
  const tight = { maxOngoingRequests: 1, maxQueuedRequests: 1 };
  return {
    logRejections: false,
    maxBodyBytes: 64 * 1024,
    // Requests without a key stay anonymous (no quota), so every other test is unaffected.
    tenants: {
      keys: {
        // printf %s sk-test-small | sha256sum
        "3134cd0eb6762a6e6925212c23d9e67df53b8952a71847ca7a7aab457f3b7927": { name: "small", requestsPerMinute: 3 },
        "8664f7ee03dd46df38fec62d9e40fac88a74f67a8a7613af74474bf4356050cf": { name: "tokens", tokensPerMinute: 1000 },
        "5a44ee831beb11795ca9e062551a912f66aaa8043e59ded9eaf05a337784dec8": { name: "alpha" },
        "01eda994ae6da734cfc76470ad873a28d941acdeec97ed91c3cc0109c471fd1e": {
          name: "bulk",
          requestsPerMinute: 600,
          tokensPerMinute: 6_000_000,
        },
        "626c85f21d77b087cbbba33378b2da9f7d02b084f1af1ea9f8a113861926e62c": { name: "beta" },
        // printf %s sk-test-answers-quota | sha256sum; and sk-test-answers-tokens
        d127d2c037e602d1b9c5c89e802335aa85503cde5ba196b63666c217c49ee506: {
          name: "answers-quota",
          requestsPerMinute: 1,
        },
        b0b6d9bdff718dcf4c70c3b299d09b3e02603748ea814400e62b75c1045cc809: {
          name: "answers-tokens",
          tokensPerMinute: 100,
        },
        "24a2eb576e49e0e46359e03b11e29841d55c367c8f26b9b1f7afb1e50eca6f54": {
          name: "prio",
          priority: "batch",
          allowPriorityTier: true,
        },
      },
    },
    deployments: {
      "ray-default": { replicas: [r("ray-default")], ...tight },
      "ray-503-static": {
        replicas: [r("ray-503-static")],
        ...tight,
        backpressure: { statusCode: 503, retryAfterPolicy: "static", retryAfterS: 5 },
      },
      fifo: { replicas: [r("fifo")], maxOngoingRequests: 1, maxQueuedRequests: 10 },
      "shorter-queue": { replicas: [r("sq-long"), r("sq-short")], maxOngoingRequests: 10 },
      "release-batch": { replicas: [r("rb-a"), r("rb-b")], maxOngoingRequests: 4, maxQueuedRequests: 64 },
      "hand-off": { replicas: [r("ho-a")], maxOngoingRequests: 2, maxQueuedRequests: 64, slotHandoffMs: 1000 },
      "hand-off-protocol": { replicas: [r("hp-a")], maxOngoingRequests: 3, slotHandoffMs: 1000 },
      "hand-off-hinted": {
        replicas: [r("hh-a")],
        ...tight,
        slotHandoffMs: 1000,
        backpressure: { retryAfterPolicy: "static", retryAfterS: 30 },
      },
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
      // test/edge/router-interleavings.test.ts.
      "interleave-cancel": { replicas: [r("ilc")], slotHandoffMs: 1000 },
      "interleave-reacquire": { replicas: [{ url: b("vllm", "ilr"), load: "none" }], maxOngoingRequests: 2 },
      hinted: { replicas: [r("hinted")], locationHint: "weur" },
      tenants: { replicas: [r("tenants")], maxOngoingRequests: 4 },
      fair: { replicas: [r("fair")], maxOngoingRequests: 1, maxQueuedRequests: 2 },
      "midstream-kill": { replicas: [r("mk")], maxOngoingRequests: 2 },
      "midstream-kill-partial": { replicas: [r("mkp")], maxOngoingRequests: 2 },
      "json-kill": { replicas: [r("jk")], maxOngoingRequests: 2 },
      hang: { replicas: [r("hang")], maxOngoingRequests: 1, upstreamTimeoutS: 0.3 },
      "stream-hang": { replicas: [r("stream-hang")], maxOngoingRequests: 1, upstreamTimeoutS: 0.3 },
      "stream-stall": { replicas: [r("stream-stall")], maxOngoingRequests: 1, upstreamIdleTimeoutS: 0.3 },
      "stream-stall-partial": {
        replicas: [r("stream-stall-partial")],
        maxOngoingRequests: 1,
        upstreamIdleTimeoutS: 0.3,
      },
      "json-stall": { replicas: [r("json-stall")], maxOngoingRequests: 1, upstreamIdleTimeoutS: 0.3 },
      draining: { replicas: [r("dr-a"), r("dr-b")], maxOngoingRequests: 2 },
      "replica-429": { replicas: [r("rf-a"), r("rf-b")], maxOngoingRequests: 2 },
      "slow-probe": { replicas: [r("sp-slow"), r("sp-fast")], maxOngoingRequests: 1 },
      signed: { replicas: [r("signed-a")] },
      reset: { replicas: [r("reset")], maxOngoingRequests: 1, maxQueuedRequests: 20, queueTimeoutS: 60 },
      "unavailable-shed": { replicas: [r("us")], backpressure: { retryAfterS: 4.5 } },
      "unavailable-pass": { replicas: [r("up")], maxOngoingRequests: 2, routerUnavailable: "pass" },
      "openai-backends": {
        replicas: [
          { url: b("vllm", "ob"), load: "vllm", model: "m" },
          { url: b("sglang", "ob"), load: "sglang" },
          { url: b("tgi", "ob"), load: "tgi" },
        ],
        maxOngoingRequests: 3,
        maxQueuedRequests: 12,
        backpressure: { retryAfterS: 7 },
        estimator: { intervalS: 0.2 },
      },
      "counted-only": {
        replicas: [{ url: b("vllm", "co"), load: "none" }],
        maxOngoingRequests: 2,
        maxQueuedRequests: 4,
      },
      "upstream-key": {
        replicas: [{ url: b("vllm", "key-uk"), load: "vllm" }],
        upstreamApiKeySecret: "TEST_UPSTREAM_KEY",
      },
      "missing-key": { replicas: [{ url: b("vllm", "key-mk"), load: "vllm" }], upstreamApiKeySecret: "NOT_BOUND" },
      // test/edge/client-answers.test.ts: one deployment per case of the README's table, shared with no other file.
      "answers-429": { replicas: [r("answers-429")], ...tight },
      "no-queue": { replicas: [r("no-queue")], maxOngoingRequests: 1, maxQueuedRequests: 0 },
      "answers-503": {
        replicas: [r("answers-503")],
        ...tight,
        backpressure: { statusCode: 503, retryAfterPolicy: "static", retryAfterS: 5 },
      },
      "answers-tenant": { replicas: [r("answers-tenant")], ...tight, backpressure: { retryAfterS: 5 } },
      "answers-dead": {
        replicas: [
          { url: "http://127.0.0.1:1/answers-dead-a", load: "none" },
          { url: "http://127.0.0.1:1/answers-dead-b", load: "none" },
        ],
        backpressure: { retryAfterS: 9 },
      },
      "answers-hang": { replicas: [r("answers-hang")], maxOngoingRequests: 1, upstreamTimeoutS: 0.3 },
      "answers-kill": { replicas: [r("answers-kill")], maxOngoingRequests: 2 },
      "answers-401": { replicas: [{ url: r("unauthorized-a"), load: "none" }] },
      "answers-stall": { replicas: [r("answers-stall")], maxOngoingRequests: 1, upstreamIdleTimeoutS: 0.3 },
      // Never probed, so the router does send to the dead one: what the middleware's connectAttempts is for.
      "dead-only": { replicas: [{ url: "http://127.0.0.1:1/dead", load: "none" }] },
      "dead-then-live": {
        replicas: [
          { url: "http://127.0.0.1:1/dead", load: "none" },
          { url: b("vllm", "dtl"), load: "none" },
        ],
      },
      // test/edge/probe-log.test.ts: an SGLang server configured as vLLM, and a replica that goes down and comes back.
      "probe-log-wrong-load": {
        replicas: [{ url: b("sglang", "plw"), load: "vllm" }],
        backpressure: { retryAfterS: 5 },
      },
      "probe-log-down-up": { replicas: [r("pl-du")], maxOngoingRequests: 1, backpressure: { retryAfterS: 5 } },
      // A gateway's key in the replica's URL (test/edge/replica-url-credentials.test.ts).
      "url-key": { replicas: [`${r("url-key")}?key=${TEST_REPLICA_URL_KEY}`], maxOngoingRequests: 2 },
      "url-key-hang": {
        replicas: [`${r("url-key-hang")}?key=${TEST_REPLICA_URL_KEY}`],
        maxOngoingRequests: 1,
        upstreamTimeoutS: 0.3,
      },
      restart: {
        replicas: [r("restart")],
        maxOngoingRequests: 1,
        maxQueuedRequests: 20,
        // The restart test checks hints against the RFC's drain formula, so it names that policy.
        backpressure: { retryAfterPolicy: "router_queue_drain_rate", retryAfterS: 7 },
        estimator: { intervalS: 0.2 },
      },
    },
  };
}
