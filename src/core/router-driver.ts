import type { DrainAccuracyTracker } from "./drain-accuracy";
import type { Rung } from "./retry-after";
import {
  type Rejection,
  type RejectionReason,
  type ReleaseOutcome,
  type RoundPlan,
  RouterCore,
  type RouterStats,
  type SubmitOptions,
} from "./router-core";
import type { RouterOptions } from "./router-options";

/** A probe's answer: the replica's queue length, `undefined` when it failed, `"timeout"` past its deadline. */
export type ProbeAnswer = number | undefined | "timeout";

/** The router's answer to one attempt: a replica slot (a lease), or a refusal with its Retry-After. */
export type AcquireResult =
  | { kind: "admitted"; replica: string }
  | {
      kind: "rejected";
      status: number;
      reason: RejectionReason | "cancelled" | "router_restart";
      message: string;
      /** The ladder's rung that produced the hint ("none" for a refusal without one). */
      rung: Rung;
      /** `Retry-After` header value (whole seconds), absent on the ladder's "none" rung. */
      retryAfterS?: number;
      /** `retry-after-ms` header value. */
      retryAfterMs?: number;
    };

/** Called exactly once per `acquire`: at once for a refusal, later for a placement or a shed. */
export type Respond = (result: AcquireResult) => void;

/**
 * Everything the driver does not compute: the clock, timers, probes, and observers of its decisions. The
 * Durable Object implements it with `Date`, `setTimeout`, microtasks and `fetch`; the simulator with its event
 * loop. Callbacks may run later (a promise, an event) or, for `probe`, at once.
 */
export interface RouterDriverIO {
  /** Milliseconds on the router's clock (also the core's clock). */
  now(): number;
  /** Runs `fire` after `delayMs`; the returned function cancels it (a no-op once it has fired). */
  setTimer(delayMs: number, fire: () => void): () => void;
  /** Runs `run` after the current step, before any timer (Durable Object: a microtask; simulator: a 0 ms event). */
  defer(run: () => void): void;
  /** Asks `replica` for its queue length (`GET /load`) within `deadlineMs`; calls `answer` once. */
  probe(replica: string, deadlineMs: number, answer: (queueLength: ProbeAnswer) => void): void;
  /** Sees every refusal the core computed (the Durable Object logs it and writes analytics). */
  onRejection?(rejection: Rejection): void;
  /** Sees every placement, with the queue depth left behind and the tenant placed (when it has one). */
  onAdmission?(replica: string, queueDepth: number, tenant?: string): void;
}

/** What builds a router incarnation's core (a restart builds a fresh, cold one). */
export interface RouterDriverDeps {
  options: RouterOptions;
  random: () => number;
  /** A fresh accuracy tracker per incarnation; the core's default (it keeps 256) when absent. */
  accuracy?: () => DrainAccuracyTracker;
}

/** Cancels remembered before their acquire arrived; bounded (the oldest is forgotten first). */
const RECENTLY_CANCELLED_MAX = 1024;
/** The expiry timer fires this long after the earliest deadline, so `expire()` always finds it passed. */
const EXPIRY_SLACK_MS = 5;

const CANCELLED: AcquireResult = {
  kind: "rejected",
  status: 499,
  reason: "cancelled",
  message: "client closed the request",
  rung: "none",
};

const RESTARTED: AcquireResult = {
  kind: "rejected",
  status: 500,
  reason: "router_restart",
  message: "the router restarted",
  rung: "none",
};

/**
 * A core rejection as the Worker answers it.
 *
 * @example
 * ```ts
 * const submitted = core.submit("t1");
 * if (submitted.kind === "rejected") rejected(submitted.rejection).status; // 429
 * ```
 */
export function rejected(rejection: Rejection): AcquireResult {
  const { decision } = rejection;
  return {
    kind: "rejected",
    status: rejection.statusCode,
    reason: rejection.reason,
    message: rejection.message,
    rung: decision.rung,
    ...(decision.retryAfterS !== undefined ? { retryAfterS: decision.retryAfterS } : {}),
    ...(decision.retryAfterMs !== undefined ? { retryAfterMs: decision.retryAfterMs } : {}),
  };
}

/**
 * The one driver of {@link RouterCore}, shared by the Durable Object and the simulator so that a simulated
 * decision is the deployed one. It owns the round protocol (begin a round, probe the candidates that need it,
 * finish the round), one placement loop at a time, the backoff sleep (ended early by a released slot: a replica
 * has room now), the expiry timer (`nextExpiryMs() + 5 ms`), cancels that overtake their acquire, and restarts.
 * All waiting goes through {@link RouterDriverIO}.
 *
 * `restart()` models a Durable Object restart: waiting requests fail with 500, the core is rebuilt cold, leases
 * released later are unknown to it, and answers or timers of the old incarnation are ignored.
 *
 * @example
 * ```ts
 * const driver = new RouterDriver({ options, random: Math.random }, io);
 * driver.acquire("t1", {}, (result) => {
 *   if (result.kind === "admitted") forward(result.replica).finally(() => driver.release("t1"));
 * });
 * ```
 */
export class RouterDriver {
  private current: RouterCore;
  private readonly waiting = new Map<string, Respond>();
  private readonly recentlyCancelled = new Set<string>();
  private placing = false;
  /** Ends the placement loop's sleep early; set while it sleeps. */
  private wakeSleep: (() => void) | undefined;
  /** The loop sleeps a headroom hold: an arrival (maybe of a tenant below its share) wakes it too. */
  private wakeOnArrival = false;
  /** The armed expiry timer: the deadline it was set for (ms) and how to cancel it. */
  private expiry: { dueMs: number; cancel: () => void } | undefined;
  /** Bumped by a restart: continuations of the previous incarnation become no-ops. */
  private incarnation = 0;

  constructor(
    private readonly deps: RouterDriverDeps,
    private readonly io: RouterDriverIO,
  ) {
    this.current = this.buildCore();
  }

  /** The current incarnation's core, for read-only views (stats, load signals). */
  get core(): RouterCore {
    return this.current;
  }

  /** Requests waiting for a placement (0 once the queue is empty). */
  get waiters(): number {
    return this.waiting.size;
  }

  /** Cancels remembered for an acquire that may still come (at most 1024): one not seen yet, or one asked again. */
  get recentlyCancelledCount(): number {
    return this.recentlyCancelled.size;
  }

  /**
   * Asks for a slot. A refusal is answered at once from memory (no I/O); a queued request is answered when the
   * placement loop gives it a replica or it is shed. `options` go to the core untouched.
   */
  acquire(ticket: string, options: SubmitOptions, respond: Respond): void {
    if (this.recentlyCancelled.delete(ticket)) {
      respond(CANCELLED);
      return;
    }
    const submitted = this.current.submit(ticket, options);
    if (submitted.kind === "rejected") {
      respond(this.refuse(submitted.rejection));
      // With `standingTimeoutS`, the arrival that finds the queue standing (and is refused: the target binds) is
      // the one that shortens the waiting requests' deadlines: the timer, armed for the queue's own timeout, must
      // move up (it was re-armed only when a request was queued, and nothing is while the queue stands).
      // So does `demotedQuietTimeoutS`: a refusal ends the quiet that lengthened the demoted requests' deadlines.
      const booking = this.deps.options.booking;
      if (booking?.standingTimeoutS !== undefined || booking?.demotedQuietTimeoutS !== undefined) this.armExpiry();
      return;
    }
    // A full queue may push out another tenant's newest request (the one most over its fair share).
    if (submitted.displaced) this.settle(submitted.displaced.ticket, this.refuse(submitted.displaced.rejection));
    this.waiting.set(ticket, respond);
    if (this.wakeOnArrival) this.wake();
    this.startPlacing();
    this.armExpiry();
  }

  /**
   * Ends a lease (`replicaFailed`: `true` marks the replica down until a probe succeeds, `"full"` makes it count as
   * full until a probe reads it; see `RouterCore.release`) and wakes a sleeping loop.
   */
  release(ticket: string, replicaFailed: ReleaseOutcome = false): void {
    if (this.current.release(ticket, replicaFailed)) this.wake();
  }

  /** The slot of `ticket` now serves another request on the same replica (see `RouterCore.handOff`). */
  handOff(ticket: string, next: Pick<SubmitOptions, "tenant" | "weight" | "priority" | "fingerprint"> = {}): boolean {
    return this.current.handOff(ticket, next);
  }

  /** The client went away: leave the queue or give back the slot. Safe for any ticket, any time. */
  cancel(ticket: string): void {
    const outcome = this.current.cancel(ticket);
    if (outcome === "dequeued") {
      this.settle(ticket, CANCELLED);
    } else if (outcome === "released") {
      this.wake();
    }
    // Remembered in every case: the cancel may have overtaken its acquire (both are messages to the router), or an
    // acquire asked again (the edge's first call failed on the way back) may still come after it. Either is refused
    // when it arrives: its client has gone, and a place queued for it would be lost until placed and released.
    this.recentlyCancelled.add(ticket);
    if (this.recentlyCancelled.size > RECENTLY_CANCELLED_MAX) {
      this.recentlyCancelled.delete(this.recentlyCancelled.values().next().value as string);
    }
  }

  /** The core's stats (advances the estimator to now). */
  stats(): RouterStats {
    return this.current.stats();
  }

  /** The router restarted: waiting requests fail with 500 and the core starts cold. */
  restart(): void {
    this.incarnation += 1;
    const failed = [...this.waiting.values()];
    this.waiting.clear();
    this.recentlyCancelled.clear();
    this.placing = false;
    this.wakeSleep = undefined;
    this.wakeOnArrival = false;
    this.expiry?.cancel();
    this.expiry = undefined;
    this.current = this.buildCore();
    for (const respond of failed) respond(RESTARTED);
  }

  private buildCore(): RouterCore {
    const { options, random, accuracy } = this.deps;
    return new RouterCore(options, this.io, random, accuracy?.());
  }

  private refuse(rejection: Rejection): AcquireResult {
    this.io.onRejection?.(rejection);
    return rejected(rejection);
  }

  private settle(ticket: string, result: AcquireResult): boolean {
    const respond = this.waiting.get(ticket);
    if (!respond) return false;
    this.waiting.delete(ticket);
    respond(result);
    return true;
  }

  private wake(): void {
    this.wakeSleep?.();
  }

  /** One placement loop at a time; it runs while anything is queued. */
  private startPlacing(): void {
    if (this.placing) return;
    this.placing = true;
    this.placeQueued(this.incarnation);
  }

  /** Runs rounds until the queue is empty, or until it must wait for probes or a backoff (which resume it). */
  private placeQueued(incarnation: number): void {
    if (incarnation !== this.incarnation) return;
    for (let plan = this.current.beginRound(); plan; plan = this.current.beginRound()) {
      if (plan.probe.length > 0) {
        this.probeThenFinish(plan, incarnation);
        return;
      }
      if (!this.finishRound(plan)) return;
    }
    this.placing = false;
  }

  /** Probes the round's candidates concurrently; the last answer finishes the round and resumes the loop. */
  private probeThenFinish(plan: RoundPlan, incarnation: number): void {
    let outstanding = plan.probe.length;
    for (const replica of plan.probe) {
      let answered = false;
      this.io.probe(replica, plan.probeDeadlineMs, (queueLength) => {
        if (answered || incarnation !== this.incarnation) return;
        answered = true;
        this.current.reportProbe(replica, queueLength);
        outstanding -= 1;
        if (outstanding === 0 && this.finishRound(plan)) this.placeQueued(incarnation);
      });
    }
  }

  /** Finishes a round; false when the loop now sleeps a backoff (it resumes itself). */
  private finishRound(plan: RoundPlan): boolean {
    const core = this.current;
    const outcome = core.finishRound(plan);
    if (outcome.kind === "placed") {
      this.io.onAdmission?.(outcome.replica, core.queueDepth, outcome.tenant);
      // The waiter may have gone between the round's start and now; give its slot back.
      if (!this.settle(outcome.ticket, { kind: "admitted", replica: outcome.replica })) core.release(outcome.ticket);
      return true;
    }
    if (outcome.kind === "backoff") {
      for (const { ticket, rejection } of outcome.shed) this.settle(ticket, this.refuse(rejection));
      this.sleep(outcome.delayMs, false);
      return false;
    }
    if (outcome.kind === "held") {
      this.sleep(outcome.delayMs, true);
      return false;
    }
    return true;
  }

  /**
   * Sleeps the placement backoff (or a headroom hold); a released slot ends it early, after the current step, and
   * so does an arrival when `untilArrival` (a hold: the newcomer may be of a tenant the headroom is kept for).
   */
  private sleep(delayMs: number, untilArrival: boolean): void {
    const incarnation = this.incarnation;
    let done = false;
    let cancelTimer = () => {};
    const resume = () => {
      if (done) return;
      done = true;
      cancelTimer();
      if (incarnation !== this.incarnation) return;
      this.wakeSleep = undefined;
      this.wakeOnArrival = false;
      this.placeQueued(incarnation);
    };
    cancelTimer = this.io.setTimer(delayMs, resume);
    this.wakeOnArrival = untilArrival;
    this.wakeSleep = () => {
      this.wakeSleep = undefined;
      this.wakeOnArrival = false;
      this.io.defer(resume);
    };
  }

  /**
   * Sheds requests past the queue timeout and reclaims abandoned leases, on a timer while any exist. A timer armed
   * for a later deadline (a lease's, minutes away) is re-armed for an earlier one (a request queued since, whose
   * queue timeout comes first): keeping it let queued requests wait until the lease's deadline, far past
   * `queueTimeoutMs`.
   */
  private armExpiry(): void {
    const next = this.current.nextExpiryMs();
    if (next === undefined) return;
    if (this.expiry !== undefined) {
      if (this.expiry.dueMs <= next) return;
      this.expiry.cancel();
    }
    const incarnation = this.incarnation;
    const cancel = this.io.setTimer(Math.max(0, next - this.io.now()) + EXPIRY_SLACK_MS, () => {
      if (incarnation !== this.incarnation) return;
      this.expiry = undefined;
      const { timedOut, reclaimed } = this.current.expire();
      for (const { ticket, rejection } of timedOut) this.settle(ticket, this.refuse(rejection));
      if (reclaimed.length > 0) this.wake();
      this.armExpiry();
    });
    this.expiry = { dueMs: next, cancel };
  }
}
