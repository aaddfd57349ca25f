import { z } from "zod";
import { clientsSchema } from "./client-mix";

const lengthSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("fixed"), tokens: z.int().min(1) }),
  /** Long-tailed: log-normal with this median and sigma, clipped to [min, max]. */
  z.strictObject({
    kind: z.literal("lognormal"),
    median: z.number().positive(),
    sigma: z.number().min(0),
    min: z.int().min(1),
    max: z.int().min(1),
  }),
]);

const phaseSchema = z.strictObject({
  /** Seconds the phase lasts. */
  durationS: z.number().positive(),
  /** Offered load as a multiple of the fleet's measured capacity (requests per second). */
  load: z.number().min(0),
});

/**
 * A simulated scenario, read from `eval/scenarios/*.json`: fleet, routers, request sizes, client and the
 * offered load over time. Parameters live in files, not in code.
 *
 * @example
 * ```ts
 * const scenario = scenarioSchema.parse(JSON.parse(readFileSync("eval/scenarios/burst-3x.json", "utf8")));
 * ```
 */
export const scenarioSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9.-]+$/),
  title: z.string(),
  description: z.string(),
  seed: z.int(),
  /** Offered load over time; arrivals are Poisson within each phase. */
  phases: z.array(phaseSchema).min(1),
  /** Seconds simulated after the last phase, so retries and queued requests can finish. */
  tailS: z.number().min(0),
  fleet: z.strictObject({
    /** Groups of replicas; `speed` divides every step time (2 = twice as fast). */
    replicas: z.array(z.strictObject({ count: z.int().min(1), speed: z.number().positive() })).min(1),
    maxOngoingRequests: z.int().min(1),
    maxTotalTokens: z.int().min(64),
    /** Replicas lost mid-run (the last `replicas` of the list stop taking requests at `atS`; running ones finish). */
    loss: z.strictObject({ atS: z.number().positive(), replicas: z.int().min(1) }).optional(),
  }),
  router: z.strictObject({
    shards: z.int().min(1).default(1),
    maxQueuedRequests: z.int().min(0),
    queueTimeoutS: z.number().positive(),
    /** Restart every router at this time (seconds): queues lost, estimators and retry schedules cold. */
    restartAtS: z.number().positive().optional(),
    /** The routers' `tenantHeadroomSlots`; absent: the router schema's default. */
    tenantHeadroomSlots: z.int().min(0).optional(),
  }),
  requests: z.strictObject({
    prompt: lengthSchema,
    /** Tokens the model actually generates; `max_tokens` is `maxTokensFactor` times that (rounded up). */
    output: lengthSchema,
    maxTokensFactor: z.number().min(1).default(1),
  }),
  client: z.strictObject({
    /** Retries per request (the OpenAI SDKs default to 2). */
    maxRetries: z.int().min(0),
  }),
  /** Who the clients are (styles, round trips); default: the realistic mix (src/sim/client-mix.ts). */
  clients: clientsSchema,
  network: z
    .strictObject({
      /** Round trip of a `/load` probe, ms. */
      probeMs: z.number().min(0).default(2),
      /** One way Worker to replica (and back for the release), ms. */
      forwardMs: z.number().min(0).default(1),
    })
    .default({ probeMs: 2, forwardMs: 1 }),
  /** For bursts: the phase index of the burst, to compute the 60 s bound in the report. */
  burstPhase: z.int().min(0).optional(),
});

export type Scenario = z.output<typeof scenarioSchema>;
export type LengthDistribution = z.output<typeof lengthSchema>;

/** Seconds of offered traffic (the phases), without the tail. */
export function trafficDurationS(scenario: Scenario): number {
  return scenario.phases.reduce((s, p) => s + p.durationS, 0);
}
