import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { PriorityClass } from "../../../src/core/fair-queue";
import {
  type CarriedSlots,
  type HandedOffSlot,
  type HandoffLeave,
  PARK_MS,
  REPORT_BATCH,
  REPORT_MAX_AGE_MS,
  type ReleasedSlot,
  SlotBatch,
  type SlotSink,
  SWEEP_ROUNDS_MAX,
  type TakenSlot,
} from "../../../src/edge/slot-batch";
import { propertyRuns } from "../../support/property-runs";

/**
 * One isolate's SlotBatch for one router under arbitrary interleavings of requests arriving (taking a parked slot,
 * or asking the router with an `acquire` that carries the batch and is answered with or without a leave, rejected,
 * refused or lost to a router reset, then retried as the middleware does), requests ending (with and without a
 * failed replica), the router answering or failing the batch's own `releaseAll` calls in any order, and a fake
 * clock and timers stepped onto every threshold (the leave's end, a parked slot's PARK_MS, the sweep's rounds, the
 * oldest report's REPORT_MAX_AGE_MS) and one millisecond either side.
 *
 * Held against two models. The router's (a fake router that processes a call's hand-offs, then its releases, when
 * the call is made, as the Durable Object does, and forgets every lease on a reset): every slot is released exactly
 * once and only after its last holder ended it (never while parked or held, never twice, never both handed on and
 * released), so that at quiescence the router holds no lease; every hand-off reaches it exactly once, before the
 * release of its slot, and the holder it has on record when the slot is released is the request that ended it (its
 * tenant, weight, priority and fingerprint). The batch's (what the module's documentation promises): a slot is
 * parked only while the leave lasts (`now < receipt + handoffMs`, ended by an answer without one and by a failed
 * call) and taken only then; a parked slot goes back on the first sweep round (every PARK_MS from the first park)
 * that finds it PARK_MS old, or on the sweep's SWEEP_ROUNDS_MAX-th round; a `releaseAll` carries everything waiting
 * (an `acquire`'s `takeFor` all or part of it); a release is sent at once when no sender is at work, and hand-off reports
 * wait for a call that goes anyway unless REPORT_BATCH wait or the oldest is REPORT_MAX_AGE_MS old; what a failed
 * `acquire` carried is put back and sent again; nothing waits without a sender or a sweep to carry it, and nothing
 * is held (pending or parked) once the traffic stops. A failed `releaseAll` is taken to be a router reset (its
 * tickets forgotten), as the module documents.
 */

const ROUTER = "m#0";
/** The sender's rounds before it gives up its role (not exported by the module). */
const SEND_ROUNDS_MAX = 8;

interface Who {
  tenant: string | undefined;
  weight: number;
  priority: PriorityClass;
  fingerprint: string | undefined;
}

/** How the router meets a call, decided when the call is made (the router processes it then, or never). */
type Outcome =
  | { kind: "answer"; handoffMs: number | undefined; bare: boolean; rejected: boolean; replica: number }
  /** Overloaded: the router did not take the call; it is alive and holds its leases. (`acquire` only.) */
  | { kind: "refused" }
  /** The router restarted: every lease it held is forgotten, and the call fails. */
  | { kind: "reset" };

type Op =
  /** `prompt`: a router call it makes is answered at once (before anything else happens). */
  | { kind: "arrive"; who: Who; prompt: boolean }
  | { kind: "end"; pick: number; replicaFailed: boolean }
  | { kind: "settle"; pick: number }
  | { kind: "step"; to: "leave" | "park" | "sweep" | "report"; delta: number }
  | { kind: "wait"; ms: number }
  /** A busy isolate for a while; every `askEvery`-th cycle another request comes meanwhile and asks the router. */
  | { kind: "churn"; cycles: number; who: Who; askEvery: number }
  /** Requests admitted one after another whose replica fails at once, each while the batch's call is in flight. */
  | { kind: "relay"; cycles: number; who: Who }
  /** `size` requests admitted at once, ending at once, and as many coming at once (up to past REPORT_BATCH). */
  | { kind: "burst"; size: number; who: Who };

const who: fc.Arbitrary<Who> = fc.record({
  tenant: fc.constantFrom(undefined, "alpha", "beta"),
  weight: fc.constantFrom(1, 2, 0.5),
  priority: fc.constantFrom("interactive" as const, "batch" as const),
  fingerprint: fc.constantFrom(undefined, "fp-1", "fp-2"),
});

/** Mostly what a router gives (its `slotHandoffMs`), sometimes none, and lengths at the other thresholds. */
const handoffMs = fc.oneof(
  { weight: 6, arbitrary: fc.constant(1000) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom(0, 1, PARK_MS - 1, PARK_MS, PARK_MS + 1, REPORT_MAX_AGE_MS) },
);

const releaseOutcome: fc.Arbitrary<Outcome> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("answer" as const),
      handoffMs,
      bare: fc.constantFrom(false, false, false, true), // `undefined`, as SlotSink allows
      rejected: fc.constant(false),
      replica: fc.constant(0),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
);

const acquireOutcome: fc.Arbitrary<Outcome> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("answer" as const),
      handoffMs,
      bare: fc.constant(false),
      rejected: fc.constantFrom(false, false, false, true),
      replica: fc.integer({ min: 0, max: 2 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "refused" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
);

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("arrive" as const), who, prompt: fc.constantFrom(true, true, false) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("end" as const), pick: fc.nat(), replicaFailed: fc.boolean() }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("settle" as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      to: fc.constantFrom("leave" as const, "park" as const, "sweep" as const, "report" as const),
      delta: fc.constantFrom(-1, 0, 1),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.constantFrom(0, 1, 5, 9, 10, 11, 50, 99, 100, 101, 500, 1000, 1500),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("churn" as const),
      // Up to past a sweep's SWEEP_ROUNDS_MAX rounds of PARK_MS, at PARK_MS / 2 a cycle.
      cycles: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 60 }) },
        { weight: 1, arbitrary: fc.integer({ min: 190, max: 220 }) },
      ),
      who,
      askEvery: fc.constantFrom(0, 1, 3, 7),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("relay" as const), cycles: fc.integer({ min: 1, max: 30 }), who }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("burst" as const),
      size: fc.integer({ min: REPORT_BATCH - 2, max: REPORT_BATCH + 8 }),
      who,
    }),
  },
);

interface Request {
  id: number;
  who: Who;
  state: "asking" | "holding" | "done";
  slot?: TakenSlot;
}

interface Ticket {
  /** The router's life it was admitted in: a reset forgets it. */
  epoch: number;
  state: "held" | "parked" | "released";
  /** Who holds (or last held) it, as the router should have it on record. */
  holder: string;
}

interface Call {
  kind: "releaseAll" | "acquire";
  /** The sender's round (releaseAll). */
  round: number;
  carried: CarriedSlots;
  outcome: Outcome;
  /** What the router answers, decided when it processed the call. */
  answer: HandoffLeave | undefined;
  settled: boolean;
  resolve: (answer: HandoffLeave | undefined) => void;
  reject: (error: Error) => void;
  request?: Request;
  attempt?: number;
  ticket?: string;
}

const keyOf = (value: unknown): string => JSON.stringify(value);
const holderOf = (w: Who): string => keyOf([w.tenant, w.weight, w.priority, w.fingerprint]);
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

class World {
  readonly violations: string[] = [];
  readonly batch = new SlotBatch(() => Date.now());
  readonly sink: SlotSink = { releaseAll: (released, handedOff = []) => this.onReleaseAll(released, handedOff) };
  readonly sinkOf = () => this.sink;

  // The batch, as documented.
  parked: Array<{ ticket: string; replica: string; atMs: number }> = [];
  pendingReleases: string[] = [];
  pendingReports: string[] = [];
  reportsSinceMs = 0;
  sending = false;
  sweep: { startMs: number; round: number } | undefined;
  leaveUntilMs = 0;
  /** releaseAll calls the model expects the batch to make next (their sender's round). */
  expected: number[] = [];

  // The isolate's requests, its router's tickets, the calls in flight.
  readonly requests: Request[] = [];
  readonly tickets = new Map<string, Ticket>();
  readonly calls: Call[] = [];
  nextTicket = 0;

  // The router.
  epoch = 0;
  readonly leases = new Map<string, string>();
  readonly releasesProcessed = new Map<string, number>();
  readonly reportsProcessed = new Map<string, number>();
  readonly reportsMade = new Map<string, number>();

  private releaseTurn = 0;
  private acquireTurn = 0;

  constructor(
    private readonly releaseOutcomes: readonly Outcome[],
    private readonly acquireOutcomes: readonly Outcome[],
  ) {}

  fail(what: string): void {
    this.violations.push(`t=${Date.now()}: ${what}`);
  }

  // --- the model of the batch ---

  startSending(): boolean {
    if (this.sending) return false;
    this.sending = true;
    this.sendRound(1);
    return true;
  }

  sendRound(round: number): void {
    if (this.pendingReleases.length === 0 && this.pendingReports.length === 0) {
      this.sending = false;
      return;
    }
    if (round === SEND_ROUNDS_MAX) this.sending = false;
    this.expected.push(round);
  }

  /** The sweep's rounds up to `now` (every PARK_MS from the first park while slots are parked). */
  catchUp(now: number): void {
    while (this.sweep && this.sweep.startMs + PARK_MS * (this.sweep.round + 1) <= now) {
      const sweep = this.sweep;
      sweep.round += 1;
      const at = sweep.startMs + PARK_MS * sweep.round;
      const last = sweep.round === SWEEP_ROUNDS_MAX;
      const stale = this.parked.filter((p) => last || at - p.atMs >= PARK_MS);
      this.parked = this.parked.filter((p) => !stale.includes(p));
      for (const p of stale) this.release(p.ticket, false);
      if (this.pendingReleases.length > 0 || this.pendingReports.length > 0) this.startSending();
      if (this.parked.length === 0) this.sweep = undefined;
    }
  }

  release(ticket: string, replicaFailed: boolean): void {
    const t = this.tickets.get(ticket);
    if (t) t.state = "released";
    this.pendingReleases.push(keyOf([ticket, replicaFailed]));
  }

  renew(answer: HandoffLeave | undefined): void {
    const ms = answer?.handoffMs;
    this.leaveUntilMs = ms !== undefined && ms > 0 ? Date.now() + ms : 0;
  }

  /**
   * What a call carries comes out of what waits: a releaseAll (the batch's sender) carries all of it; an acquire
   * (`takeFor`) carries what waits, or part of it (the rest waits on).
   */
  takePending(
    carried: { released: readonly ReleasedSlot[]; handedOff: readonly HandedOffSlot[] },
    what: "releaseAll" | "takeFor",
  ): void {
    const take = (items: readonly string[], waiting: string[], kind: string): string[] => {
      const rest = [...waiting];
      for (const item of items) {
        const at = rest.indexOf(item);
        if (at >= 0) rest.splice(at, 1);
        else this.fail(`${what} carried ${kind} ${item}, which was not waiting (waiting: ${keyOf(waiting)})`);
      }
      if (what === "releaseAll" && rest.length > 0) this.fail(`${what} left ${kind} ${keyOf(rest)} waiting`);
      return rest;
    };
    this.pendingReleases = take(carried.released.map(keyOf), this.pendingReleases, "release");
    this.pendingReports = take(carried.handedOff.map(keyOf), this.pendingReports, "hand-off");
  }

  // --- the router ---

  nextOutcome(kind: Call["kind"]): Outcome {
    const list = kind === "releaseAll" ? this.releaseOutcomes : this.acquireOutcomes;
    const turn = kind === "releaseAll" ? this.releaseTurn++ : this.acquireTurn++;
    return list[turn % list.length] as Outcome;
  }

  /** The router takes a call when it is made: hand-offs first, then releases. Returns whether it knew every hand-off. */
  process(carried: { released: readonly ReleasedSlot[]; handedOff: readonly HandedOffSlot[] }): boolean {
    let known = true;
    for (const report of carried.handedOff) {
      const key = keyOf(report);
      const n = (this.reportsProcessed.get(key) ?? 0) + 1;
      this.reportsProcessed.set(key, n);
      if (n > (this.reportsMade.get(key) ?? 0)) this.fail(`hand-off ${key} reached the router ${n} times`);
      const [ticket, tenant, weight, priority, fingerprint] = report;
      if (this.leases.has(ticket)) this.leases.set(ticket, holderOf({ tenant, weight, priority, fingerprint }));
      else {
        known = false;
        if (this.tickets.get(ticket)?.epoch === this.epoch)
          this.fail(`hand-off ${key} reached the router after the release of ${ticket}`);
      }
    }
    for (const [ticket, replicaFailed] of carried.released) {
      const n = (this.releasesProcessed.get(ticket) ?? 0) + 1;
      this.releasesProcessed.set(ticket, n);
      if (n > 1) this.fail(`${ticket} released ${n} times`);
      const t = this.tickets.get(ticket);
      if (t?.state !== "released") this.fail(`${ticket} released (failed: ${replicaFailed}) while ${t?.state}`);
      if (t && t.epoch === this.epoch) {
        const lease = this.leases.get(ticket);
        if (lease === undefined) this.fail(`${ticket} released, but the router holds no lease for it`);
        else if (lease !== t.holder)
          this.fail(`the router took ${ticket} to be held by ${lease} at its release, not by ${t.holder}`);
        this.leases.delete(ticket);
      }
    }
    return known;
  }

  onReleaseAll(
    released: readonly ReleasedSlot[],
    handedOff: readonly HandedOffSlot[],
  ): Promise<HandoffLeave | undefined> {
    this.catchUp(Date.now());
    const round = this.expected.shift();
    if (round === undefined) this.fail(`a releaseAll the model did not expect: ${keyOf([released, handedOff])}`);
    const carried = { released: [...released], handedOff: [...handedOff] };
    this.takePending(carried, "releaseAll");
    const outcome = this.nextOutcome("releaseAll");
    let answer: HandoffLeave | undefined;
    if (outcome.kind === "answer") {
      const known = this.process(carried);
      answer = outcome.bare
        ? undefined
        : known && outcome.handoffMs !== undefined
          ? { handoffMs: outcome.handoffMs }
          : {};
    } else this.reset();
    return new Promise((resolve, reject) => {
      this.calls.push({
        kind: "releaseAll",
        round: round ?? SEND_ROUNDS_MAX,
        carried,
        outcome,
        answer,
        settled: false,
        resolve,
        reject,
      });
    });
  }

  reset(): void {
    this.epoch += 1;
    this.leases.clear();
  }

  // --- the isolate's requests ---

  async arrive(w: Who, prompt: boolean): Promise<void> {
    const request: Request = { id: this.requests.length, who: w, state: "asking" };
    this.requests.push(request);
    const now = Date.now();
    const expectTake = now < this.leaveUntilMs && this.parked.length > 0;
    const taken = this.batch.take(ROUTER);
    if ((taken !== undefined) !== expectTake)
      this.fail(`take gave ${keyOf(taken)}; leave until ${this.leaveUntilMs}, ${this.parked.length} parked`);
    if (!taken) {
      this.ask(request, 1);
      // Answered at once: this request's call (and a retry of it) before any other.
      while (prompt && request.state === "asking") {
        const open = this.calls.filter((c) => !c.settled);
        await this.settle(open.findIndex((c) => c.request === request));
        await flush();
      }
      return;
    }
    const at = this.parked.findIndex((p) => p.ticket === taken.ticket && p.replica === taken.replica);
    const ticket = this.tickets.get(taken.ticket);
    if (at < 0 || !ticket) {
      this.fail(`take gave ${keyOf(taken)}, which is not parked`);
      return;
    }
    this.parked.splice(at, 1);
    ticket.state = "held";
    ticket.holder = holderOf(w);
    request.state = "holding";
    request.slot = taken;
    const report: HandedOffSlot = [taken.ticket, w.tenant, w.weight, w.priority, w.fingerprint];
    const key = keyOf(report);
    this.reportsMade.set(key, (this.reportsMade.get(key) ?? 0) + 1);
    if (this.pendingReports.length === 0) this.reportsSinceMs = now;
    this.pendingReports.push(key);
    const due = this.pendingReports.length >= REPORT_BATCH || now - this.reportsSinceMs >= REPORT_MAX_AGE_MS;
    const started = due && this.startSending();
    const kept = this.batch.handedOff(ROUTER, report, this.sinkOf);
    if ((kept !== undefined) !== started)
      this.fail(`handedOff returned ${kept ? "a promise" : "nothing"} (due: ${due}, sending: ${this.sending})`);
  }

  ask(request: Request, attempt: number): void {
    const carried = this.batch.takeFor(ROUTER);
    this.takePending(carried, "takeFor");
    const outcome = this.nextOutcome("acquire");
    const call: Call = {
      kind: "acquire",
      round: 0,
      carried,
      outcome,
      answer: undefined,
      settled: false,
      resolve: () => {},
      reject: () => {},
      request,
      attempt,
    };
    if (outcome.kind === "answer") {
      const known = this.process(carried);
      if (!outcome.rejected) {
        const ticket = `k${this.nextTicket++}`;
        call.ticket = ticket;
        this.tickets.set(ticket, { epoch: this.epoch, state: "held", holder: holderOf(request.who) });
        this.leases.set(ticket, holderOf(request.who));
        call.answer = known && outcome.handoffMs !== undefined ? { handoffMs: outcome.handoffMs } : {};
      } else call.answer = {};
    } else if (outcome.kind === "reset") this.reset();
    this.calls.push(call);
  }

  end(pick: number, replicaFailed: boolean): void {
    const holding = this.requests.filter((r) => r.state === "holding");
    const request = holding[pick % Math.max(1, holding.length)];
    if (!request?.slot) return;
    this.endRequest(request, replicaFailed);
  }

  endRequest(request: Request, replicaFailed: boolean): void {
    const slot = request.slot as TakenSlot;
    request.state = "done";
    const ticket = this.tickets.get(slot.ticket) as Ticket;
    const now = Date.now();
    let expectPromise: boolean;
    if (replicaFailed) {
      const onIt = this.parked.filter((p) => p.replica === slot.replica);
      this.parked = this.parked.filter((p) => p.replica !== slot.replica);
      for (const p of onIt) this.release(p.ticket, false);
      this.release(slot.ticket, true);
      expectPromise = this.startSending();
    } else if (now < this.leaveUntilMs) {
      ticket.state = "parked";
      this.parked.push({ ticket: slot.ticket, replica: slot.replica, atMs: now });
      expectPromise = this.sweep === undefined;
      this.sweep ??= { startMs: now, round: 0 };
    } else {
      this.release(slot.ticket, false);
      expectPromise = this.startSending();
    }
    const kept = this.batch.end(ROUTER, slot, replicaFailed, this.sinkOf);
    if ((kept !== undefined) !== expectPromise)
      this.fail(`end(${slot.ticket}, ${replicaFailed}) returned ${kept ? "a promise" : "nothing"}`);
  }

  async settle(pick: number): Promise<void> {
    const open = this.calls.filter((c) => !c.settled);
    const call = open[pick % Math.max(1, open.length)];
    if (!call) return;
    call.settled = true;
    const { outcome } = call;
    if (call.kind === "releaseAll") {
      if (outcome.kind === "answer") {
        this.renew(call.answer);
        call.resolve(call.answer);
      } else {
        this.leaveUntilMs = 0;
        call.reject(new Error("router reset"));
      }
      if (call.round < SEND_ROUNDS_MAX) this.sendRound(call.round + 1);
      return;
    }
    const request = call.request as Request;
    if (outcome.kind === "answer") {
      this.renew(call.answer);
      this.batch.heard(ROUTER, call.answer);
      if (call.ticket) {
        request.state = "holding";
        request.slot = { ticket: call.ticket, replica: `r${outcome.replica}` };
      } else request.state = "done";
      return;
    }
    // The call threw: what it carried goes back, and a call that did not fail for overload is tried once more.
    for (const r of call.carried.released) this.pendingReleases.push(keyOf(r));
    for (const h of call.carried.handedOff) this.pendingReports.push(keyOf(h));
    const nonEmpty = call.carried.released.length > 0 || call.carried.handedOff.length > 0;
    const started = nonEmpty && this.startSending();
    const kept = this.batch.putBack(ROUTER, call.carried, this.sinkOf);
    if ((kept !== undefined) !== started) this.fail(`putBack returned ${kept ? "a promise" : "nothing"}`);
    if (outcome.kind === "reset" && call.attempt === 1) this.ask(request, 2);
    else request.state = "done";
  }

  async advance(ms: number): Promise<void> {
    if (ms > 0) await vi.advanceTimersByTimeAsync(ms);
    await flush();
    this.catchUp(Date.now());
  }

  async step(to: "leave" | "park" | "sweep" | "report", delta: number): Promise<void> {
    const now = Date.now();
    let target: number | undefined;
    if (to === "leave" && this.leaveUntilMs > 0) target = this.leaveUntilMs;
    else if (to === "park" && this.parked.length > 0) target = Math.min(...this.parked.map((p) => p.atMs)) + PARK_MS;
    else if (to === "sweep" && this.sweep) target = this.sweep.startMs + PARK_MS * (this.sweep.round + 1);
    else if (to === "report" && this.pendingReports.length > 0) target = this.reportsSinceMs + REPORT_MAX_AGE_MS;
    if (target !== undefined && target + delta > now) await this.advance(target + delta - now);
  }

  /** After each step: the batch holds what the model says, and nothing waits without a sender or sweep. */
  check(): void {
    const now = Date.now();
    if (this.expected.length > 0) this.fail(`${this.expected.length} releaseAll call(s) due were not made`);
    const pending = this.batch.pendingFor(ROUTER);
    const model = {
      released: this.pendingReleases.length,
      handedOff: this.pendingReports.length,
      parked: this.parked.length,
    };
    if (keyOf(pending) !== keyOf(model)) this.fail(`pendingFor ${keyOf(pending)}, model ${keyOf(model)}`);
    if (this.pendingReleases.length > 0 && !this.sending) this.fail("releases wait with no sender");
    if (this.pendingReports.length > 0 && !this.sending && !this.sweep)
      this.fail("hand-off reports wait with neither a sender nor a sweep");
    if (this.parked.length > 0 && !this.sweep) this.fail("slots parked with no sweep to come");
    for (const p of this.parked)
      if (now - p.atMs >= 2 * PARK_MS) this.fail(`${p.ticket} parked since ${p.atMs}, past two sweep periods`);
    if (this.pendingReports.length > REPORT_BATCH && !this.sending)
      this.fail(`${this.pendingReports.length} hand-off reports wait`);
  }

  /** The traffic stops: every request ends, every call is answered, and time runs until nothing is left. */
  async quiesce(drain: Drain): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const endAll = () => {
        for (const r of this.requests) if (r.state === "holding") this.endRequest(r, i === 0 && drain.replicaFailed);
      };
      if (drain.endFirst) endAll();
      while (this.calls.some((c) => !c.settled)) {
        await this.settle(drain.newestFirst ? this.calls.filter((c) => !c.settled).length - 1 : 0);
        await flush();
      }
      endAll();
      this.check();
      const idle =
        !this.sweep &&
        !this.sending &&
        this.pendingReleases.length === 0 &&
        this.pendingReports.length === 0 &&
        this.requests.every((r) => r.state === "done");
      if (idle) break;
      await this.advance(PARK_MS);
    }
    const pending = this.batch.pendingFor(ROUTER);
    if (pending.released + pending.handedOff + pending.parked > 0) this.fail(`left in the batch: ${keyOf(pending)}`);
    if (this.leases.size > 0) this.fail(`the router still holds ${keyOf([...this.leases.keys()])}: slots lost`);
    for (const [ticket, t] of this.tickets)
      if (t.epoch === this.epoch && this.releasesProcessed.get(ticket) !== 1)
        this.fail(`${ticket} released ${this.releasesProcessed.get(ticket) ?? 0} times`);
    for (const [key, made] of this.reportsMade) {
      const ticket = (JSON.parse(key) as [string])[0];
      if (this.tickets.get(ticket)?.epoch === this.epoch && this.reportsProcessed.get(key) !== made)
        this.fail(`hand-off ${key} made ${made} times, reached the router ${this.reportsProcessed.get(key) ?? 0}`);
    }
  }
}

/** How the traffic stops: requests end before or after the calls in flight are answered, oldest or newest first. */
interface Drain {
  endFirst: boolean;
  replicaFailed: boolean;
  newestFirst: boolean;
}

async function run(
  ops: readonly Op[],
  releaseOutcomes: Outcome[],
  acquireOutcomes: Outcome[],
  drain: Drain,
): Promise<string[]> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: 1_000_000 });
  try {
    const world = new World(releaseOutcomes, acquireOutcomes);
    for (const o of ops) {
      if (o.kind === "arrive") await world.arrive(o.who, o.prompt);
      else if (o.kind === "end") world.end(o.pick, o.replicaFailed);
      else if (o.kind === "settle") await world.settle(o.pick);
      else if (o.kind === "step") await world.step(o.to, o.delta);
      else if (o.kind === "wait") await world.advance(o.ms);
      else if (o.kind === "burst") {
        const first = world.requests.length;
        for (let i = 0; i < o.size; i++) await world.arrive(o.who, true);
        for (const r of world.requests.slice(first)) if (r.state === "holding") world.endRequest(r, false);
        for (let i = 0; i < o.size; i++) await world.arrive(o.who, true);
      } else if (o.kind === "relay")
        for (let c = 0; c < o.cycles && world.violations.length === 0; c++) {
          await world.arrive(o.who, true);
          const last = world.requests[world.requests.length - 1];
          const before = world.calls.slice();
          if (last?.state === "holding") world.endRequest(last, true);
          // The call in flight before this release is answered: the sender's next round carries the release.
          const open = world.calls.filter((call) => !call.settled);
          const oldest = open.findIndex((call) => call.kind === "releaseAll" && before.includes(call));
          if (oldest >= 0) await world.settle(oldest);
          await flush();
          world.check();
        }
      else
        for (let c = 0; c < o.cycles && world.violations.length === 0; c++) {
          // A busy isolate: a request every PARK_MS / 2 that ends at once, so parked slots are taken and parked again.
          await world.advance(PARK_MS / 2);
          await world.arrive(o.who, true);
          const last = world.requests[world.requests.length - 1];
          if (o.askEvery > 0 && c % o.askEvery === 0) await world.arrive(o.who, false);
          if (last?.state === "holding") world.endRequest(last, false);
          await flush();
          world.check();
        }
      await flush();
      world.catchUp(Date.now());
      world.check();
      if (world.violations.length > 0) return world.violations;
    }
    await world.quiesce(drain);
    return world.violations;
  } finally {
    vi.useRealTimers();
  }
}

describe("the slot batch under arbitrary ends, hand-offs, router answers and clock steps", () => {
  it("releases every slot once, reports every hand-off once and in order, and hands on only under the leave", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 5, maxLength: 80, size: "max" }),
        fc.array(releaseOutcome, { minLength: 1, maxLength: 12 }),
        fc.array(acquireOutcome, { minLength: 1, maxLength: 12 }),
        fc.record({ endFirst: fc.boolean(), replicaFailed: fc.boolean(), newestFirst: fc.boolean() }),
        async (ops, releaseOutcomes, acquireOutcomes, drain) => {
          expect(await run(ops, releaseOutcomes, acquireOutcomes, drain)).toEqual([]);
        },
      ),
      propertyRuns(200, 20261205),
    );
  });
});

/**
 * The property's shrunk counterexamples, as plain tests: what a failed `acquire` carried is put back behind what came
 * since, so a hand-off report it carried reaches the router after its slot's release (the router ignores it: the
 * request is not counted, and the isolate's leave is withdrawn) or after a later hand-off of the same slot (the router
 * has the wrong holder on record until the slot is released).
 */
describe("the slot batch when an acquire that carried hand-off reports fails", () => {
  /** The router's side of the calls made, in order: hand-offs first, then releases, as `DeploymentRouter.take`. */
  function heard(calls: ReadonlyArray<{ released: ReleasedSlot[]; handedOff: HandedOffSlot[] }>) {
    const released = new Set<string>();
    const late: string[] = [];
    const holder = new Map<string, string | undefined>();
    for (const call of calls) {
      for (const [ticket, tenant] of call.handedOff) {
        if (released.has(ticket)) late.push(ticket);
        else holder.set(ticket, tenant);
      }
      for (const [ticket] of call.released) released.add(ticket);
    }
    return { late, holder };
  }

  async function world() {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: 0 });
    const batch = new SlotBatch(() => Date.now());
    const calls: Array<{ released: ReleasedSlot[]; handedOff: HandedOffSlot[] }> = [];
    const sink: SlotSink = {
      releaseAll: async (released, handedOff = []) => {
        calls.push({ released: [...released], handedOff: [...handedOff] });
        return { handoffMs: 1000 };
      },
    };
    const sinkOf = () => sink;
    batch.heard(ROUTER, { handoffMs: 1000 });
    // Request 1 ends: its slot is parked; request 2 takes it.
    void batch.end(ROUTER, { ticket: "a", replica: "r1" }, false, sinkOf);
    const slot = batch.take(ROUTER) as TakenSlot;
    void batch.handedOff(ROUTER, ["a", "two", 1, "interactive"], sinkOf);
    // Request 3 finds nothing parked and asks the router; its acquire carries the report and is refused.
    const carried = batch.takeFor(ROUTER);
    return { batch, calls, sinkOf, slot, carried };
  }

  it("a hand-off still reaches the router before its slot's release", async () => {
    try {
      const { batch, calls, sinkOf, slot, carried } = await world();
      void batch.end(ROUTER, slot, true, sinkOf); // request 2's replica failed: released at once
      void batch.putBack(ROUTER, carried, sinkOf);
      await vi.advanceTimersByTimeAsync(5 * PARK_MS);
      expect(heard(calls).late).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("the router's last word on a slot's holder is its last hand-off", async () => {
    try {
      const { batch, calls, sinkOf, slot, carried } = await world();
      void batch.end(ROUTER, slot, false, sinkOf); // request 2 ends: parked again, and request 4 takes it
      void batch.handedOff(ROUTER, [(batch.take(ROUTER) as TakenSlot).ticket, "four", 1, "batch"], sinkOf);
      void batch.putBack(ROUTER, carried, sinkOf);
      await vi.advanceTimersByTimeAsync(5 * PARK_MS);
      expect(heard(calls).holder.get("a")).toBe("four");
    } finally {
      vi.useRealTimers();
    }
  });
});
