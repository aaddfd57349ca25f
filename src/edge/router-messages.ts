import { z } from "zod";
import type { ReleaseOutcome, SubmitOptions } from "../core/router-core";
import type { CarriedSlots, HandedOffSlot, ReleasedSlot } from "./slot-batch";
import { tenantPlanSchema } from "./tenant-config";

/*
 * What a router (the DeploymentRouter Durable Object) accepts over RPC, checked where it arrives: the core trusts
 * its inputs, and an out-of-range one there is no error but a wrong decision (a weight of -1 or NaN queued without
 * a word, a priority `urgent` failing deep in the fair queue with a TypeError). The tenant's fields have the
 * tenant configuration's ranges (`tenantPlanSchema`), so whatever a plan may say, a router takes.
 */

/** A request's ticket (the Worker's `crypto.randomUUID()`): a key in the router's maps, so bounded. */
const ticket = z.string().min(1).max(128);
/** A request's fingerprint (64 hex digits from the Worker): a key of the ledger, so bounded too. */
const fingerprint = z.string().min(1).max(128);
const tenant = tenantPlanSchema.shape.name;
const weight = tenantPlanSchema.shape.weight.unwrap();
const priority = tenantPlanSchema.shape.priority.unwrap();

/** `acquire`'s options (`SubmitOptions`): each field optional, each in its range. */
const submitOptionsSchema = z.strictObject({
  retry: z.boolean().optional(),
  fingerprint: fingerprint.optional(),
  clientHorizonS: z.number().gt(0).optional(),
  sdkClient: z.boolean().optional(),
  waitedMs: z.number().min(0).optional(),
  tenant: tenant.optional(),
  weight: weight.optional(),
  priority: priority.optional(),
});

/** How a slot ended for its replica (`ReleaseOutcome`): a boolean "failed", as always, or `"full"` (its own 429). */
const releaseOutcome = z.union([z.boolean(), z.literal("full")]);
const releasedSlotSchema = z.tuple([ticket, releaseOutcome]);
const handedOffSlotSchema = z.tuple([ticket, tenant.optional(), weight, priority, fingerprint.optional()]);
const releasedSchema = z.array(releasedSlotSchema);
const handedOffSchema = z.array(handedOffSlotSchema);
const carriedSchema = z.strictObject({ released: releasedSchema, handedOff: handedOffSchema });
/** Which router a call names: a deployment, and one of its shards (checked against the configuration by the router). */
const shardSchema = z.int().min(0);

/** A message a router refused: the error names the call and every bad field. */
export class RouterMessageError extends Error {
  override name = "RouterMessageError";
}

function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  // The value itself, not zod's copy: what a router was sent is what it works with.
  if (result.success) return value as T;
  const problems = result.error.issues.map((issue) => `${[what, ...issue.path].join(".")}: ${issue.message}`);
  throw new RouterMessageError(`invalid router call: ${problems.join("; ")}`);
}

/**
 * The arguments of `acquire`, checked: an out-of-range or malformed one throws a {@link RouterMessageError} that
 * names it; valid ones come back unchanged.
 *
 * @example
 * ```ts
 * checkedAcquire(0, "t-1", { tenant: "acme", weight: 2 }, { released: [], handedOff: [] }); // as given
 * checkedAcquire(0, "t-1", { weight: -1 }, { released: [], handedOff: [] }); // throws: options.weight: ...
 * ```
 */
export function checkedAcquire(
  shard: unknown,
  ticketValue: unknown,
  options: unknown,
  carried: unknown,
): { shard: number; ticket: string; options: SubmitOptions; carried: CarriedSlots } {
  return {
    shard: checked(shardSchema, shard, "shard"),
    ticket: checked(ticket, ticketValue, "ticket"),
    options: checked(submitOptionsSchema, options, "options") as SubmitOptions,
    carried: checked(carriedSchema, carried, "carried") as CarriedSlots,
  };
}

/**
 * A ticket (of `release` or `cancel`), checked.
 *
 * @example
 * ```ts
 * checkedTicket("t-1"); // "t-1"
 * ```
 */
export function checkedTicket(value: unknown): string {
  return checked(ticket, value, "ticket");
}

/**
 * `release`'s word on the replica (`false`, `true`: it failed, `"full"`: it answered 429 itself), checked.
 *
 * @example
 * ```ts
 * checkedReplicaFailed(false); // false
 * checkedReplicaFailed("full"); // "full"
 * checkedReplicaFailed("down"); // throws: replicaFailed: ...
 * ```
 */
export function checkedReplicaFailed(value: unknown): ReleaseOutcome {
  return checked(releaseOutcome, value, "replicaFailed");
}

/**
 * The shard a call names (`stats`), checked: an integer from 0.
 *
 * @example
 * ```ts
 * checkedShard(3); // 3
 * ```
 */
export function checkedShard(value: unknown): number {
  return checked(shardSchema, value, "shard");
}

/**
 * The arguments of `releaseAll`, checked.
 *
 * @example
 * ```ts
 * checkedReleaseAll([["t-1", false], ["t-3", "full"]], [["t-2", "acme", 1, "interactive"]]); // as given
 * ```
 */
export function checkedReleaseAll(
  released: unknown,
  handedOff: unknown,
): { released: ReleasedSlot[]; handedOff: HandedOffSlot[] } {
  return {
    released: checked(releasedSchema, released, "released") as ReleasedSlot[],
    handedOff: checked(handedOffSchema, handedOff, "handedOff") as HandedOffSlot[],
  };
}
