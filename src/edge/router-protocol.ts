import type { RouterStats } from "../core/router-core";
import type { AcquireResult } from "../core/router-driver";
import type { DeploymentConfig } from "./config";
import type { HandoffLeave } from "./slot-batch";

/** A Durable Object location hint, as a deployment's `locationHint` names it. */
type LocationHint = NonNullable<DeploymentConfig["locationHint"]>;

/** The driver's result to `acquire`, shared with the simulator. */
export type { AcquireResult };

/**
 * The router's answer to `acquire`: the driver's result, and with an admission, while nothing waits and the
 * deployment allows it (`slotHandoffMs`), the isolate's leave to hand the slot on (see `SlotBatch`).
 */
export type AcquireAnswer = AcquireResult & HandoffLeave;

/** A router's stats, named by deployment and shard. */
export interface ShardStats extends RouterStats {
  deployment: string;
  shard: number;
  /** Sizes of the Durable Object's own collections: all bounded, and waiters 0 once the queue is empty. */
  internal: { waiters: number; recentlyCancelled: number; pendingObservations: number };
  /**
   * Calls this router has answered since it started, by kind, the slots they gave back, and the slots isolates
   * handed from one request to the next without asking (`slotHandoffMs`): with isolates batching their
   * releases (`SlotBatch`) `releaseCalls` is well under `slotsReleased` under load.
   */
  calls: { acquire: number; releaseCalls: number; slotsReleased: number; handedOff: number };
}

/**
 * The Durable Object name of one router: a deployment's shard.
 *
 * @example
 * ```ts
 * routerName("llama", 0); // "llama#0"
 * ```
 */
export function routerName(deployment: string, shard: number): string {
  return `${deployment}#${shard}`;
}

/**
 * Options for `getByName` that place a new router near its deployment's GPUs (a Durable Object location hint;
 * it only matters when the object is first created, so every caller that may create one passes it).
 *
 * @example
 * ```ts
 * env.DEPLOYMENT_ROUTER.getByName(routerName("llama", 0), placement("enam"));
 * ```
 */
export function placement(locationHint: LocationHint | undefined): { locationHint: LocationHint } | undefined {
  return locationHint ? { locationHint } : undefined;
}
