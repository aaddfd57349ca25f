import { describe, expect, it } from "vitest";
import { RETRY_AFTER_POLICIES } from "../../../src/core/retry-after";
import { ConfigError, parseConfig, routerOptionsFor } from "../../../src/edge/config";

// parseConfig, field by field: every default, every enum value, every bound (just inside and just outside), wrong
// types, unknown keys; every error names its field.
const R = "http://127.0.0.1:8001";
const withDeployment = (fields: Record<string, unknown>) => ({ deployments: { llama: { replicas: [R], ...fields } } });
const deployment = (fields: Record<string, unknown>) => parseConfig(withDeployment(fields)).deployments.llama;

/** The ConfigError thrown for `input`; fails the test if none is thrown. */
function errorOf(input: unknown): string {
  try {
    parseConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(input)}`);
}

describe("parseConfig, field by field", () => {
  it("applies every default", () => {
    const config = parseConfig({ deployments: { llama: { replicas: [R] } } });
    expect(config).toEqual({
      deployments: {
        llama: {
          replicas: [{ url: R, load: "spillway" }],
          maxOngoingRequests: 5,
          maxQueuedRequests: 100,
          queueTimeoutS: 30,
          leaseTimeoutS: 600,
          upstreamTimeoutS: 300,
          upstreamIdleTimeoutS: 300,
          routerShards: 1,
          slotHandoffMs: 0,
          routerUnavailable: "shed",
          backpressure: { statusCode: 429, retryAfterPolicy: "booked_capacity", jitter: 0.2 },
          booking: {
            queueDelayTargetS: 1,
            standingIntervalS: 30,
            standingTimeoutS: null,
            maxHeldRoomShare: 0,
            drainingOfferedShare: 1,
            lastChanceAfterRefusals: null,
            demoteAfterS: 3,
            demotedOrder: "next_horizon",
            demotedHeadroomSlots: 0,
            demotedServiceS: null,
            demotedTimeoutS: 40,
            demotedQuietTimeoutS: 120,
            freshOrder: "arrival",
            demotedShare: 0,
            freshNewestShare: 1,
            freshNewestWhen: "standing",
            demotedFirstUnderS: null,
            drainingIgnoresDemoted: false,
            forgetRefusalsWhenQueued: false,
            freshPastTargetShare: null,
            sdkClientsLeaveShare: 0.05,
          },
          tenantHeadroomSlots: 1,
          estimator: {
            alpha: 0.3,
            intervalS: 1,
            warmupSamples: 3,
            backoffStreakSaturation: 5,
            occupancyWeight: 0.25,
            backoffWeight: 0.25,
          },
        },
      },
      maxBodyBytes: 16 * 1024 * 1024,
      logRejections: true,
      tenants: {
        requireKey: false,
        anonymous: { name: "anonymous", weight: 1, priority: "interactive", allowPriorityTier: false },
        keys: {},
        kvCacheTtlS: 30,
        defaultMaxTokens: 1024,
        quotaLeaseMs: 1000,
      },
    });
  });

  it("accepts a JSON string and refuses broken JSON by name", () => {
    expect(parseConfig(JSON.stringify(withDeployment({}))).deployments.llama?.replicas).toEqual([
      { url: R, load: "spillway" },
    ]);
    expect(errorOf("{not json")).toMatch(/^SPILLWAY_CONFIG is not valid JSON/);
  });

  it("accepts every enum value and refuses others, naming the field", () => {
    for (const mode of ["shed", "pass"]) expect(deployment({ routerUnavailable: mode })?.routerUnavailable).toBe(mode);
    expect(errorOf(withDeployment({ routerUnavailable: "queue" }))).toMatch(/deployments\.llama\.routerUnavailable: /);
    for (const policy of RETRY_AFTER_POLICIES)
      expect(deployment({ backpressure: { retryAfterPolicy: policy } })?.backpressure.retryAfterPolicy).toBe(policy);
    expect(errorOf(withDeployment({ backpressure: { retryAfterPolicy: "exponential" } }))).toMatch(
      /deployments\.llama\.backpressure\.retryAfterPolicy: .*"router_queue_drain_rate"/,
    );
    for (const status of [429, 503])
      expect(deployment({ backpressure: { statusCode: status } })?.backpressure.statusCode).toBe(status);
    for (const status of [500, 200, "429"])
      expect(errorOf(withDeployment({ backpressure: { statusCode: status } }))).toMatch(
        /deployments\.llama\.backpressure\.statusCode: /,
      );
  });

  // [path under the deployment, lowest accepted, highest accepted (or null), values refused]
  const bounds: Array<[string, number, number | null, unknown[]]> = [
    ["maxOngoingRequests", 1, null, [0, 1.5, "5", null]],
    ["maxQueuedRequests", -1, null, [-2, 2.5, "100", true]],
    ["queueTimeoutS", 0.001, 3600, [0, -1, 3601, "30"]],
    ["leaseTimeoutS", 0.001, 86_400, [0, 86_401, "600"]],
    ["upstreamTimeoutS", 0.001, 3600, [0, 3601, "300"]],
    ["upstreamIdleTimeoutS", 0.001, 3600, [0, -1, 3601, "300", null]],
    ["routerShards", 1, 256, [0, 257, 1.5, "1"]],
    ["slotHandoffMs", 0, 10_000, [-1, 10_001, 2.5, "1000"]],
    ["backpressure.retryAfterS", 0, null, [-0.5, "5"]],
    ["backpressure.jitter", 0, 1, [-0.1, 1.01, "0.2"]],
    ["estimator.alpha", 0.001, 1, [0, 1.1, "0.3"]],
    ["estimator.intervalS", 0.001, 3600, [0, 3601]],
    ["estimator.warmupSamples", 1, 1000, [0, 1001, 2.5]],
    ["estimator.backoffStreakSaturation", 1, null, [0, 1.5]],
    ["estimator.occupancyWeight", 0, 10, [-0.1, 10.1]],
    ["estimator.backoffWeight", 0, 10, [-0.1, 10.1]],
  ];
  const nest = (path: string, value: unknown): Record<string, unknown> => {
    const [head, tail] = path.split(".") as [string, string | undefined];
    return tail === undefined ? { [head]: value } : { [head]: { [tail]: value } };
  };
  const read = (d: unknown, path: string) => path.split(".").reduce((o, k) => (o as Record<string, unknown>)[k], d);

  it.each(bounds)("%s: accepts its bounds and names itself when refusing", (path, low, high, refused) => {
    expect(read(deployment(nest(path, low)), path)).toBe(low);
    if (high !== null) expect(read(deployment(nest(path, high)), path)).toBe(high);
    for (const value of refused) {
      const message = errorOf(withDeployment(nest(path, value)));
      expect(message).toContain(`deployments.llama.${path}: `);
    }
  });

  it("maxQueuedRequests -1 is unlimited, as Ray's max_queued_requests", () => {
    const options = routerOptionsFor(deployment({ maxQueuedRequests: -1 }) as never);
    expect(options.maxQueuedRequests).toBe(-1);
  });

  it("top-level fields: maxBodyBytes and logRejections", () => {
    expect(parseConfig({ ...withDeployment({}), maxBodyBytes: 1, logRejections: false })).toMatchObject({
      maxBodyBytes: 1,
      logRejections: false,
    });
    expect(errorOf({ ...withDeployment({}), maxBodyBytes: 0 })).toMatch(/^invalid SPILLWAY_CONFIG: maxBodyBytes: /);
    expect(errorOf({ ...withDeployment({}), logRejections: "yes" })).toMatch(/logRejections: /);
  });

  it("maxBodyBytes: at most 32 MiB, with the reason (the edge's copies of a body in a 128 MB isolate)", () => {
    expect(parseConfig({ ...withDeployment({}), maxBodyBytes: 32 * 1024 * 1024 }).maxBodyBytes).toBe(33554432);
    // Before: any size was taken, and a body near it took the isolate down with it.
    expect(errorOf({ ...withDeployment({}), maxBodyBytes: 32 * 1024 * 1024 + 1 })).toMatch(
      /^invalid SPILLWAY_CONFIG: maxBodyBytes: at most 33554432 \(32 MiB\): .*128 MB/,
    );
  });

  it("replicas: at least one, each an http(s) URL", () => {
    expect(errorOf(withDeployment({ replicas: [] }))).toMatch(
      /deployments\.llama\.replicas: needs at least one replica/,
    );
    expect(errorOf(withDeployment({ replicas: ["ftp://x"] }))).toMatch(
      /deployments\.llama\.replicas\.0: must be an http\(s\) URL/,
    );
    expect(errorOf(withDeployment({ replicas: "http://x" }))).toMatch(/deployments\.llama\.replicas: /);
    expect(errorOf({ deployments: { llama: {} } })).toMatch(/deployments\.llama\.replicas: /);
  });

  it("refuses wrong shapes and unknown keys, naming where they are", () => {
    expect(errorOf(42)).toMatch(/\(root\): /);
    expect(errorOf({})).toMatch(/deployments: /);
    expect(errorOf({ deployments: {} })).toMatch(/deployments: needs at least one deployment/);
    expect(errorOf({ deployments: [] })).toMatch(/deployments: /);
    expect(errorOf(withDeployment({ maxQueuedRequestz: 3 }))).toMatch(/deployments\.llama: .*maxQueuedRequestz/);
    expect(errorOf(withDeployment({ backpressure: { policy: "static" } }))).toMatch(
      /deployments\.llama\.backpressure: .*policy/,
    );
    expect(errorOf({ ...withDeployment({}), extra: 1 })).toMatch(/\(root\): .*extra/);
    // Every bad field is named in one message.
    const both = errorOf(withDeployment({ maxOngoingRequests: 0, routerShards: 0 }));
    expect(both).toMatch(/maxOngoingRequests: .*; .*routerShards: /);
  });

  it("says why a record's key is refused, not only that it is (a tenant key that is not lower-case SHA-256 hex)", () => {
    const upper = "D65DBED0E4FE9A841DA92D82A1B8A547F77050F26679EC1E3B664C30FA346B0C";
    for (const key of [upper, "<sha256 of sk-acme-...>", "sk-acme-123"])
      expect(errorOf({ ...withDeployment({}), tenants: { keys: { [key]: { name: "acme" } } } })).toBe(
        `invalid SPILLWAY_CONFIG: tenants.keys.${key}: keys are SHA-256 digests in lower-case hex`,
      );
    expect(errorOf({ deployments: { "": { replicas: [R] } } })).toMatch(/^invalid SPILLWAY_CONFIG: deployments\.: \S/);
  });

  it("says what a field of a union takes, where zod says only 'Invalid input'", () => {
    // An operator who wrote `"statusCode": 500` or `"load": "vLLM"` read only "Invalid input" (under wrangler dev,
    // in the Worker's error line), which names neither the values allowed nor, for a replica, the bad field.
    expect(errorOf(withDeployment({ backpressure: { statusCode: 500 } }))).toBe(
      "invalid SPILLWAY_CONFIG: deployments.llama.backpressure.statusCode: Invalid input: expected one of 429|503",
    );
    expect(errorOf(withDeployment({ replicas: [{ url: R, load: "vLLM" }] }))).toBe(
      'invalid SPILLWAY_CONFIG: deployments.llama.replicas.0.load: Invalid option: expected one of "spillway"|"vllm"|"sglang"|"tgi"|"none"',
    );
    // Every problem of the one entry the input's shape picks, each at its own path.
    expect(errorOf(withDeployment({ replicas: [{ url: "ftp://x", load: "vLLM", extra: 1 }] }))).toBe(
      "invalid SPILLWAY_CONFIG: deployments.llama.replicas.0.url: must be an http(s) URL; " +
        'deployments.llama.replicas.0.load: Invalid option: expected one of "spillway"|"vllm"|"sglang"|"tgi"|"none"; ' +
        'deployments.llama.replicas.0: Unrecognized key: "extra"',
    );
    // Neither shape: both named.
    expect(errorOf(withDeployment({ replicas: [5] }))).toBe(
      "invalid SPILLWAY_CONFIG: deployments.llama.replicas.0: Invalid input: expected an http(s) URL or an object { url, load, model }",
    );
  });

  it("refuses a deployment named __proto__ rather than dropping it without a word", () => {
    // JSON.parse makes `__proto__` an ordinary key; a record built by assignment would lose it (and with it the
    // deployment), leaving the other deployments, or "needs at least one deployment", to puzzle the operator.
    const replicas = ["http://127.0.0.1:8001"];
    for (const source of [
      `{"deployments":{"__proto__":{"replicas":["http://127.0.0.1:8001"]},"llama":{"replicas":["http://127.0.0.1:8002"]}}}`,
      JSON.parse(`{"deployments":{"__proto__":{"replicas":["http://127.0.0.1:8001"]}}}`),
    ])
      expect(() => parseConfig(source)).toThrow(/deployments\.__proto__: `__proto__` cannot name a deployment/);
    expect(Object.keys(parseConfig({ deployments: { proto: { replicas } } }).deployments)).toEqual(["proto"]);
  });
});
