import { z } from "zod";
import { SCHEDULER_DEFAULTS as S } from "../scheduler/index";
import { LOG_LEVELS } from "./log-line";
import { EngineOptionsError, optionIssueLines } from "./options-error";

const int = () => z.int();
const positive = () => z.number().positive();

/**
 * Every engine-server option, validated (the CLI builds one of these from flags and SGLang's environment
 * variables; {@link startEngineServer} validates what callers pass). The scheduler's defaults come from
 * `SCHEDULER_DEFAULTS` (SGLang's values); timing and output-length defaults are calibrated to the seed's run.
 *
 * @example
 * ```ts
 * const options = engineOptionsSchema.parse({ port: 0, maxTotalTokens: 4096, speed: 50 });
 * ```
 */
export const engineOptionsSchema = z
  .object({
    host: z.string().min(1).default("127.0.0.1"),
    port: int().min(0).max(65535).default(8001),
    servedModelName: z.string().min(1).default("demo-model"),
    /** Reported as `served_by` in responses and `/health` (defaults to `engine-<port>`). */
    name: z.string().min(1).optional(),
    maxTotalTokens: int().min(2).default(32768),
    /** Defaults to min(maxTotalTokens / 2, 4096), SGLang's rule without a request-pool limit (the scheduler applies it). */
    maxRunningRequests: int().min(1).optional(),
    /**
     * SGLang's `--max-queued-requests`: with this many requests waiting, a new one is refused at admission (503, "The
     * request queue is full."). Unset: the waiting queue has no bound.
     */
    maxQueuedRequests: int().min(1).optional(),
    maxPrefillTokens: int().min(1).default(S.maxPrefillTokens),
    chunkedPrefillSize: int()
      .refine((v) => v === -1 || v >= 1, "must be -1 (off) or at least 1")
      .default(S.chunkedPrefillSize),
    scheduleConservativeness: positive().default(S.scheduleConservativeness),
    schedulePolicy: z.enum(["fcfs", "lpm", "lof", "random"]).default(S.schedulePolicy),
    disableRadixCache: z.boolean().default(S.disableRadixCache),
    pageSize: int().min(1).default(S.pageSize),
    /** The longest prompt + max_tokens a request may ask for (defaults to maxTotalTokens). */
    contextLength: int().min(2).optional(),
    logLevel: z.enum(LOG_LEVELS).default("info"),
    decodeLogInterval: int().min(1).default(S.decodeLogInterval),
    randomSeed: int().default(0),
    clipMaxNewTokensEstimation: int().min(1).default(S.clipMaxNewTokens),
    initNewTokenRatio: positive().max(1).default(S.initNewTokenRatio),
    minNewTokenRatioFactor: positive().max(1).default(S.minNewTokenRatioFactor),
    newTokenRatioDecaySteps: positive().default(S.newTokenRatioDecaySteps),
    retractDecodeSteps: int().min(0).default(S.retractDecodeSteps),
    speed: positive().or(z.literal(Number.POSITIVE_INFINITY)).default(1),
    prefillThroughput: positive().default(3900),
    prefillOverheadMs: z.number().min(0).default(5),
    decodeBaseMs: z.number().min(0).default(20),
    decodePerReqMs: z.number().min(0).default(0.5),
    decodePerKTokenMs: z.number().min(0).default(0.6),
    eosDistribution: z.enum(["uniform", "exponential", "never"]).default("uniform"),
    eosMinFraction: z.number().min(0).max(1).default(0.05),
    eosMaxFraction: z.number().min(0).max(1).default(0.6),
    eosMeanTokens: positive().default(128),
    /** `simulated` (the default) or `llama`: llama.cpp through node-llama-cpp (see `src/engine/llama`). */
    engine: z.enum(["simulated", "llama"]).default("simulated"),
    /** The GGUF model file of `--engine llama`. */
    modelPath: z.string().min(1).optional(),
    /** `--engine llama`: `cpu`, or `cuda` (the prebuilt CUDA binary; fails rather than falling back to CPU). */
    gpu: z.enum(["cpu", "cuda"]).default("cpu"),
    /** `--engine llama`: CPU threads of llama.cpp (default: cores - 1, at least 1). */
    threads: int().min(1).optional(),
    /** 16 MiB, the edge's default `maxBodyBytes`: a body the edge admitted is not refused here. */
    maxBodyBytes: int()
      .min(1024)
      .default(16 * 1024 * 1024),
    accessLog: z.boolean().default(true),
    /** With a signing secret set: also require the edge's signature on /load and /metrics. */
    protectLoadMetrics: z.boolean().default(false),
    /** How far a signature's timestamp may be from this machine's clock. */
    signatureWindowS: positive().max(3600).default(30),
    /**
     * With a signing secret set: the deployment(s) this engine serves, comma-separated (see
     * {@link deploymentNames}); a request the edge signed for any other is refused. Unset: any deployment.
     */
    deployment: z
      .string()
      .refine(
        (v) => v.split(",").every((name) => name.trim() !== ""),
        "expected deployment names separated by commas, none of them empty (e.g. llama or llama,llama-long)",
      )
      .optional(),
  })
  .strict()
  .refine((o) => o.eosMinFraction <= o.eosMaxFraction, {
    message: "eosMinFraction must not exceed eosMaxFraction",
    path: ["eosMinFraction"],
  })
  .refine((o) => o.engine !== "llama" || o.modelPath !== undefined, {
    message: "--engine llama needs --model-path FILE.gguf",
    path: ["modelPath"],
  })
  // A bad flag, so the CLI's status 2 naming it (startLlamaBackend checks it again for its own callers).
  .refine((o) => o.engine !== "llama" || o.pageSize === 1, {
    message: "--engine llama needs --page-size 1 (a llama.cpp cell holds one token)",
    path: ["pageSize"],
  });

/**
 * Validates engine options and applies the defaults; bad ones throw {@link EngineOptionsError}, whose message has one
 * line per problem naming the option, each line starting with `who` (the function the caller called).
 *
 * @example
 * ```ts
 * parseEngineOptions({ port: 0 }).maxTotalTokens; // 32768
 * parseEngineOptions({ port: "abc", decodePerKtokenMs: 1 });
 * // throws EngineOptionsError: startEngineServer: port: expected a number, got "abc"
 * //                            startEngineServer: unknown option decodePerKtokenMs (did you mean decodePerKTokenMs?)
 * ```
 */
export function parseEngineOptions(input: unknown, who = "startEngineServer"): EngineOptions {
  const result = engineOptionsSchema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const lines = optionIssueLines(result.error.issues, Object.keys(engineOptionsSchema.shape));
  throw new EngineOptionsError(lines.map((line) => `${who}: ${line}`).join("\n"), result.error.issues);
}

/** Options as callers write them (everything optional). */
export type EngineOptionsInput = z.input<typeof engineOptionsSchema>;
/** Options after validation and defaults. */
export type EngineOptions = z.output<typeof engineOptionsSchema>;

/**
 * The deployment names of a `deployment` option: split at commas, each trimmed.
 *
 * @example
 * ```ts
 * deploymentNames("llama, llama-long"); // ["llama", "llama-long"]
 * ```
 */
export function deploymentNames(deployment: string): string[] {
  return deployment.split(",").map((name) => name.trim());
}
