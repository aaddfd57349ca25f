import { z } from "zod";
import { CLIENT_PROFILES, CLIENT_STYLES, type ClientProfile, type ClientStyle } from "./client-model";

/**
 * The default mix: openai-node (half), openai-python, and 30% of clients without the SDK's headers - curl or
 * tenacity style loops that honour `Retry-After`, clients that only back off, and a few that give up at the
 * first refusal.
 */
export const DEFAULT_CLIENT_MIX: Partial<Record<ClientStyle, number>> = {
  openai_node: 0.5,
  openai_python: 0.2,
  headerless_hints: 0.15,
  backoff_only: 0.1,
  no_show: 0.05,
};

const roundTripSchema = z.discriminatedUnion("kind", [
  /** Every attempt reaches the router at the instant the client chose (the earlier model). */
  z.strictObject({ kind: z.literal("zero") }),
  /** Per client, a round trip drawn once from a log-normal with this median and 99th percentile (ms). */
  z
    .strictObject({ kind: z.literal("lognormal"), medianMs: z.number().positive(), p99Ms: z.number().positive() })
    // A p99 below the median would turn the spread negative: the value given as p99 would be the 1st percentile.
    .refine((r) => r.p99Ms >= r.medianMs, { message: "p99Ms must be at least medianMs", path: ["p99Ms"] }),
]);

const mixSchema = z
  .strictObject(Object.fromEntries(CLIENT_STYLES.map((s) => [s, z.number().min(0).optional()])))
  .refine((m) => Object.values(m).some((v) => (v ?? 0) > 0), "needs at least one client style with a share");

/** The `clients` block of a scenario: who sends the requests and how far away they are. */
export const clientsSchema = z
  .strictObject({
    /** Shares of each client style (normalised; need not sum to 1). */
    mix: mixSchema.default(DEFAULT_CLIENT_MIX),
    roundTrip: roundTripSchema.default({ kind: "lognormal", medianMs: 80, p99Ms: 600 }),
    /** One way, Worker to router (Durable Object) and back, ms. */
    workerToRouterMs: z.number().min(0).default(5),
  })
  .default({
    mix: DEFAULT_CLIENT_MIX,
    roundTrip: { kind: "lognormal", medianMs: 80, p99Ms: 600 },
    workerToRouterMs: 5,
  });

export type ClientsConfig = z.output<typeof clientsSchema>;

/** The old model, as a labelled variant: every client an SDK honouring (0, 60] s, no round trip. */
export const LEGACY_CLIENTS: ClientsConfig = {
  mix: { legacy_sdk: 1 },
  roundTrip: { kind: "zero" },
  workerToRouterMs: 0,
};

/** The standard normal quantile at 0.99. */
const Z99 = 2.3263478740408408;

/** One client of one request: its style and its network round trip. */
export interface SimClient {
  profile: ClientProfile;
  roundTripMs: number;
}

/**
 * Draws the client of one request from the scenario's mix and round-trip model, with the request's own random
 * stream (the same request gets the same client under every policy).
 *
 * @example
 * ```ts
 * const client = drawClient(scenario.clients, randomStream(seed, "client-kind", id));
 * client.profile.style; // e.g. "openai_node"
 * ```
 */
export function drawClient(config: ClientsConfig, random: () => number): SimClient {
  const entries = Object.entries(config.mix).filter(([, share]) => (share ?? 0) > 0) as [ClientStyle, number][];
  const total = entries.reduce((s, [, share]) => s + share, 0);
  let u = random() * total;
  let style = entries[entries.length - 1]?.[0] ?? "openai_node";
  for (const [name, share] of entries) {
    if (u < share) {
      style = name;
      break;
    }
    u -= share;
  }
  const a = random();
  const b = random();
  let roundTripMs = 0;
  if (config.roundTrip.kind === "lognormal") {
    const sigma = Math.log(config.roundTrip.p99Ms / config.roundTrip.medianMs) / Z99;
    const z = Math.sqrt(-2 * Math.log(1 - a)) * Math.cos(2 * Math.PI * b);
    roundTripMs = config.roundTrip.medianMs * Math.exp(sigma * z);
  }
  return { profile: CLIENT_PROFILES[style], roundTripMs };
}

/** A short description of a clients block for reports, e.g. "openai_node 50%, ...; round trip log-normal ...". */
export function describeClients(config: ClientsConfig): string {
  const entries = Object.entries(config.mix).filter(([, s]) => (s ?? 0) > 0) as [string, number][];
  const total = entries.reduce((s, [, v]) => s + v, 0);
  const mix = entries.map(([k, v]) => `${k} ${Math.round((v / total) * 100)}%`).join(", ");
  const rt =
    config.roundTrip.kind === "zero"
      ? "zero round trip"
      : `round trip log-normal (median ${config.roundTrip.medianMs} ms, p99 ${config.roundTrip.p99Ms} ms)`;
  return `${mix}; ${rt}; Worker to router ${config.workerToRouterMs} ms`;
}
