/** A slot given back to its router: the acquire's ticket, and whether the replica failed while holding it. */
export type ReleasedSlot = readonly [ticket: string, replicaFailed: boolean];

/** The part of a router stub that takes slots back, many at a time. */
export interface SlotSink {
  releaseAll(released: readonly ReleasedSlot[]): Promise<void>;
}

/** One router's releases not yet sent, and whether a request of this isolate is sending some now. */
interface RouterReleases {
  pending: ReleasedSlot[];
  sending: boolean;
}

/** Rounds one request's `waitUntil` sends for others before it leaves the rest to the next release. */
const SEND_ROUNDS_MAX = 8;

/**
 * Releases of router slots, batched per isolate: the second Durable Object call of every admitted request (its
 * `release`) is what makes the admitted path cost more than a pass-through Worker, and under load most of them
 * can ride along. A release is sent at once when no release to that router is in flight from this isolate;
 * otherwise it waits (for at most that call's round trip, never for a timer) and goes with the next batch, or
 * with the next `acquire` to the same router, which carries every release waiting at that moment
 * ({@link takeFor}). Nothing is added to an idle router's latency, and nothing waits on a promise of another
 * request: the batch holds plain data, and each request sends with its own stub in its own `waitUntil`.
 *
 * Releases are idempotent in the router (an unknown ticket is ignored), so a batch whose call failed is put back
 * and sent again; one lost with a restarted router was unknown to the fresh one anyway.
 *
 * @example
 * ```ts
 * const batch = new ReleaseBatch();
 * const carried = batch.takeFor("llama#0");
 * const result = await router.acquire("llama", 0, ticket, options, carried); // on a thrown error: batch.putBack(...)
 * // when the answer has been delivered:
 * ctx.waitUntil(batch.release("llama#0", [ticket, false], () => env.DEPLOYMENT_ROUTER.getByName("llama#0")));
 * ```
 */
export class ReleaseBatch {
  private readonly routers = new Map<string, RouterReleases>();

  /**
   * Queues one release for `router` and returns what the caller must keep alive (`waitUntil`): the sending
   * rounds this request took on, or an already settled promise when another request's call will carry it.
   */
  release(router: string, released: ReleasedSlot, sinkOf: () => SlotSink): Promise<void> {
    const state = this.stateOf(router);
    state.pending.push(released);
    if (state.sending) return Promise.resolve();
    state.sending = true;
    return this.send(state, sinkOf);
  }

  /** Takes every release waiting for `router`, for an `acquire` to carry; empty when none waits. */
  takeFor(router: string): ReleasedSlot[] {
    const state = this.routers.get(router);
    if (!state || state.pending.length === 0) return [];
    const taken = state.pending;
    state.pending = [];
    return taken;
  }

  /** Puts back releases whose carrying call failed, and sends them (the returned promise is for `waitUntil`). */
  putBack(router: string, released: readonly ReleasedSlot[], sinkOf: () => SlotSink): Promise<void> {
    if (released.length === 0) return Promise.resolve();
    const state = this.stateOf(router);
    state.pending.push(...released);
    if (state.sending) return Promise.resolve();
    state.sending = true;
    return this.send(state, sinkOf);
  }

  /** Releases waiting for `router` (for tests and stats). */
  pendingFor(router: string): number {
    return this.routers.get(router)?.pending.length ?? 0;
  }

  private stateOf(router: string): RouterReleases {
    let state = this.routers.get(router);
    if (!state) {
      state = { pending: [], sending: false };
      this.routers.set(router, state);
    }
    return state;
  }

  /**
   * Sends batches until none waits. The last round gives up the sender's role *before* its call, so a release
   * queued while it is in flight starts its own sender: nothing is left waiting without one.
   */
  private async send(state: RouterReleases, sinkOf: () => SlotSink): Promise<void> {
    for (let round = 1; ; round++) {
      const batch = state.pending;
      state.pending = [];
      if (batch.length === 0) {
        state.sending = false;
        return;
      }
      const last = round === SEND_ROUNDS_MAX;
      if (last) state.sending = false;
      try {
        await sinkOf().releaseAll(batch);
      } catch {
        // Unreachable or restarted: a restarted router does not know these tickets; an unreachable one frees
        // its slots when it is reset. Sending again would only add load to a router in trouble.
      }
      if (last) return;
    }
  }
}
