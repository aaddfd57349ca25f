import { DurableObject } from "cloudflare:workers";
import type { Env } from "./env";

/** What the router answers when asked for a slot. */
export interface Placement {
  /** The replica's base URL, e.g. `http://127.0.0.1:8001`. */
  replica: string;
}

/**
 * The router of one deployment: a Durable Object that decides where each request goes.
 *
 * This is the foundation's slice (round-robin over the configured replicas); the edge-router issue
 * replaces its insides with the bounded queue, power of two choices and computed Retry-After.
 *
 * @example
 * ```ts
 * const router = env.DEPLOYMENT_ROUTER.getByName("demo-model");
 * const { replica } = await router.acquire(["http://127.0.0.1:8001"]);
 * ```
 */
export class DeploymentRouter extends DurableObject<Env> {
  private next = 0;

  /** Picks a replica for one request. */
  async acquire(replicas: string[]): Promise<Placement> {
    if (replicas.length === 0) throw new Error("deployment has no replicas");
    const replica = replicas[this.next % replicas.length] as string;
    this.next += 1;
    return { replica };
  }
}
