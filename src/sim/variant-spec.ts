import { z } from "zod";
import { type CapacityBookingOptions, DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../core/capacity-booking";
import { routerSettingsShape } from "../core/router-schema";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "./policies";
import { DEFAULT_POLICY_VARIANTS } from "./variants";

/**
 * The ledger's tunables as a strict schema, built from the defaults so that a new tunable is accepted as soon as it
 * has a default: each value keeps its default's type (a number or a boolean).
 */
const ledgerSchema = z
  .strictObject(
    Object.fromEntries(
      Object.entries(DEFAULT_CAPACITY_BOOKING_OPTIONS).map(([key, value]) => [
        key,
        typeof value === "boolean" ? z.boolean() : z.number().finite(),
      ]),
    ) as Record<keyof CapacityBookingOptions, z.ZodBoolean | z.ZodNumber>,
  )
  .partial();

/** The admission block as the router's settings accept it (every field optional: the rest keep their defaults). */
const bookingSchema = routerSettingsShape.booking.unwrap().partial();

const overridesSchema = z.strictObject({
  ledger: ledgerSchema.optional(),
  booking: bookingSchema.optional(),
  clairvoyantForecast: z.boolean().optional(),
  knownCapacity: z.boolean().optional(),
});

/**
 * The default policy with some of its tunables changed, from a command line: either the id of one of the
 * default's variants (`src/sim/variants.ts`) or a JSON object `{ "ledger": {...}, "booking": {...} }` whose fields
 * are the ledger's tunables (`CapacityBookingOptions`) and the router's `booking` settings, and, for the simulator's
 * counterfactuals, `"clairvoyantForecast": true` and `"knownCapacity": true` (`PolicySpec`): so that a change can be
 * scored with the forecast's or the drain rate's errors taken away. Unknown fields and values of the wrong type are
 * refused with the field's name: a typo must not score the default under another name.
 *
 * @example
 * ```ts
 * parseVariantSpec("two-step").ledger; // { twoStepHorizons: 2 }
 * parseVariantSpec('{"ledger":{"burstFadeS":5}}').id; // 'booked_capacity:{"ledger":{"burstFadeS":5}}'
 * parseVariantSpec('{"knownCapacity":true,"ledger":{"horizonPackS":120}}').knownCapacity; // true
 * parseVariantSpec('{"ledger":{"burstFade":5}}'); // throws: unrecognized key "burstFade" at ledger
 * ```
 */
export function parseVariantSpec(text: string): PolicySpec {
  const known = DEFAULT_POLICY_VARIANTS.find((v) => v.id === text);
  if (known) return known.spec;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const ids = DEFAULT_POLICY_VARIANTS.map((v) => v.id).join(", ");
    throw new Error(`not a variant id (${ids}) nor a JSON object of overrides: ${text}`);
  }
  const parsed = overridesSchema.safeParse(json);
  if (!parsed.success) throw new Error(`invalid overrides: ${z.prettifyError(parsed.error)}`);
  const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;
  // Validated, the fields are taken as given (the strict schema admits only the four): the schema's defaults would
  // name every admission setting.
  const overrides = json as Pick<PolicySpec, "ledger" | "booking" | "clairvoyantForecast" | "knownCapacity">;
  const label = JSON.stringify(json);
  return { ...base, ...overrides, id: `${DEFAULT_POLICY_ID}:${label}`, label: `${DEFAULT_POLICY_ID} (${label})` };
}
