import { z } from "zod";
import { DEFAULT_DRAIN_RATE_OPTIONS } from "./drain-rate";
import { DEFAULT_SATURATION_OPTIONS, RETRY_AFTER_POLICIES } from "./retry-after";
import { DEFAULT_BOOKING_ADMISSION, type RouterOptions } from "./router-options";
import { DEFAULT_TENANT_HEADROOM_SLOTS } from "./tenant-headroom";

const backpressureSchema = z.strictObject({
  /** Status of a backpressure rejection (Ray's default is 503; ours 429, which SDKs retry). */
  statusCode: z.union([z.literal(429), z.literal(503)]).default(429),
  /** `booked_capacity` by default: it serves the most requests soonest (docs/evaluation.md); `static` is Ray's. */
  retryAfterPolicy: z.enum(RETRY_AFTER_POLICIES).default("booked_capacity"),
  /** Static Retry-After (seconds): the policy `static`, and the fallback of the computed policies. */
  retryAfterS: z.number().min(0).optional(),
  jitter: z.number().min(0).max(1).default(0.2),
});

/** Implementation constants of the estimator, exposed for tuning. */
const estimatorSchema = z.strictObject({
  alpha: z.number().gt(0).max(1).default(DEFAULT_DRAIN_RATE_OPTIONS.alpha),
  intervalS: z.number().gt(0).max(3600).default(DEFAULT_DRAIN_RATE_OPTIONS.intervalS),
  warmupSamples: z.int().min(1).max(1000).default(DEFAULT_DRAIN_RATE_OPTIONS.warmupSamples),
  backoffStreakSaturation: z.int().min(1).default(DEFAULT_SATURATION_OPTIONS.backoffStreakSaturation),
  occupancyWeight: z.number().min(0).max(10).default(DEFAULT_SATURATION_OPTIONS.occupancyWeight),
  backoffWeight: z.number().min(0).max(10).default(DEFAULT_SATURATION_OPTIONS.backoffWeight),
});

/** Admission of the `booked_capacity` policy: its own small block, ignored by the other policies. */
const bookingSchema = z.strictObject({
  /** CoDel-style queue-delay target, seconds: a request that would wait longer is refused at once with a booked hint. */
  queueDelayTargetS: z
    .number()
    .gt(0)
    .max(3600)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.queueDelayTargetS ?? null),
  /**
   * The target applies once the queue has stood above it this long (CoDel's interval), until nothing has been
   * refused for as long (at least 5 s) or the queue drains by itself.
   */
  standingIntervalS: z.number().min(0).max(3600).default(DEFAULT_BOOKING_ADMISSION.standingIntervalS),
  /** While the queue stands, a request (not a demoted one) that has waited this long, seconds, is shed with a hint. Off: null. */
  standingTimeoutS: z
    .number()
    .gt(0)
    .max(3600)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.standingTimeoutS ?? null),
  /** Share of the queue's limit that promised retries may hold. */
  maxHeldRoomShare: z.number().min(0).max(1).default(DEFAULT_BOOKING_ADMISSION.maxHeldRoomShare),
  /** While the attempts offered (last 5 s) are below this share of the drain rate, the queue is draining: no delay target. */
  drainingOfferedShare: z
    .number()
    .gt(0)
    .max(10)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.drainingOfferedShare ?? null),
  /** A request refused this many times before (its probable last attempt) is queued past the delay target, not demoted. Off: null. */
  lastChanceAfterRefusals: z
    .int()
    .min(1)
    .max(100)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.lastChanceAfterRefusals ?? null),
  /** A request first refused longer ago than this, seconds, waits behind the others and holds no room. Off: null. */
  demoteAfterS: z
    .number()
    .gt(0)
    .max(3600)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.demoteAfterS ?? null),
  /** Demoted requests among themselves: `next_horizon` (earliest next completion horizon; the default), `newest_first` (adaptive LIFO) or `arrival`. */
  demotedOrder: z
    .enum(["newest_first", "arrival", "next_horizon"])
    .default(DEFAULT_BOOKING_ADMISSION.demotedOrder ?? "next_horizon"),
  /** `next_horizon`: seconds from a request's start to its answer that its deadlines allow for. Default: 4. */
  demotedServiceS: z.number().gt(0).max(600).nullable().default(null),
  /** How long a demoted request may wait in the queue, seconds, where that is longer than `queueTimeoutS`. Null: `queueTimeoutS`. */
  demotedTimeoutS: z
    .number()
    .gt(0)
    .max(3600)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.demotedTimeoutS ?? null),
  /** How long a demoted request may wait while no arrival was refused for a full queue (last 5 s), seconds. Null: off. */
  demotedQuietTimeoutS: z
    .number()
    .gt(0)
    .max(3600)
    .nullable()
    .default(DEFAULT_BOOKING_ADMISSION.demotedQuietTimeoutS ?? null),
  /** Requests not demoted among themselves: `arrival` (FIFO; the default) or `next_horizon` (earliest next completion horizon). */
  freshOrder: z.enum(["arrival", "next_horizon"]).default(DEFAULT_BOOKING_ADMISSION.freshOrder ?? "arrival"),
  /** While demoted requests wait beside others, this share of the dispatches goes to the demoted. 0: they go last. */
  demotedShare: z
    .number()
    .min(0)
    .max(1)
    .default(DEFAULT_BOOKING_ADMISSION.demotedShare ?? 0),
  /** Of the other requests' dispatches, this share goes to the newest that can still be answered within 5 s (1, while the queue stands: adaptive LIFO). 0: off. */
  freshNewestShare: z
    .number()
    .min(0)
    .max(1)
    .default(DEFAULT_BOOKING_ADMISSION.freshNewestShare ?? 0),
  /** When `freshNewestShare` applies: `standing` (only while the queue stands above the delay target; the default) or `always`. */
  freshNewestWhen: z.enum(["always", "standing"]).default(DEFAULT_BOOKING_ADMISSION.freshNewestWhen ?? "always"),
  /** While the queue does not stand, demoted requests go first as long as every other waiting request has waited less than this, seconds. Off: null. */
  demotedFirstUnderS: z.number().gt(0).max(600).nullable().default(null),
  /** The draining test counts only the attempts that join the line, not the demoted retries. */
  drainingIgnoresDemoted: z.boolean().default(false),
  /** While the requests never refused, offered over the last 5 s, fall short of this share of the drain rate, such a request joins past the delay target. Off: null. */
  freshPastTargetShare: z.number().gt(0).max(10).nullable().default(null),
  /** Forget a request's refusals once it is queued (the behaviour until 2026-12-05) rather than once it is placed. */
  forgetRefusalsWhenQueued: z.boolean().default(false),
  /** Share of the queue's limit closed to SDK clients without a promise, kept for clients that may not use a hint. 0: off. */
  sdkClientsLeaveShare: z
    .number()
    .min(0)
    .max(0.9)
    .default(DEFAULT_BOOKING_ADMISSION.sdkClientsLeaveShare ?? 0),
  /** Demoted requests are placed only while more than this many slots of the fleet are free (trunk reservation). 0: off. */
  demotedHeadroomSlots: z
    .int()
    .min(0)
    .max(10_000)
    .default(DEFAULT_BOOKING_ADMISSION.demotedHeadroomSlots ?? 0),
});

/**
 * The fields of a router's settings, as a user writes them (seconds), each with its default: the one source of
 * router defaults for the edge's configuration (which adds replicas, shards and the upstream timeout) and the
 * simulator.
 */
export const routerSettingsShape = {
  /** A replica accepts a request while its queue length is below this (Ray's `max_ongoing_requests`). */
  maxOngoingRequests: z.int().min(1).default(5),
  /**
   * Requests that may wait for a replica at one router (Ray's `max_queued_requests`); more are shed. -1 means
   * unlimited, as in Ray (where it is the default). Ours defaults to a bound: see README, Configuration.
   */
  maxQueuedRequests: z.int().min(-1, "must be -1 (unlimited) or an integer >= 0").default(100),
  /** A request that waited this long for a replica is shed. */
  queueTimeoutS: z.number().gt(0).max(3600).default(30),
  /** A slot whose Worker never released it (killed mid-request) is reclaimed after this long. */
  leaseTimeoutS: z.number().gt(0).max(86_400).default(600),
  backpressure: backpressureSchema.default(backpressureSchema.parse({})),
  estimator: estimatorSchema.default(estimatorSchema.parse({})),
  booking: bookingSchema.default(bookingSchema.parse({})),
  /**
   * Slots of the fleet kept free for tenants below their weighted fair share while one is active: a request of a
   * tenant at or above its share waits (it is not refused) rather than leave fewer free. Affects only traffic of
   * several tenants; 0 turns it off (fully work-conserving). See README, Configuration, and docs/tenants.md.
   */
  tenantHeadroomSlots: z.int().min(0).default(DEFAULT_TENANT_HEADROOM_SLOTS),
};

/**
 * A router's settings with defaults applied.
 *
 * @example
 * ```ts
 * routerSettingsSchema.parse({ maxQueuedRequests: 20 }).backpressure.jitter; // 0.2
 * ```
 */
export const routerSettingsSchema = z.strictObject(routerSettingsShape);

/** Validated router settings (every default applied). */
export type RouterSettings = z.output<typeof routerSettingsSchema>;
/** Router settings as written (every field with a default may be left out). */
export type RouterSettingsInput = z.input<typeof routerSettingsSchema>;

/**
 * The core's options from validated settings and the replicas to route to.
 *
 * @example
 * ```ts
 * const options = routerOptionsFromSettings(["http://127.0.0.1:8001"], routerSettingsSchema.parse({}));
 * options.queueTimeoutMs; // 30000
 * ```
 */
export function routerOptionsFromSettings(replicas: string[], settings: RouterSettings): RouterOptions {
  const { backpressure, estimator } = settings;
  return {
    replicas,
    maxOngoingRequests: settings.maxOngoingRequests,
    maxQueuedRequests: settings.maxQueuedRequests,
    queueTimeoutMs: settings.queueTimeoutS * 1000,
    leaseTimeoutMs: settings.leaseTimeoutS * 1000,
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
      queueDelayTargetS: settings.booking.queueDelayTargetS ?? undefined,
      standingIntervalS: settings.booking.standingIntervalS,
      standingTimeoutS: settings.booking.standingTimeoutS ?? undefined,
      maxHeldRoomShare: settings.booking.maxHeldRoomShare,
      drainingOfferedShare: settings.booking.drainingOfferedShare ?? undefined,
      lastChanceAfterRefusals: settings.booking.lastChanceAfterRefusals ?? undefined,
      demoteAfterS: settings.booking.demoteAfterS ?? undefined,
      demotedOrder: settings.booking.demotedOrder,
      demotedServiceS: settings.booking.demotedServiceS ?? undefined,
      demotedTimeoutS: settings.booking.demotedTimeoutS ?? undefined,
      demotedQuietTimeoutS: settings.booking.demotedQuietTimeoutS ?? undefined,
      demotedHeadroomSlots: settings.booking.demotedHeadroomSlots || undefined,
      freshOrder: settings.booking.freshOrder,
      demotedShare: settings.booking.demotedShare || undefined,
      freshNewestShare: settings.booking.freshNewestShare || undefined,
      freshNewestWhen: settings.booking.freshNewestWhen,
      freshPastTargetShare: settings.booking.freshPastTargetShare ?? undefined,
      sdkClientsLeaveShare: settings.booking.sdkClientsLeaveShare || undefined,
      demotedFirstUnderS: settings.booking.demotedFirstUnderS ?? undefined,
      drainingIgnoresDemoted: settings.booking.drainingIgnoresDemoted || undefined,
      forgetRefusalsWhenQueued: settings.booking.forgetRefusalsWhenQueued || undefined,
    },
    tenantHeadroomSlots: settings.tenantHeadroomSlots,
  };
}
