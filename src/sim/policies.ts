import type { z } from "zod";
import type { CapacityBookingOptions } from "../core/capacity-booking";
import type { RetryAfterPolicyName } from "../core/retry-after";
import type { routerSettingsShape } from "../core/router-schema";
import type { HintScheduleTable } from "./hint-schedule";

/**
 * The admission block of a deployment's settings (`booking`), every field optional, as the schema takes it in.
 *
 * @example
 * ```ts
 * const booking: BookingSettings = { demoteAfterS: 10, demotedOrder: "arrival" };
 * ```
 */
export type BookingSettings = NonNullable<z.input<typeof routerSettingsShape.booking>>;

/** One Retry-After configuration compared in the evaluation. Every client meets every policy (the scenario's mix). */
export interface PolicySpec {
  /** Short id used in tables and JSON. */
  id: string;
  label: string;
  retryAfterPolicy: RetryAfterPolicyName;
  /** The static value (the policy `static`, or the computed policies' fallback rung). */
  retryAfterS?: number;
  /**
   * `booked_capacity`'s admission block, when not the config's default (tuning runs): a deployment's `booking`
   * settings as its schema accepts them, so a new setting is a variant's as soon as the router has it.
   */
  booking?: BookingSettings;
  /** `booked_capacity`'s ledger tunables, when not the defaults (variants of the default). */
  ledger?: Partial<CapacityBookingOptions>;
  /**
   * `booked_capacity` told the run's own fresh arrivals of every coming second (a 5 s mean) instead of forecasting
   * them: the variant `clairvoyant-forecast`, which measures what the forecast's errors cost. Simulator only.
   */
  clairvoyantForecast?: boolean;
  /**
   * `booked_capacity`'s ledger told the fleet's measured capacity (its share per shard, less after a replica loss)
   * in place of its drain-rate EWMA: the variant `known-capacity`, which measures what that estimate's errors cost.
   * Simulator only; a run needs the measured capacity (`runSimulation`'s `known`).
   */
  knownCapacity?: boolean;
  /**
   * The hints of this table in place of the policy's where it covers a refusal (the ledger's, nothing booked for
   * them; or the constant or drain estimate of the others): what `npm run eval:hint-search` searches. Simulator only.
   */
  hintSchedule?: HintScheduleTable;
}

/** The default policy's id: the config's default `retryAfterPolicy` (checked by test/node/sim/evaluation-json.test.ts). */
export const DEFAULT_POLICY_ID = "booked_capacity";

/**
 * The policies the evaluation compares, in the same runs (same seed, same arrivals, same clients). The computed
 * policies keep the config's default ladder: no static fallback, so a cold router sends no header.
 *
 * @example
 * ```ts
 * EVAL_POLICIES.map((p) => p.id); // ["none", "static-1", ...]
 * ```
 */
export const EVAL_POLICIES: readonly PolicySpec[] = [
  { id: "none", label: "no header", retryAfterPolicy: "static" },
  { id: "static-1", label: "static 1 s", retryAfterPolicy: "static", retryAfterS: 1 },
  { id: "static-5", label: "static 5 s", retryAfterPolicy: "static", retryAfterS: 5 },
  { id: "static-30", label: "static 30 s", retryAfterPolicy: "static", retryAfterS: 30 },
  {
    id: "router_queue_drain_rate",
    label: "router_queue_drain_rate (RFC, saturation factor)",
    retryAfterPolicy: "router_queue_drain_rate",
  },
  { id: "queue_drain_rate", label: "queue_drain_rate (no saturation factor)", retryAfterPolicy: "queue_drain_rate" },
  { id: "retry_schedule", label: "retry_schedule (counts scheduled retries)", retryAfterPolicy: "retry_schedule" },
  {
    id: "booked_capacity",
    label: "booked_capacity (default: future capacity booked per request, queue-delay target)",
    retryAfterPolicy: "booked_capacity",
  },
];

/** Ids of the static policies, for "best static" comparisons. */
export const STATIC_POLICY_IDS = ["static-1", "static-5", "static-30"] as const;
