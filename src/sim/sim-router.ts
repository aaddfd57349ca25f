import type { DrainAccuracyTracker } from "../core/drain-accuracy";
import type { Rung } from "../core/retry-after";
import {
  type Rejection,
  type RoundPlan,
  RouterCore,
  type RouterOptions,
  type SubmitOptions,
} from "../core/router-core";
import type { EventLoop } from "./event-loop";

/** The router's answer to one attempt, as the Worker would turn it into a response. */
export type SimAcquireResult =
  | { kind: "admitted"; replica: string }
  | {
      kind: "rejected";
      status: number;
      reason: string;
      rung: Rung | "none";
      retryAfterS?: number;
      retryAfterMs?: number;
    };

/** What the router needs from the fleet: a probe answer (`GET /load`), read when the probe completes. */
export interface SimFleetView {
  queueLength(replica: string): number | undefined;
}

/** Network delays the router sees, ms. */
export interface SimRouterTiming {
  probeMs: number;
}

/** Everything a router incarnation needs to build its core (a restart builds a fresh one, cold). */
export interface SimRouterDeps {
  options: RouterOptions;
  random: () => number;
  /** A fresh accuracy tracker per incarnation (it keeps the drain counter's pending records). */
  accuracy: () => DrainAccuracyTracker;
}

function rejected(rejection: Rejection): SimAcquireResult {
  const { decision } = rejection;
  return {
    kind: "rejected",
    status: rejection.statusCode,
    reason: rejection.reason,
    rung: decision.rung,
    ...(decision.retryAfterS !== undefined ? { retryAfterS: decision.retryAfterS } : {}),
    ...(decision.retryAfterMs !== undefined ? { retryAfterMs: decision.retryAfterMs } : {}),
  };
}

/**
 * One router shard in virtual time, driving {@link RouterCore} exactly as the Durable Object
 * (src/edge/deployment-router.ts) does: submit on acquire (the reject path answers at once), one placement
 * loop at a time (begin a round, probe the candidates that need it, finish the round), the placement backoff
 * woken early by a release, and an expiry timer at `nextExpiryMs() + 5 ms`. Only the waits differ: probes
 * take `probeMs` of simulated time and sleeps are events.
 *
 * `restart()` models a Durable Object restart: queued requests fail (the Worker answers 500), the core is
 * rebuilt cold, and leases released later are unknown to it.
 *
 * @example
 * ```ts
 * const router = new SimRouter(loop, deps, fleet, { probeMs: 2 });
 * router.acquire("t1", (result) => console.log(result.kind));          // a first attempt
 * router.acquire("t1.1", (result) => console.log(result.kind), { retry: true, fingerprint: "f1" }); // its retry
 * ```
 */
export class SimRouter {
  core: RouterCore;
  private readonly waiting = new Map<string, (result: SimAcquireResult) => void>();
  private placing = false;
  private wakeBackoff: (() => void) | undefined;
  private expiryArmed = false;
  /** Bumped by a restart: continuations of the previous incarnation become no-ops. */
  private incarnation = 0;

  constructor(
    private readonly loop: EventLoop,
    private readonly deps: SimRouterDeps,
    private readonly fleet: SimFleetView,
    private readonly timing: SimRouterTiming,
  ) {
    this.core = this.buildCore();
  }

  private buildCore(): RouterCore {
    return new RouterCore(this.deps.options, { now: () => this.loop.now() }, this.deps.random, this.deps.accuracy());
  }

  /**
   * Asks for a slot; `respond` is called once: at once for a rejection, later for a placement or a shed.
   * `options` is what the Worker tells the router (fingerprint, client horizon, `x-stainless-retry-count`).
   */
  acquire(ticket: string, respond: (result: SimAcquireResult) => void, options: SubmitOptions = {}): void {
    const submitted = this.core.submit(ticket, options);
    if (submitted.kind === "rejected") {
      respond(rejected(submitted.rejection));
      return;
    }
    this.waiting.set(ticket, respond);
    this.startPlacing();
    this.armExpiry();
  }

  /** The response ended: give the slot back (wakes a sleeping placement loop, as the DO does). */
  release(ticket: string, replicaFailed = false): void {
    if (this.core.release(ticket, replicaFailed)) this.wakeBackoff?.();
  }

  /** The Durable Object restarted: queued requests fail with 500, the core starts cold. */
  restart(): void {
    this.incarnation += 1;
    const failed = [...this.waiting.values()];
    this.waiting.clear();
    this.placing = false;
    this.wakeBackoff = undefined;
    this.expiryArmed = false;
    this.core = this.buildCore();
    for (const respond of failed) respond({ kind: "rejected", status: 500, reason: "router_restart", rung: "none" });
  }

  private settle(ticket: string, result: SimAcquireResult): boolean {
    const respond = this.waiting.get(ticket);
    if (!respond) return false;
    this.waiting.delete(ticket);
    respond(result);
    return true;
  }

  private startPlacing(): void {
    if (this.placing) return;
    this.placing = true;
    this.placeQueued(this.incarnation);
  }

  /** The DO's `placeQueued` loop, as a state machine: it runs rounds until it must wait for a probe or a backoff. */
  private placeQueued(incarnation: number): void {
    if (incarnation !== this.incarnation) return;
    for (let plan = this.core.beginRound(); plan; plan = this.core.beginRound()) {
      if (plan.probe.length > 0) {
        const probing = plan;
        this.loop.after(this.timing.probeMs, () => {
          if (incarnation !== this.incarnation) return;
          for (const replica of probing.probe) this.core.reportProbe(replica, this.fleet.queueLength(replica));
          if (this.finishRound(probing, incarnation)) this.placeQueued(incarnation);
        });
        return;
      }
      if (!this.finishRound(plan, incarnation)) return;
    }
    this.placing = false;
  }

  /** Finishes a round; false when the loop now sleeps a backoff (it resumes itself). */
  private finishRound(plan: RoundPlan, incarnation: number): boolean {
    const outcome = this.core.finishRound(plan);
    if (outcome.kind === "placed") {
      if (!this.settle(outcome.ticket, { kind: "admitted", replica: outcome.replica }))
        this.core.release(outcome.ticket);
      return true;
    }
    if (outcome.kind === "backoff") {
      for (const { ticket, rejection } of outcome.shed) this.settle(ticket, rejected(rejection));
      let done = false;
      const resume = () => {
        if (done) return;
        done = true;
        this.wakeBackoff = undefined;
        this.placeQueued(incarnation);
      };
      this.loop.after(outcome.delayMs, resume);
      // A release ends the sleep early; the DO resumes in a later microtask, so do we (a zero-delay event).
      this.wakeBackoff = () => this.loop.after(0, resume);
      return false;
    }
    return true;
  }

  private armExpiry(): void {
    const next = this.core.nextExpiryMs();
    if (next === undefined || this.expiryArmed) return;
    this.expiryArmed = true;
    const incarnation = this.incarnation;
    this.loop.after(Math.max(0, next - this.loop.now()) + 5, () => {
      if (incarnation !== this.incarnation) return;
      this.expiryArmed = false;
      const { timedOut, reclaimed } = this.core.expire();
      for (const { ticket, rejection } of timedOut) this.settle(ticket, rejected(rejection));
      if (reclaimed.length > 0) this.wakeBackoff?.();
      this.armExpiry();
    });
  }
}
