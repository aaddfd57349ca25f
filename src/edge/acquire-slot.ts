import type { SubmitOptions } from "../core/router-core";
import type { AcquireAnswer } from "./router-protocol";
import type { CarriedSlots } from "./slot-batch";

/** The part of a router stub (`DurableObjectStub<DeploymentRouter>`) that asks for a slot. */
export interface SlotSource {
  acquire(
    deployment: string,
    shard: number,
    ticket: string,
    options?: SubmitOptions,
    carried?: CarriedSlots,
  ): Promise<AcquireAnswer>;
}

/** Other requests' releases and hand-offs an acquire carries to the same router (see `SlotBatch`). */
export interface Carrier {
  /** What to carry on this call (taken from the batch). */
  take(): CarriedSlots;
  /** The call carrying it failed: it goes back to be sent again. */
  failed(carried: CarriedSlots): void;
}

/** How asking the router for a slot ended. */
export type AcquireOutcome =
  | { kind: "answered"; result: AcquireAnswer }
  /** The router could not answer: overloaded (the platform refused the call) or unreachable twice. */
  | { kind: "unavailable"; cause: "overloaded" | "unreachable"; message: string };

/** What the Workers runtime sets on an error thrown by a Durable Object call. */
interface DurableObjectCallError {
  /** The Durable Object's own code threw (our bug or a bad configuration): not a router outage. */
  remote?: boolean;
  /** The object has too many requests queued: calling again makes it worse. */
  overloaded?: boolean;
}

function flags(error: unknown): DurableObjectCallError {
  return typeof error === "object" && error !== null ? (error as DurableObjectCallError) : {};
}

/**
 * Asks a deployment's router for a slot, and survives the router being reset. A Durable Object that restarts
 * (a deploy, an eviction, a crash) fails every call waiting in it; those requests never reached an engine, so
 * nothing is lost by asking again: the request is re-acquired once on a fresh stub (the fresh router), with
 * the time it already waited (`waitedMs`) counted against the queue timeout and placing it by its first
 * arrival. A router that is overloaded, or unreachable twice, is reported as `unavailable`: the caller does
 * what the operator chose (`routerUnavailable`). An error thrown by the router's own code is rethrown.
 * Other requests' releases and hand-offs (`carrier`) ride along with each call; those of a call that threw are
 * handed back.
 *
 * @example
 * ```ts
 * const outcome = await acquireSlot(() => env.DEPLOYMENT_ROUTER.getByName("llama#0"),
 *   { deployment: "llama", shard: 0, ticket: crypto.randomUUID() });
 * if (outcome.kind === "answered" && outcome.result.kind === "admitted") forwardTo(outcome.result.replica);
 * ```
 */
export async function acquireSlot(
  routerOf: () => SlotSource,
  call: { deployment: string; shard: number; ticket: string; options?: SubmitOptions },
  now: () => number = Date.now,
  carrier?: Carrier,
): Promise<AcquireOutcome> {
  const started = now();
  const ask = async (options: SubmitOptions) => {
    const carried = carrier?.take() ?? { released: [], handedOff: [] };
    try {
      return await routerOf().acquire(call.deployment, call.shard, call.ticket, options, carried);
    } catch (error) {
      carrier?.failed(carried);
      throw error;
    }
  };
  try {
    return { kind: "answered", result: await ask(call.options ?? {}) };
  } catch (error) {
    const f = flags(error);
    if (f.remote) throw error;
    if (f.overloaded) return { kind: "unavailable", cause: "overloaded", message: String(error) };
  }
  try {
    // Its wait before this acquire (if the caller gave one) and since: both count against the queue timeout.
    const waitedMs = (call.options?.waitedMs ?? 0) + Math.max(0, now() - started);
    return { kind: "answered", result: await ask({ ...call.options, waitedMs }) };
  } catch (error) {
    const f = flags(error);
    if (f.remote) throw error;
    return { kind: "unavailable", cause: f.overloaded ? "overloaded" : "unreachable", message: String(error) };
  }
}
