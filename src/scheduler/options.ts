import { z } from "zod";
import { SchedulerConfigError } from "./errors.js";

/**
 * SGLang's rule for `--max-running-requests` without a request-pool limit: half the KV pool, at most 4096 (and at
 * least 1). The one default of this option: the scheduler, the engine's `/load` and the simulator all use it.
 *
 * @example
 * ```ts
 * defaultMaxRunningRequests(32_768); // 4096
 * defaultMaxRunningRequests(4_096);  // 2048
 * ```
 */
export function defaultMaxRunningRequests(maxTotalTokens: number): number {
  return Math.max(1, Math.min(Math.floor(maxTotalTokens / 2), 4096));
}

/**
 * SGLang's defaults of the scheduler's options (flags and environment variables); the engine's own options take
 * theirs from here.
 *
 * @example
 * ```ts
 * SCHEDULER_DEFAULTS.clipMaxNewTokens; // 4096 (SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION)
 * ```
 */
export const SCHEDULER_DEFAULTS = {
  pageSize: 1,
  maxPrefillTokens: 16384,
  chunkedPrefillSize: 8192,
  scheduleConservativeness: 1,
  schedulePolicy: "fcfs",
  disableRadixCache: false,
  clipMaxNewTokens: 4096,
  initNewTokenRatio: 0.7,
  minNewTokenRatioFactor: 0.14,
  newTokenRatioDecaySteps: 600,
  retractDecodeSteps: 20,
  decodeLogInterval: 40,
} as const;

const D = SCHEDULER_DEFAULTS;
const int = () => z.int();
const atLeast = (min: number) => z.number().min(min);

/**
 * The scheduler's options and their defaults (SGLang's values), validated once: the scheduler, the engine's
 * options (which add their own flag names and bounds) and the simulator build from it.
 *
 * @example
 * ```ts
 * const resolved = schedulerOptionsSchema.parse({ maxTotalTokens: 4096 });
 * resolved.maxRunningRequests; // 2048
 * ```
 */
export const schedulerOptionsSchema = z
  .object({
    /** KV pool size in token slots (`--max-total-tokens`). Rounded down to whole pages. */
    maxTotalTokens: int().min(1),
    /** Tokens per KV page (`--page-size`). */
    pageSize: int().min(1).default(D.pageSize),
    /** Most requests running at once (`--max-running-requests`); default {@link defaultMaxRunningRequests}. */
    maxRunningRequests: int().min(1).optional(),
    /** Most prompt tokens prefilled in one batch (`--max-prefill-tokens`). */
    maxPrefillTokens: int().min(1).default(D.maxPrefillTokens),
    /** Chunk size for long prompts (`--chunked-prefill-size`); -1 (or any value <= 0) turns chunking off. */
    chunkedPrefillSize: int().default(D.chunkedPrefillSize),
    /** `--schedule-conservativeness`; scales the initial new-token ratio. */
    scheduleConservativeness: atLeast(0).default(D.scheduleConservativeness),
    /** `--schedule-policy`. */
    schedulePolicy: z.enum(["fcfs", "lpm", "lof", "random"]).default(D.schedulePolicy),
    /** `--disable-radix-cache` (prefix cache on by default). */
    disableRadixCache: z.boolean().default(D.disableRadixCache),
    /** `SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION`: cap on the new tokens one request reserves. */
    clipMaxNewTokens: int().min(0).default(D.clipMaxNewTokens),
    /** `SGLANG_INIT_NEW_TOKEN_RATIO`. */
    initNewTokenRatio: atLeast(0).default(D.initNewTokenRatio),
    /** `SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR`: the floor is `init * factor`. */
    minNewTokenRatioFactor: atLeast(0).max(1).default(D.minNewTokenRatioFactor),
    /** `SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS`: decode steps from init to the floor. */
    newTokenRatioDecaySteps: int().min(1).default(D.newTokenRatioDecaySteps),
    /** `SGLANG_RETRACT_DECODE_STEPS`: used by the ratio reset after a retraction. */
    retractDecodeSteps: atLeast(0).default(D.retractDecodeSteps),
    /** A decode-batch event comes out every this many decode steps (`--decode-log-interval`). */
    decodeLogInterval: int().min(1).default(D.decodeLogInterval),
    /** Uniform [0, 1) source for the `random` policy, required by it (the engine passes a seeded one, for replay). */
    random: z.custom<() => number>((v) => typeof v === "function", "must be a function").optional(),
  })
  // A misspelt option (`pagesize`) is refused by name: ignored, the scheduler would silently run on a default.
  .strict()
  .refine((o) => o.pageSize <= o.maxTotalTokens, { message: "must not exceed maxTotalTokens", path: ["pageSize"] })
  .refine((o) => o.chunkedPrefillSize <= 0 || o.chunkedPrefillSize >= o.pageSize, {
    message: "must be -1 (off) or >= pageSize",
    path: ["chunkedPrefillSize"],
  })
  .refine((o) => o.schedulePolicy !== "random" || o.random !== undefined, {
    message: "the random policy needs a random source",
    path: ["random"],
  })
  .transform((o) => ({
    ...o,
    maxRunningRequests: o.maxRunningRequests ?? defaultMaxRunningRequests(o.maxTotalTokens),
  }));

/** Options as callers write them: only `maxTotalTokens` is required. */
export type SchedulerOptions = z.input<typeof schedulerOptionsSchema>;
/** Options with every default applied. */
export type ResolvedSchedulerOptions = z.output<typeof schedulerOptionsSchema>;

/**
 * Validates and completes scheduler options; a bad one throws {@link SchedulerConfigError} naming every field.
 *
 * @example
 * ```ts
 * resolveSchedulerOptions({ maxTotalTokens: 4096 }).clipMaxNewTokens; // 4096
 * resolveSchedulerOptions({ maxTotalTokens: 0 });                      // throws SchedulerConfigError
 * ```
 */
export function resolveSchedulerOptions(options: SchedulerOptions): ResolvedSchedulerOptions {
  const result = schedulerOptionsSchema.safeParse(options);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "options"}: ${issue.message}`);
  throw new SchedulerConfigError(`invalid scheduler options: ${problems.join("; ")}`);
}
