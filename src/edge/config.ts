import { z } from "zod";
import type { RouterOptions } from "../core/router-options";
import { routerOptionsFromSettings, routerSettingsShape } from "../core/router-schema";
import { replicaLabel } from "./replica-label";
import { LOAD_SOURCES, type ReplicaTarget } from "./replica-probe";
import { replicaUrl as replicaPathUrl } from "./replica-url";
import { tenantsSchema } from "./tenant-config";
import { problemsText } from "./zod-problems";

const replicaUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/**
 * Bindings spillway reads itself (`Env`): a deployment's `upstreamApiKeySecret` naming one would send its value (the
 * admin token, the signing secret, the configuration) to every replica as a bearer key.
 */
const SPILLWAY_OWN_BINDINGS: readonly string[] = ["SPILLWAY_ADMIN_TOKEN", "SPILLWAY_SIGNING_SECRET", "SPILLWAY_CONFIG"];

/** A replica: a URL (spillway's engine, probed by `GET /load`) or `{ url, load, model }` for any other server. */
const replicaEntry = z
  .union(
    [
      replicaUrl,
      z
        .strictObject({
          url: replicaUrl,
          /** How the router reads this replica's load (see README, "In front of vLLM / SGLang / TGI"). */
          load: z.enum(LOAD_SOURCES).default("spillway"),
          /** Count only the `/metrics` samples labelled `model_name="<model>"` (vLLM and SGLang label them so). */
          model: z.string().min(1).optional(),
        })
        // TGI's gauges carry no labels, and `/load` and `none` read no metrics: a `model` there would select nothing
        // (a TGI replica with one read as unknown for ever, never probed as free), so it is refused, not ignored.
        .refine((r) => r.model === undefined || r.load === "vllm" || r.load === "sglang", {
          message: "`model` selects `model_name` labels, which only `vllm` and `sglang` metrics carry",
          path: ["model"],
        }),
    ],
    // Said when the entry is neither (a number, an array): `problemsOf` below reports an object's own problems.
    { error: "Invalid input: expected an http(s) URL or an object { url, load, model }" },
  )
  .transform((entry): ReplicaTarget => (typeof entry === "string" ? { url: entry, load: "spillway" } : entry));

/** Durable Objects' location hints: where a deployment's routers are placed (near its GPU fleet). */
/** The largest `maxBodyBytes`: the edge's copies of a body while it checks it must leave an isolate room to run. */
const MAX_BODY_BYTES_CEILING = 32 * 1024 * 1024;

const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"] as const;

/**
 * One deployment's settings, as `SPILLWAY_CONFIG.deployments.<model>` holds them (every field documented in the
 * README's Configuration table, which a test holds to this schema).
 *
 * @example
 * ```ts
 * deploymentConfigSchema.parse({ replicas: ["http://127.0.0.1:8001"] }).routerShards; // 1
 * ```
 */
export const deploymentConfigSchema = z.strictObject({
  /** The servers of this deployment: engine server URLs, or `{ url, load }` for vLLM, SGLang, TGI or others. */
  replicas: z
    .array(replicaEntry)
    .min(1, "needs at least one replica")
    // Compared where requests go: replicaUrl drops trailing slashes, so `http://a` and `http://a/` are one server
    // (listed twice, it would be given twice its slots). Zod runs this also when an entry failed (then not a URL).
    .refine(
      (rs) => new Set(rs.map((r) => (typeof r?.url === "string" ? replicaPathUrl(r.url, "") : r))).size === rs.length,
      "a replica URL is listed twice",
    )
    // Logs, metrics labels, analytics rows and the dashboard name a replica by its URL with credentials redacted
    // (`replicaLabel`): two replicas told apart only by their `user:pass@` or `?key=` values would be one there (one
    // metrics series for two, one key in the stats). Compared as above (a trailing slash is no difference); the
    // message names the redacted form alone.
    .superRefine((rs, ctx) => {
      const urls = rs.flatMap((r) => (typeof r?.url === "string" ? [r.url] : []));
      const firstOf = new Map<string, string>();
      for (const url of urls) {
        const label = replicaLabel(url);
        const shown = replicaPathUrl(label, "");
        const first = firstOf.get(shown);
        if (first === undefined) firstOf.set(shown, url);
        else if (replicaPathUrl(first, "") !== replicaPathUrl(url, "")) {
          ctx.addIssue({
            code: "custom",
            message: `two replicas would both show as ${JSON.stringify(label)} in logs, metrics and the dashboard (their credentials redacted): tell them apart by host, port or path`,
          });
          return;
        }
      }
    }),
  /**
   * Name of a Worker secret holding the backend's API key (e.g. vLLM's `--api-key`): sent upstream as
   * `Authorization: Bearer <key>` in place of the client's own `Authorization`. Unset: no `Authorization` goes
   * upstream (the client's authenticated to the Worker, not the backend, and is never passed on).
   */
  upstreamApiKeySecret: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a binding name")
    .refine(
      (name) => !SPILLWAY_OWN_BINDINGS.includes(name),
      "must not name spillway's own binding: its value would be sent to every replica of the deployment",
    )
    .optional(),
  /** Where this deployment's router Durable Objects are created (a location hint); unset: near the first request. */
  locationHint: z.enum(LOCATION_HINTS).optional(),
  /** The router's own settings (queue, timeouts, backpressure, estimator): defaults from the core's schema. */
  ...routerSettingsShape,
  /**
   * Deadline for a replica's answer to begin: its headers, and a stream's first event; an engine that accepts and
   * hangs ends in 504.
   */
  upstreamTimeoutS: z.number().gt(0).max(3600).default(300),
  /**
   * Deadline for each later chunk of a stream (after its first event), and for the whole body of an answer that is
   * not streamed (after its headers): a replica silent for longer ends the stream with an `upstream_timeout` error
   * event (an answer not streamed: 504).
   * 300 as `upstreamTimeoutS`: an engine that retracts a running request re-queues it, and its stream then waits as
   * long as a new request waits for its first event.
   */
  upstreamIdleTimeoutS: z.number().gt(0).max(3600).default(300),
  /**
   * How long after a router's answer saying nothing waits there a Worker isolate may hand a finished request's
   * slot straight to its next request (same replica, no call to the router; the router hears of it in the
   * next batch). 0: never, every request asks its router. See README, "Slot hand-off".
   */
  slotHandoffMs: z.int().min(0).max(10_000).default(0),
  /** Routers (Durable Objects) for this deployment, each with its own queue and estimator. */
  routerShards: z.int().min(1).max(256).default(1),
  /**
   * When the router cannot be reached or is overloaded: `shed` answers 503 with the static Retry-After;
   * `pass` forwards to a random replica, at most `maxOngoingRequests` at once per Worker isolate.
   */
  routerUnavailable: z.enum(["shed", "pass"]).default("shed"),
});

/**
 * The whole `SPILLWAY_CONFIG` document; `parseConfig` validates with it and names every bad field.
 *
 * @example
 * ```ts
 * spillwayConfigSchema.parse({ deployments: { m: { replicas: ["http://127.0.0.1:8001"] } } }).maxBodyBytes; // 16777216
 * ```
 */
export const spillwayConfigSchema = z.strictObject({
  deployments: z
    .record(z.string().min(1), deploymentConfigSchema)
    .refine((d) => Object.keys(d).length > 0, "needs at least one deployment"),
  /**
   * Request bodies larger than this are refused with 413 before they take a queue place. 16 MiB holds a chat
   * request with a few base64 images (OpenAI's vision format inlines them, a third larger than the file). While it
   * checks a body the edge holds three copies at once (the bytes, the text, the parsed JSON): 48 MiB at this limit,
   * 64 MiB when the body has any non-ASCII character (V8 then stores the text at two bytes a character), half of the
   * 128 MB a Worker isolate has for all its concurrent requests; after that it keeps the bytes alone (16 MiB) for as
   * long as the request lasts. At most 32 MiB: three copies of a larger body (four with non-ASCII text) would fill
   * the isolate's 128 MB by themselves.
   */
  maxBodyBytes: z
    .int()
    .min(1)
    .max(MAX_BODY_BYTES_CEILING, {
      error: `at most ${MAX_BODY_BYTES_CEILING} (32 MiB): while it checks a body the edge holds three or four copies of it, and a Worker isolate has 128 MB for all its requests`,
    })
    .default(16 * 1024 * 1024),
  /** One structured log line per rejection (the RFC's evidence); turn off only for benchmarks. */
  logRejections: z.boolean().default(true),
  /** Who is asking: API keys -> plans (weight, priority, quotas); see tenant-config.ts and README, "Tenants". */
  tenants: tenantsSchema.default(tenantsSchema.parse({})),
});

/** The validated configuration document. */
export type SpillwayConfig = z.output<typeof spillwayConfigSchema>;
/** One deployment's validated configuration. */
export type DeploymentConfig = z.output<typeof deploymentConfigSchema>;
/** What a user writes (every field with a default may be left out). */
export type SpillwayConfigInput = z.input<typeof spillwayConfigSchema>;

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
  // zod builds records by assignment and so skips a key `__proto__` without a word: the deployment would vanish.
  const deployments = (raw as { deployments?: unknown } | null)?.deployments;
  if (typeof deployments === "object" && deployments !== null && Object.hasOwn(deployments, "__proto__"))
    throw new ConfigError("invalid SPILLWAY_CONFIG: deployments.__proto__: `__proto__` cannot name a deployment");
  const result = spillwayConfigSchema.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(`invalid SPILLWAY_CONFIG: ${problemsText(result.error)}`);
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
  return {
    ...routerOptionsFromSettings(
      deployment.replicas.map((r) => r.url),
      deployment,
    ),
    unprobedReplicas: deployment.replicas.filter((r) => r.load === "none").map((r) => r.url),
    routerShards: deployment.routerShards,
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
