import type { PriorityClass } from "../core/fair-queue";
import type { ReleaseOutcome } from "../core/router-core";

/**
 * A slot given back to its router: the acquire's ticket, and what its end said of the replica: `false` nothing,
 * `true` it failed (marked down), `"full"` it refused the request as full itself (a 429; see `RouterCore.release`).
 */
export type ReleasedSlot = readonly [ticket: string, replicaFailed: ReleaseOutcome];

/**
 * A slot handed from a request that ended to the next one in the isolate: its ticket and who holds it now (the
 * request's fingerprint too, so that the router knows a retry it hinted when one comes back this way).
 */
export type HandedOffSlot = readonly [
  ticket: string,
  tenant: string | undefined,
  weight: number,
  priority: PriorityClass,
  fingerprint?: string,
];

/** What one call to a router carries besides its own business: other requests' releases and hand-offs. */
export interface CarriedSlots {
  released: ReleasedSlot[];
  handedOff: HandedOffSlot[];
}

/** A router's answer that renews (or ends) an isolate's leave to hand slots on: how long, from its receipt. */
export interface HandoffLeave {
  handoffMs?: number;
}

/** The part of a router stub that takes slots back and hears of hand-offs, many at a time. */
export interface SlotSink {
  releaseAll(
    released: readonly ReleasedSlot[],
    handedOff?: readonly HandedOffSlot[],
  ): Promise<HandoffLeave | undefined>;
}

/** A slot a request took over from one that ended, without asking the router. */
export interface TakenSlot {
  ticket: string;
  replica: string;
}

/** One router's slots in this isolate: what is not sent yet, what is parked, and the router's leave. */
interface RouterSlots {
  released: ReleasedSlot[];
  handedOff: HandedOffSlot[];
  /** When the oldest unsent hand-off report was made. */
  handedOffSinceMs: number;
  sending: boolean;
  /** When the sender's call in flight went out (this isolate's clock): past {@link SENDER_LOST_MS} it is lost. */
  sendingSinceMs: number;
  /** Senders started so far; the latest holds the role (while `sending`). */
  senders: number;
  /** Senders up to this one were taken for lost: one whose call answers after all stops there. */
  lostSenders: number;
  /** Slots whose request ended, kept for the next request for a moment (see {@link SlotBatch.end}). */
  parked: Array<{ slot: TakenSlot; atMs: number }>;
  /** A sweep of the parked slots is armed (one timer per router, not one per request). */
  sweeping: boolean;
  /** Until when (this isolate's clock) the router lets it hand slots on; 0: not now. */
  leaveUntilMs: number;
}

/** Rounds one request's `waitUntil` sends for others before it leaves the rest to the next release. */
const SEND_ROUNDS_MAX = 8;
/**
 * How long a slot whose request ended waits for the isolate's next request before it goes back to the router.
 * While parked it is still the router's (counted on its replica), so this is capacity held idle: kept short.
 */
export const PARK_MS = 10;
/**
 * Hand-off reports wait for a call that goes anyway (a release, an acquire), up to this many or this old: a call
 * per hand-off would cost what the hand-off saves.
 */
export const REPORT_BATCH = 32;
export const REPORT_MAX_AGE_MS = 100;
/** Rounds of one sweep (one request's `waitUntil`): a second of parking at most, then the next end starts another. */
export const SWEEP_ROUNDS_MAX = 100;
/**
 * A sender whose call has been in flight this long is taken for lost, and the next release or report starts
 * another: a request's `waitUntil` ends 30 s after its response, and workerd never settles a call its ended request
 * left in flight, so a sender waiting on one would hold the role for the isolate's life while releases and reports
 * piled up unsent.
 */
export const SENDER_LOST_MS = 30_000;

/**
 * Router slots, batched per isolate. The second Durable Object call of every admitted request (its `release`) is
 * sent at once only when no call to that router is in flight from this isolate; the ones that come meanwhile go
 * together in one `releaseAll`, or ride on the next `acquire` to the same router ({@link takeFor}; hand-off reports
 * go only with `releaseAll`, in order). Nothing
 * waits for a timer, and nothing waits on a promise of another request: the batch holds plain data, and each
 * request sends with its own stub in its own `waitUntil`.
 *
 * With the router's leave (`slotHandoffMs`: an answer's `handoffMs`, given only while nothing waits there), a
 * request that ends parks its slot for {@link PARK_MS}; a request arriving meanwhile takes it ({@link take}) and
 * goes to the same replica without asking the router, which hears of it in the next batch (`handedOff`) and
 * counts it as one request ended and the next placed. Every answer renews or ends the leave; without it, a slot
 * is released as before. Releases are idempotent in the router (an unknown ticket is ignored), so the releases
 * an `acquire` carried are put back and sent again when it fails; a `releaseAll` that fails is not retried (the
 * router restarted, or cannot be reached: a restarted router does not know those tickets). A sender whose call has
 * not answered in {@link SENDER_LOST_MS} is taken for lost, and the next release or report starts another.
 *
 * @example
 * ```ts
 * const batch = new SlotBatch();
 * const slot = batch.take("llama#0");                  // a parked slot, or ask the router:
 * const carried = batch.takeFor("llama#0");
 * const answer = await router.acquire("llama", 0, ticket, options, carried); // threw: batch.putBack(...)
 * // when the answer has been delivered (undefined: another request's call or sweep carries it):
 * const keep = batch.end("llama#0", { ticket, replica }, false, () => env.DEPLOYMENT_ROUTER.getByName("llama#0"));
 * if (keep) ctx.waitUntil(keep);
 * ```
 */
export class SlotBatch {
  private readonly routers = new Map<string, RouterSlots>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * A request's slot is done with: parked for the isolate's next request while the router's leave lasts (and
   * the replica neither failed nor said it was full), otherwise released. Returns what the caller must keep alive
   * (`waitUntil`), or `undefined` when another request's call or sweep carries it (no `waitUntil` to pay for).
   */
  end(
    router: string,
    slot: TakenSlot,
    replicaFailed: ReleaseOutcome,
    sinkOf: () => SlotSink,
  ): Promise<void> | undefined {
    const state = this.stateOf(router);
    if (replicaFailed) {
      // Its replica is marked down (or full): the parked slots on it go back too, so no request is handed to it
      // (and their releases reach the router before this one, which a plain release would not undo).
      const onIt = state.parked.filter((p) => p.slot.replica === slot.replica);
      state.parked = state.parked.filter((p) => p.slot.replica !== slot.replica);
      for (const p of onIt) state.released.push([p.slot.ticket, false]);
    } else if (this.now() < state.leaveUntilMs) {
      state.parked.push({ slot, atMs: this.now() });
      if (state.sweeping) return undefined;
      state.sweeping = true;
      return this.sweep(state, sinkOf);
    }
    return this.queue(state, [slot.ticket, replicaFailed], sinkOf);
  }

  /**
   * A request's slot failed (its replica could not be reached, or took nothing) and the request asks the router
   * again at once: the releases to carry on that acquire, in order - the failed replica's parked slots, then this
   * one. Sent on their own, they would go on another stub, which Workers does not order after this one: the acquire
   * could reach the router first, and be placed on the replica that just failed. `keep` is what the caller must keep
   * alive when they cannot ride (a hand-off report of one of them still waits, and reports go first, only in the
   * batch's own `releaseAll`): then it is {@link end}.
   *
   * @example
   * ```ts
   * const { carry, keep } = batch.endBeforeRetry("llama#0", { ticket, replica }, true, sinkOf);
   * // carry goes in the next acquire's `carried.released`, ahead of what `takeFor` gives
   * ```
   */
  endBeforeRetry(
    router: string,
    slot: TakenSlot,
    replicaFailed: true | "full",
    sinkOf: () => SlotSink,
  ): { carry: ReleasedSlot[]; keep: Promise<void> | undefined } {
    const state = this.stateOf(router);
    const onIt = state.parked.filter((p) => p.slot.replica === slot.replica);
    const reported = new Set(state.handedOff.map(([ticket]) => ticket));
    if ([slot, ...onIt.map((p) => p.slot)].some((s) => reported.has(s.ticket))) {
      return { carry: [], keep: this.end(router, slot, replicaFailed, sinkOf) };
    }
    state.parked = state.parked.filter((p) => p.slot.replica !== slot.replica);
    return {
      carry: [...onIt.map((p): ReleasedSlot => [p.slot.ticket, false]), [slot.ticket, replicaFailed]],
      keep: undefined,
    };
  }

  /**
   * A slot that goes back to the router, never parked for the next request: one the router may already count free
   * (its request's cancel went out after the router placed it). Returns what the caller must keep alive, if anything.
   */
  release(router: string, released: ReleasedSlot, sinkOf: () => SlotSink): Promise<void> | undefined {
    return this.queue(this.stateOf(router), released, sinkOf);
  }

  /** A parked slot of `router` for a new request, while the router's leave lasts; `undefined`: ask the router. */
  take(router: string): TakenSlot | undefined {
    const state = this.routers.get(router);
    if (!state || state.parked.length === 0 || this.now() >= state.leaveUntilMs) return undefined;
    return state.parked.pop()?.slot;
  }

  /**
   * Reports that a slot was taken over ({@link take}): sent with the next call that goes anyway, or once
   * {@link REPORT_BATCH} wait or the oldest is {@link REPORT_MAX_AGE_MS} old. Returns what the caller must keep
   * alive (`waitUntil`), if anything.
   */
  handedOff(router: string, slot: HandedOffSlot, sinkOf: () => SlotSink): Promise<void> | undefined {
    const state = this.stateOf(router);
    if (state.handedOff.length === 0) state.handedOffSinceMs = this.now();
    state.handedOff.push(slot);
    const due = state.handedOff.length >= REPORT_BATCH || this.now() - state.handedOffSinceMs >= REPORT_MAX_AGE_MS;
    return due ? this.startSending(state, sinkOf) : undefined;
  }

  /**
   * Takes the releases waiting for `router`, for an `acquire` to carry: all but those of slots whose hand-off report
   * waits too. Reports go only with the batch's own `releaseAll` (one sender, in order, hand-offs before releases):
   * an acquire that fails puts back what it carried, and a report put back after its slot's release (or a later
   * hand-off of the slot) had gone out would reach the router out of order - a hand-off of a slot it no longer
   * knows, not counted, or the wrong holder recorded.
   */
  takeFor(router: string): CarriedSlots {
    const state = this.routers.get(router);
    if (!state) return { released: [], handedOff: [] };
    const reported = new Set(state.handedOff.map(([ticket]) => ticket));
    const released = state.released.filter(([ticket]) => !reported.has(ticket));
    state.released = state.released.filter(([ticket]) => reported.has(ticket));
    return { released, handedOff: [] };
  }

  /** Puts back what a failed call carried, and sends it (the returned promise is for `waitUntil`). */
  putBack(router: string, carried: CarriedSlots, sinkOf: () => SlotSink): Promise<void> | undefined {
    if (carried.released.length === 0 && carried.handedOff.length === 0) return undefined;
    const state = this.stateOf(router);
    state.released.push(...carried.released);
    state.handedOff.push(...carried.handedOff);
    return this.startSending(state, sinkOf);
  }

  /**
   * A router's answer: its leave to hand slots on renewed for `handoffMs`, or ended (slots parked then go back
   * when their {@link PARK_MS} is over; none is taken meanwhile).
   */
  heard(router: string, answer: HandoffLeave | undefined): void {
    this.renewLeave(this.stateOf(router), answer);
  }

  /** Releases and hand-offs waiting for `router`, and its parked slots (for tests and stats). */
  pendingFor(router: string): { released: number; handedOff: number; parked: number } {
    const state = this.routers.get(router);
    return {
      released: state?.released.length ?? 0,
      handedOff: state?.handedOff.length ?? 0,
      parked: state?.parked.length ?? 0,
    };
  }

  private stateOf(router: string): RouterSlots {
    let state = this.routers.get(router);
    if (!state) {
      state = {
        released: [],
        handedOff: [],
        handedOffSinceMs: 0,
        sending: false,
        sendingSinceMs: 0,
        senders: 0,
        lostSenders: 0,
        parked: [],
        sweeping: false,
        leaveUntilMs: 0,
      };
      this.routers.set(router, state);
    }
    return state;
  }

  /**
   * Every {@link PARK_MS} while slots are parked: the ones parked that long go back to the router, with any
   * hand-off reports still waiting (so none waits for traffic that may not come).
   */
  private async sweep(state: RouterSlots, sinkOf: () => SlotSink): Promise<void> {
    const sends: Promise<void>[] = [];
    for (let round = 1; ; round++) {
      await new Promise((resolve) => setTimeout(resolve, PARK_MS));
      const now = this.now();
      // The last round gives back every parked slot: one request's waitUntil does not sweep for ever (the
      // runtime ends it 30 s after its response), and a slot is never left parked without a sweep to come.
      const last = round === SWEEP_ROUNDS_MAX;
      const stale = state.parked.filter((p) => last || now - p.atMs >= PARK_MS);
      state.parked = last ? [] : state.parked.filter((p) => now - p.atMs < PARK_MS);
      for (const p of stale) state.released.push([p.slot.ticket, false]);
      if (state.released.length > 0 || state.handedOff.length > 0) {
        const sending = this.startSending(state, sinkOf);
        if (sending) sends.push(sending);
      }
      if (state.parked.length === 0) break;
    }
    state.sweeping = false;
    await Promise.all(sends);
  }

  /** The leave an answer gives (`handoffMs` from now), or none. */
  private renewLeave(state: RouterSlots, answer: HandoffLeave | undefined): void {
    const ms = answer?.handoffMs;
    state.leaveUntilMs = ms !== undefined && ms > 0 ? this.now() + ms : 0;
  }

  private queue(state: RouterSlots, released: ReleasedSlot, sinkOf: () => SlotSink): Promise<void> | undefined {
    state.released.push(released);
    return this.startSending(state, sinkOf);
  }

  private startSending(state: RouterSlots, sinkOf: () => SlotSink): Promise<void> | undefined {
    if (state.sending) {
      if (this.now() - state.sendingSinceMs < SENDER_LOST_MS) return undefined;
      state.lostSenders = state.senders;
    }
    state.sending = true;
    state.sendingSinceMs = this.now();
    state.senders += 1;
    return this.send(state, sinkOf, state.senders);
  }

  /**
   * Sends batches until none waits. The last round gives up the sender's role *before* its call, so a release
   * queued while it is in flight starts its own sender: nothing is left waiting without one.
   */
  private async send(state: RouterSlots, sinkOf: () => SlotSink, sender: number): Promise<void> {
    for (let round = 1; ; round++) {
      const released = state.released;
      const handedOff = state.handedOff;
      state.released = [];
      state.handedOff = [];
      if (released.length === 0 && handedOff.length === 0) {
        state.sending = false;
        return;
      }
      const last = round === SEND_ROUNDS_MAX;
      if (last) state.sending = false;
      state.sendingSinceMs = this.now();
      let answer: HandoffLeave | undefined;
      try {
        answer = await sinkOf().releaseAll(released, handedOff);
      } catch {
        // Unreachable or restarted: a restarted router does not know these tickets, and a single release's
        // failure was never retried either. The leave ends: slots go back to being asked for.
        if (sender <= state.lostSenders) return;
        state.leaveUntilMs = 0;
        if (last) return;
        continue;
      }
      // Taken for lost meanwhile (SENDER_LOST_MS): another sender holds the role now.
      if (sender <= state.lostSenders) return;
      this.renewLeave(state, answer);
      if (last) return;
    }
  }
}
