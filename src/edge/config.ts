import { z } from "zod";
import { DEFAULT_DRAIN_RATE_OPTIONS } from "../core/drain-rate";
import { DEFAULT_SATURATION_OPTIONS, RETRY_AFTER_POLICIES } from "../core/retry-after";
import { DEFAULT_BOOKING_ADMISSION, type RouterOptions } from "../core/router-core";

const backpressureSchema = z.strictObject({
  /** Status of a backpressure rejection (Ray's default is 503; ours 429, which SDKs retry). */
  statusCode: z.union([z.literal(429), z.literal(503)]).default(429),
  /** `booked_capacity` by default: it serves the most requests soonest (docs/evaluation.md); `static` is Ray's. */
  retryAfterPolicy: z.enum(RETRY_AFTER_POLICIES).default("booked_capacity"),
  /** Static Retry-After (seconds): the policy `static`, and the fallback of the computed policies. */
  retryAfterS: z.number().min(0).optional(),
  jitter: z.number().min(0).max(1).default(0.2),
});

/** Implementation constants of the estimator, exposed for tuning (spec defaults). */
const estimatorSchema = z.strictObject({
  alpha: z.number().gt(0).max(1).default(DEFAULT_DRAIN_RATE_OPTIONS.alpha),
  intervalS: z.number().gt(0).max(3600).default(DEFAULT_DRAIN_RATE_OPTIONS.intervalS),
  warmupSamples: z.int().min(1).max(1000).default(DEFAULT_DRAIN_RATE_OPTIONS.warmupSamples),
  backoffStreakSaturation: z.int().min(1).default(DEFAULT_SATURATION_OPTIONS.backoffStreakSaturation),
  occupancyWeight: z.number().min(0).max(10).default(DEFAULT_SATURATION_OPTIONS.occupancyWeight),
  backoffWeight: z.number().min(0).max(10).default(DEFAULT_SATURATION_OPTIONS.backoffWeight),
});

/** Admission of the `booked_capacity` policy (issue 15): its own small block, ignored by the other policies. */
const bookingSchema = z.strictObject({
  /** CoDel-style queue-delay target, seconds: a request that would wait longer is refused at once with a booked hint. */
  queueDelayTargetS: z
    .number()
    .gt(0)
    .max(3600)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.queueDelayTargetS ?? null),
  /** The target applies once the queue has stood above it this long, until the queue empties (CoDel's interval). */
  standingIntervalS: z.number().min(0).max(3600).default(DEFAULT_BOOKING_ADMISSION.standingIntervalS),
  /** Share of the queue's limit that promised retries may hold. */
  maxHeldRoomShare: z.number().min(0).max(1).default(DEFAULT_BOOKING_ADMISSION.maxHeldRoomShare),
});

const replicaUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

const deploymentSchema = z.strictObject({
  /** Base URLs of the engine servers serving this deployment. */
  replicas: z.array(replicaUrl).min(1, "needs at least one replica"),
  /** A replica accepts a request while its queue length is below this (Ray's `max_ongoing_requests`). */
  maxOngoingRequests: z.int().min(1).default(5),
  /** Requests that may wait for a replica at one router (Ray's `max_queued_requests`); more are shed. */
  maxQueuedRequests: z.int().min(0).default(100),
  /** A request that waited this long for a replica is shed. */
  queueTimeoutS: z.number().gt(0).max(3600).default(30),
  /** A slot whose Worker never released it (killed mid-request) is reclaimed after this long. */
  leaseTimeoutS: z.number().gt(0).max(86_400).default(600),
  /** Deadline for a replica's response headers; an engine that accepts and hangs ends in 504. */
  upstreamTimeoutS: z.number().gt(0).max(3600).default(300),
  /** Routers (Durable Objects) for this deployment, each with its own queue and estimator. */
  routerShards: z.int().min(1).max(256).default(1),
  backpressure: backpressureSchema.default(backpressureSchema.parse({})),
  estimator: estimatorSchema.default(estimatorSchema.parse({})),
  booking: bookingSchema.default(bookingSchema.parse({})),
});

const configSchema = z.strictObject({
  deployments: z
    .record(z.string().min(1), deploymentSchema)
    .refine((d) => Object.keys(d).length > 0, "needs at least one deployment"),
  /** Request bodies larger than this are refused with 413 before they take a queue place. */
  maxBodyBytes: z
    .int()
    .min(1)
    .default(1024 * 1024),
  /** One structured log line per rejection (the RFC's evidence); turn off only for benchmarks. */
  logRejections: z.boolean().default(true),
});

/** The validated configuration document. */
export type SpillwayConfig = z.output<typeof configSchema>;
/** One deployment's validated configuration. */
export type DeploymentConfig = z.output<typeof deploymentSchema>;
/** What a user writes (every field with a default may be left out). */
export type SpillwayConfigInput = z.input<typeof configSchema>;

/** A configuration that failed validation; the message names every bad field. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses and validates the configuration document (a JSON string or an object), applying defaults.
 *
 * @example
 * ```ts
 * const config = parseConfig('{"deployments":{"llama":{"replicas":["http://127.0.0.1:8001"]}}}');
 * config.deployments.llama.maxOngoingRequests; // 5
 * parseConfig({ deployments: { llama: { replicas: [] } } }); // throws ConfigError: deployments.llama.replicas: ...
 * ```
 */
export function parseConfig(source: string | unknown): SpillwayConfig {
  let raw: unknown = source;
  if (typeof source === "string") {
    try {
      raw = JSON.parse(source);
    } catch (error) {
      throw new ConfigError(`SPILLWAY_CONFIG is not valid JSON: ${(error as Error).message}`);
    }
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw new ConfigError(`invalid SPILLWAY_CONFIG: ${problems.join("; ")}`);
  }
  return result.data;
}

/**
 * The router options of one deployment, from its validated configuration.
 *
 * @example
 * ```ts
 * const options = routerOptionsFor(parseConfig(raw).deployments.llama);
 * ```
 */
export function routerOptionsFor(deployment: DeploymentConfig): RouterOptions {
  const { backpressure, estimator } = deployment;
  return {
    replicas: deployment.replicas,
    maxOngoingRequests: deployment.maxOngoingRequests,
    maxQueuedRequests: deployment.maxQueuedRequests,
    queueTimeoutMs: deployment.queueTimeoutS * 1000,
    leaseTimeoutMs: deployment.leaseTimeoutS * 1000,
    statusCode: backpressure.statusCode,
    retryAfter: {
      retryAfterPolicy: backpressure.retryAfterPolicy,
      retryAfterS: backpressure.retryAfterS,
      jitter: backpressure.jitter,
      saturation: {
        backoffStreakSaturation: estimator.backoffStreakSaturation,
        occupancyWeight: estimator.occupancyWeight,
        backoffWeight: estimator.backoffWeight,
      },
    },
    drainRate: { alpha: estimator.alpha, intervalS: estimator.intervalS, warmupSamples: estimator.warmupSamples },
    booking: {
      queueDelayTargetS: deployment.booking.queueDelayTargetS ?? undefined,
      standingIntervalS: deployment.booking.standingIntervalS,
      maxHeldRoomShare: deployment.booking.maxHeldRoomShare,
    },
  };
}

let cached: { raw: string; config: SpillwayConfig } | undefined;

/**
 * `parseConfig` memoised on the raw string: a Worker isolate parses its configuration once.
 *
 * @example
 * ```ts
 * const config = configFromEnv(env.SPILLWAY_CONFIG);
 * ```
 */
export function configFromEnv(raw: string | undefined): SpillwayConfig {
  if (raw === undefined) throw new ConfigError("SPILLWAY_CONFIG is not set (see README, Configuration)");
  if (cached?.raw !== raw) cached = { raw, config: parseConfig(raw) };
  return cached.config;
}
