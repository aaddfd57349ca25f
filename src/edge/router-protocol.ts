import type { RouterStats } from "../core/router-core";

/** The router's answer to `acquire` (the driver's result, shared with the simulator). */
export type { AcquireResult } from "../core/router-driver";

/** A router's stats, named by deployment and shard. */
export interface ShardStats extends RouterStats {
  deployment: string;
  shard: number;
  /** Sizes of the Durable Object's own collections: all bounded, and waiters 0 once the queue is empty. */
  internal: { waiters: number; recentlyCancelled: number; pendingObservations: number };
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
