import { backoffDelayMs, probeDeadlineMs } from "./backoff";
import {
  type BookedHint,
  CapacityBooking,
  type ClaimedBooking,
  DEFAULT_CAPACITY_BOOKING_OPTIONS,
  type PromiseOutcomes,
} from "./capacity-booking";
import { DEFAULT_HORIZON_S } from "./client-horizon";
import { DrainAccuracyTracker, type DrainObservation, type HistogramSnapshot } from "./drain-accuracy";
import { DrainRateEstimator } from "./drain-rate";
import {
  DEFAULT_FAIR_QUEUE_OPTIONS,
  type FairEntry,
  FairQueue,
  type OfferResult,
  type PriorityClass,
} from "./fair-queue";
import { type HintedRetryCounts, HintedRetryTracker, type HintOutcome, type HintTiming } from "./hinted-retries";
import { chooseTwo, pickShortestAccepting } from "./power-of-two";
import { QueueLengthCache, type QueueLengthEntry } from "./queue-length-cache";
import { RecentRate } from "./recent-rate";
import { RefusalCounts } from "./refusal-counts";
import { decideRetryAfter, type LoadSignals, type RetryAfterDecision, type Rung } from "./retry-after";
import { DEFAULT_RETRY_SCHEDULE_OPTIONS, RetrySchedule } from "./retry-schedule";
import { type BookingAdmission, DEFAULT_BOOKING_ADMISSION, type RouterOptions } from "./router-options";
import { DRAINING_WINDOW_S, StandingQueue } from "./standing-queue";
import { type TenantCount, TenantCounters } from "./tenant-counters";
import { TenantHeadroom } from "./tenant-headroom";

/** How long a round held for `demotedHeadroomSlots` waits at most before it looks again (a release or an arrival ends it sooner). */
const DEMOTED_HOLD_RECHECK_MS = 1000;

/**
 * What a lease's end says of its replica: `false` nothing (served, or the client left), `true` it failed (marked
 * down until a probe succeeds), `"full"` it refused the request as full itself, a 429 (full until a probe reads it).
 */
export type ReleaseOutcome = boolean | "full";

/** Why a request was refused. */
export type RejectionReason = "queue_full" | "queue_timeout" | "no_replica_available";

/** The structured record logged for every rejection (the RFC's evidence). */
export interface RejectionRecord {
  event: "spillway.rejection";
  reason: RejectionReason;
  status: number;
  policy: string;
  rung: Rung;
  queue_depth: number;
  max_queued_requests: number;
  drain_rate: number | null;
  estimator_warm: boolean;
  pre_jitter_s: number | null;
  post_jitter_s: number | null;
  retry_after_s: number | null;
  retry_after_ms: number | null;
  drain_counter: number;
  backoff_streak: number;
  /** The tenant's name (never its key), when the request named one. */
  tenant?: string;
  /** `booked_capacity` only: whether the hint is a promise (room booked), the ledger's trust and fresh baseline. */
  booking?: { promised: boolean | null; trust: number; baseline: number | null; outstanding: number };
}

/** A refusal: what the Worker answers, computed from memory only. */
export interface Rejection {
  statusCode: 429 | 503;
  reason: RejectionReason;
  message: string;
  decision: RetryAfterDecision;
  record: RejectionRecord;
}

/** What the Worker knows about an attempt besides its ticket. */
export interface SubmitOptions {
  /**
   * The client says this is a retry (`x-stainless-retry-count` >= 1). Only the legacy `retry_schedule` reads
   * it; it is a client's claim, never a key to a booking.
   */
  retry?: boolean;
  /**
   * The request's fingerprint (SHA-256 over credential, method, path and body, computed by the Worker): every
   * attempt of the same request has the same one. A promise made to a request can be claimed only by it.
   */
  fingerprint?: string;
  /** The longest hint this client honours (from its SDK headers, src/core/client-horizon.ts); default 60 s. */
  clientHorizonS?: number;
  /** The client announced an OpenAI SDK (`x-stainless-lang`), which honours Retry-After (`sdkClientsLeaveShare`). */
  sdkClient?: boolean;
  /**
   * Milliseconds this request already waited in a router that was reset before placing it (the Worker
   * re-acquires it once on the fresh router). It queues as if it had arrived that long ago: ahead of younger
   * requests, and shed when its total wait reaches the queue timeout.
   */
  waitedMs?: number;
  /** The tenant's name: its requests share the queue fairly with other tenants'. Default: one shared tenant. */
  tenant?: string;
  /** The tenant's weight (default 1): its share of a contended queue relative to other waiting tenants'. */
  weight?: number;
  /** `batch` is refused first and served after `interactive` (the default). */
  priority?: PriorityClass;
}

/** Who a request is, as its refusal's hint needs it: its tenant (fair share) and its fingerprint and horizon. */
interface Requester {
  tenant: string;
  weight: number;
  priority: PriorityClass;
  fingerprint: string | undefined;
  horizonS: number;
}

/** Queued (possibly pushing out another tenant's request, refused with `rejection`), or rejected at once. */
export type SubmitResult =
  | { kind: "queued"; displaced?: { ticket: string; rejection: Rejection } }
  | { kind: "rejected"; rejection: Rejection };

/** What a placement round needs the driver to do first. */
export interface RoundPlan {
  candidates: string[];
  /** Candidates whose cached queue length must be refreshed from the replica (`GET /load`). */
  probe: string[];
  probeDeadlineMs: number;
}

export type RoundOutcome =
  | { kind: "placed"; ticket: string; replica: string; tenant?: string }
  | { kind: "backoff"; delayMs: number; shed: Array<{ ticket: string; rejection: Rejection }> }
  /**
   * A replica has room, but every waiting request that could take it belongs to a tenant at or above its fair share
   * while the fleet's free slots are down to the tenants' headroom: wait for a release or an arrival, or `delayMs`
   * (when the headroom's hold may lapse by itself), whichever comes first.
   */
  | { kind: "held"; delayMs: number }
  | { kind: "idle" };

/** Read-only view for the stats endpoint, the dashboard and the simulator. */
export interface RouterStats {
  queueDepth: number;
  maxQueuedRequests: number;
  drainRate: number | null;
  estimatorWarm: boolean;
  drainCount: number;
  backoffStreak: number;
  activeLeases: number;
  admitted: number;
  completed: number;
  rejections: Record<Rung, number>;
  rejectionsByReason: Record<RejectionReason, number>;
  /** Histogram of suggested delays (seconds): counts per upper bound, the last bound +Inf. */
  suggestedDelayBuckets: { le: number; count: number }[];
  /** Sum of the suggested delays counted in `suggestedDelayBuckets` (the histogram's `_sum`). */
  suggestedDelaySumS: number;
  /** Drain-time error (suggested - observed seconds) of every hinted rejection observed drained since start. */
  drainTimeError: HistogramSnapshot;
  replicas: Record<string, QueueLengthEntry | null>;
  recentObservations: DrainObservation[];
  /** Rejections whose queue has not drained yet (bounded: the tracker drops the oldest). */
  pendingObservations: number;
  /** Admitted and shed per tenant (bounded: tenants past the first 256 count as `other`); empty without tenants. */
  tenants: Record<string, TenantCount>;
  /** Requests refused with a hint that came back, by outcome and timing (X in production). */
  hintedRetries: HintedRetryCounts;
  /** Promises outstanding in the `booked_capacity` ledger (0 for other policies). */
  outstandingBookings: number;
  /** The `booked_capacity` ledger's word: how its promises ended, and its trust in its forecast; null for other policies. */
  ledger: LedgerView | null;
  /** Requests queued demoted since start (`booking.demoteAfterS`: first refused longer ago, they gave way). */
  demoted: number;
}

/**
 * The `booked_capacity` ledger as an operator (and the simulator's timeline) sees it: how its promises ended, the
 * trust that scales the capacity it promises (it falls as promises are broken: `CapacityBookingOptions.minTrust`),
 * the share of promised clients that come back, and the fresh arrivals its forecast expects.
 *
 * @example
 * ```ts
 * const view: LedgerView = {
 *   promises: { made: 40, kept: 30, broken: 6, noShow: 2 },
 *   trust: 0.6,
 *   showRate: 0.9,
 *   freshBaseline: 3.5,
 * };
 * ```
 */
export interface LedgerView {
  promises: PromiseOutcomes;
  trust: number;
  showRate: number;
  /**
   * The forecast's baseline of fresh arrivals at this router (first attempts, requests per second; the lowest
   * smoothed rate of its window): what its promises leave room for in an overload. `null` before a full second.
   */
  freshBaseline: number | null;
}

const SUGGESTED_DELAY_BOUNDS = [1, 2, 5, 10, 20, 30, 60, Number.POSITIVE_INFINITY];

/**
 * The router of one deployment, as pure state: the bounded FIFO queue, the replicas' queue-length cache,
 * power of two choices with backoff, the drain-rate EWMA, leases and the Retry-After ladder. It does no I/O:
 * the Durable Object (and the simulator) drive it, doing the probes and sleeping the backoffs it asks for.
 *
 * @example
 * ```ts
 * const core = new RouterCore(options, { now: () => Date.now() }, Math.random);
 * if (core.submit("t1").kind === "queued") {
 *   const plan = core.beginRound();             // probe plan.probe, then report each result:
 *   core.reportProbe("http://127.0.0.1:8001", 0);
 *   const outcome = core.finishRound(plan!);    // { kind: "placed", ticket: "t1", replica: ... }
 *   core.release("t1");                         // when the response has ended
 * }
 * ```
 */
export class RouterCore {
  /** Waiting tickets: per-tenant sub-queues, fair dispatch, priority classes (FIFO for a single tenant). */
  private readonly queue: FairQueue;
  private readonly leases = new Map<
    string,
    { replica: string; expiresAtMs: number; tenant: string; priority: PriorityClass }
  >();
  private readonly cache: QueueLengthCache;
  private readonly estimator: DrainRateEstimator;
  private streak = 0;
  private admitted = 0;
  /** Requests queued demoted (see `BookingAdmission.demoteAfterS`). */
  private demotedCount = 0;
  /**
   * When the router last turned someone away for a full queue - an arrival refused, or a queued request pushed out by
   * one (`demotedQuietTimeoutS`); never, at first.
   */
  private lastFullRefusalMs = Number.NEGATIVE_INFINITY;
  /**
   * Queued retries that claimed a promise, by ticket, with the promise's lead: the promise is kept once the retry is
   * placed and broken if it is shed first (`CapacityBookingOptions.keptWhenQueued`). At most the queue's size: every
   * way out of the queue settles or drops its ticket.
   */
  private readonly promisedInQueue = new Map<string, number>();
  /**
   * The request let in only to wait for a probe (`admit`), by ticket, while it may still wait: at most one, since
   * one is let in only at an empty queue. Tickets are not reused: one that has left the queue since (placed,
   * cancelled, timed out) is simply not found there when the round that would refuse it comes.
   */
  private awaitingProbe: string | undefined;
  /**
   * When the request waiting for a probe is a hinted retry, its timing: counted once the probe answers (refused by
   * `shedAwaitingProbe`, or placed), not as it joins the queue - it joined only to wait for that answer.
   */
  private awaitingProbeTiming: HintTiming | undefined;
  private completed = 0;
  private readonly rejections: Record<Rung, number> = { computed: 0, static_fallback: 0, none: 0 };
  private readonly rejectionsByReason: Record<RejectionReason, number> = {
    queue_full: 0,
    queue_timeout: 0,
    no_replica_available: 0,
  };
  private readonly suggestedDelayCounts = SUGGESTED_DELAY_BOUNDS.map(() => 0);
  private suggestedDelaySumS = 0;
  private readonly tenantCounts = new TenantCounters();
  /** Slots held back from tenants at or above their share for the ones below it (`tenantHeadroomSlots` > 0 only). */
  private readonly headroom: TenantHeadroom | undefined;
  /** The retries already told to come back, and the room they hold, for `retry_schedule` (memory only: a restart is cold). */
  private readonly retrySchedule: RetrySchedule | undefined;
  /** Future capacity promised to refused requests, by fingerprint, for `booked_capacity`. */
  private readonly booking: CapacityBooking | undefined;
  private readonly admission: BookingAdmission;
  private readonly hintedRetries = new HintedRetryTracker();
  /** The queue-delay target's state (CoDel's standing queue), whenever `booked_capacity` is on (absent otherwise). */
  private readonly standingQueue: StandingQueue | undefined;
  /**
   * Refusals per fingerprint and when each request was first refused, whenever `booked_capacity` is on (absent
   * otherwise): for demotion, `lastChanceAfterRefusals` and the ledger's probe (a request's first refusal).
   */
  private readonly refusals: RefusalCounts | undefined;
  /** Requests never refused, as offered (absent unless `freshPastTargetShare` is set). */
  private readonly freshOffered: RecentRate | undefined;

  /** `accuracy` may be given to observe every hint's accuracy (the simulator does); the default keeps 256. */
  constructor(
    readonly options: RouterOptions,
    private readonly clock: { now(): number },
    private readonly random: () => number,
    private readonly accuracy: DrainAccuracyTracker = new DrainAccuracyTracker(),
  ) {
    this.queue = new FairQueue({
      ...DEFAULT_FAIR_QUEUE_OPTIONS,
      clock,
      yieldOrder: options.booking?.demotedOrder ?? "newest_first",
      ...(options.booking?.demotedServiceS !== undefined ? { yieldServiceS: options.booking.demotedServiceS } : {}),
      ...(options.booking?.freshOrder !== undefined ? { freshOrder: options.booking.freshOrder } : {}),
      ...(options.booking?.demotedShare !== undefined ? { yieldShare: options.booking.demotedShare } : {}),
      ...(options.booking?.freshNewestShare !== undefined ? { newestShare: options.booking.freshNewestShare } : {}),
      ...(options.booking?.freshNewestWhen === "standing"
        ? { newestWhile: () => this.standingQueue?.isStanding ?? false }
        : {}),
      ...(options.booking?.demotedFirstUnderS !== undefined
        ? {
            yieldFirstUnderMs: 1000 * options.booking.demotedFirstUnderS,
            yieldFirstWhile: () => !(this.standingQueue?.isStanding ?? false),
          }
        : {}),
    });
    this.cache = new QueueLengthCache(options.maxOngoingRequests, undefined, options.unprobedReplicas);
    this.estimator = new DrainRateEstimator(options.drainRate, clock.now());
    if (options.retryAfter.retryAfterPolicy === "retry_schedule")
      this.retrySchedule = new RetrySchedule(DEFAULT_RETRY_SCHEDULE_OPTIONS, clock.now());
    if (options.retryAfter.retryAfterPolicy === "booked_capacity")
      this.booking = new CapacityBooking(
        { ...DEFAULT_CAPACITY_BOOKING_OPTIONS, ...options.bookingLedger },
        clock.now(),
        options.knownFreshRate,
        options.hintSchedule,
      );
    this.admission = options.booking ?? DEFAULT_BOOKING_ADMISSION;
    // Counted for the ledger too: its probe is for a request's first refusal only (so is a hint schedule's row).
    if (this.booking || options.hintSchedule) this.refusals = new RefusalCounts();
    if (this.booking && this.admission.freshPastTargetShare !== undefined)
      this.freshOffered = new RecentRate(DRAINING_WINDOW_S);
    if (this.booking)
      this.standingQueue = new StandingQueue(
        this.admission,
        () => (this.estimator.warm ? this.estimator.rate : undefined),
        clock.now(),
      );
    if ((options.tenantHeadroomSlots ?? 0) > 0)
      this.headroom = new TenantHeadroom(
        options.tenantHeadroomSlots as number,
        (options.replicas.length * options.maxOngoingRequests) / (options.routerShards ?? 1),
        (tenant, priority) => this.queue.backlogOf(tenant, priority) > 0,
      );
  }

  get queueDepth(): number {
    return this.queue.size;
  }

  get backoffStreak(): number {
    return this.streak;
  }

  /** The ticket placed next: the oldest one for a single tenant; in weighted fair order across tenants. */
  get head(): string | undefined {
    return this.queue.peek()?.ticket;
  }

  isQueued(ticket: string): boolean {
    return this.queue.has(ticket);
  }

  /** The replica a ticket holds a lease on, if any. */
  leaseOf(ticket: string): string | undefined {
    return this.leases.get(ticket)?.replica;
  }

  /**
   * Admission: queue the ticket, or reject it at once from in-memory state (no I/O on this path).
   *
   * `booked_capacity`: a request whose fingerprint holds a promise due now takes it and may use the room held
   * for it (up to the queue bound); any other request must leave that room free and, while the queue's wait
   * would exceed the queue-delay target, is refused at once with a booked hint.
   *
   * `retry_schedule` (legacy) keys its bookings by `retry` (`x-stainless-retry-count`), which any client can
   * send; `booked_capacity` never reads it.
   *
   * Every policy is work-conserving: while nothing waits and a replica has a free slot, a request is queued
   * (and placed at once), whatever room is held; while nothing waits and a replica may have a free slot (its report
   * is stale), a request the admission would refuse waits for the probe, and is refused only if every replica proves
   * full. (`tenantHeadroomSlots` may keep such a request waiting, never refuse it: see `finishRound`.)
   */
  submit(ticket: string, options: SubmitOptions = {}): SubmitResult {
    // Asked again while it waits (the edge's first call failed on the way back): it arrived once. Counting it again
    // would count a second fresh arrival in the ledger's forecast (and in the tenant's headroom, the offered rate).
    if (this.queue.has(ticket)) return { kind: "queued" };
    const now = this.clock.now();
    this.estimator.advance(now, this.queue.size);
    const timing = this.hintedRetries.returned(options.fingerprint, now);
    const result = this.admit(ticket, options, now);
    if (timing !== undefined && result.kind === "queued" && this.awaitingProbe === ticket)
      this.awaitingProbeTiming = timing;
    else if (timing !== undefined) this.hintedRetries.count(result.kind === "queued" ? "admitted" : "refused", timing);
    if (result.kind === "queued" && this.admission.forgetRefusalsWhenQueued) this.refusals?.forget(options.fingerprint);
    return result;
  }

  private admit(ticket: string, options: SubmitOptions, now: number): SubmitResult {
    const retry = options.retry ?? false;
    const waitedMs = options.waitedMs ?? 0;
    const request: Requester = {
      tenant: options.tenant ?? "",
      weight: options.weight ?? 1,
      priority: options.priority ?? "interactive",
      fingerprint: options.fingerprint,
      horizonS: options.clientHorizonS ?? DEFAULT_HORIZON_S,
    };
    const schedule = this.retrySchedule;
    const booking = this.booking;
    const { claim, early } = this.arrive(request, retry, now);
    const claimed = claim !== undefined;
    const fresh = this.freshOffered !== undefined && this.neverRefused(request.fingerprint);
    if (fresh) this.freshOffered?.add(now);
    if (this.fleetDown()) return { kind: "rejected", rejection: this.reject("no_replica_available", now, request) };
    // A request re-acquired after a router reset queues as if it had arrived when it first did (see `waitedMs`).
    const entry = { ticket, ...request, enqueuedAtMs: waitedMs > 0 ? now - waitedMs : now };
    // Work-conserving: while nothing waits and a replica has a free slot, every request is queued (placed at once).
    if (this.queue.size === 0 && this.hasFreeSlot()) {
      this.queue.offer(entry, Number.POSITIVE_INFINITY);
      if (claim?.promised) this.promiseQueued(ticket, claim.leadS);
      if (early) booking?.admittedEarly(request.fingerprint, now);
      return { kind: "queued" };
    }
    const scheduleClaimed = schedule !== undefined && retry && schedule.claim(now);
    let held = schedule && !scheduleClaimed ? schedule.reservedRoom(now) : 0;
    const bound = this.queueBound();
    let limit = bound;
    // A request on its probable last attempt is lost if refused, or pushed out, or timed out: it waits in line with
    // first attempts (not demoted), and the target, which trades a wait for a retry, does not apply to it (the
    // queue's bound still does).
    const lastChance = booking !== undefined && this.onLastChance(request.fingerprint);
    // A demoted request waits behind the others up to the queue's bound: no delay target, no room held for it.
    const demoted = booking !== undefined && !lastChance && this.demoted(request.fingerprint, now);
    // The draining test counts the attempts offered (with `drainingIgnoresDemoted`, only those that join the line).
    if (!demoted || !this.admission.drainingIgnoresDemoted) this.standingQueue?.offer(now);
    if (booking && !demoted) {
      // The delay target binds promised retries too: they were promised capacity, not a place in a standing
      // queue. The room held for them is what other requests must leave free (capped, so no-shows cannot starve
      // fresh arrivals); a promise that is broken anyway lowers the ledger's trust in its forecast.
      const standing = this.standingQueue?.update(now, this.queue.size) ?? false;
      // `freshPastTargetShare`: while the queue stands the newest goes first, so a request never refused, arriving
      // while such requests fall short of the drain rate (a quiet spell after an overload), waits a slot's time, not
      // the depth the target counts.
      const pastTarget = fresh && this.freshFallShort(now);
      if (standing && !lastChance && !pastTarget) limit = Math.min(limit, this.standingQueue?.targetDepth() ?? limit);
      if (!claimed) held = Math.min(booking.heldRoom(now), this.admission.maxHeldRoomShare * limit);
      // An SDK client refused now is told when to come back and does; the room it leaves goes to clients that may not.
      const leave = this.admission.sdkClientsLeaveShare ?? 0;
      if (options.sdkClient && !claim?.promised && !lastChance && leave > 0) limit *= 1 - leave;
    }
    // A retry without a booking while the schedule is full is (nearly always) the SDK backoff of a client just
    // told there is no retry capacity for it within 60 s: that stays true, the room left is the fresh arrivals'.
    const unplanned = schedule !== undefined && retry && !scheduleClaimed && schedule.isFull(now);
    const queued = demoted
      ? { ...entry, yields: true, firstRefusedAtMs: this.refusals?.firstRefusedAtMs(request.fingerprint) }
      : entry;
    let offered: OfferResult = unplanned
      ? { kind: "refused" }
      : demoted
        ? this.queue.offer(queued, bound)
        : this.queue.offer(queued, limit - held, bound);
    // A router learns of room only from the probes of its placement rounds, which it holds for queued requests: a
    // refusal while nothing waits would go unchecked (a router with no queue refused every request; the legacy
    // schedule's held room refused fresh requests at an empty queue on a cold router). While nothing waits and a
    // replica may have room (never reported, due for a recheck, full on a stale report), the request is queued and
    // the round probes first; if every replica then proves full it is refused after all (`shedAwaitingProbe`).
    if (offered.kind === "refused" && this.queue.size === 0 && this.replicaMayHaveRoom(now)) {
      offered = this.queue.offer(queued, Number.POSITIVE_INFINITY);
      // One is let in only at an empty queue: the one before has left it (placed, cancelled or timed out).
      if (this.awaitingProbe !== undefined) this.settleAwaitingProbe(this.awaitingProbe, "admitted");
      this.awaitingProbe = ticket;
    }
    if (offered.kind === "refused") {
      this.standingQueue?.refused(now);
      // A refused promise lowers the ledger's trust; a refused best effort promised nothing.
      if (claim?.promised) booking?.kept(false, claim.leadS);
      return { kind: "rejected", rejection: this.reject("queue_full", now, request) };
    }
    if (claim?.promised) this.promiseQueued(ticket, claim.leadS);
    // Admitted before its booked instant (a first step found room): the booked second goes back to the ledger.
    if (early) booking?.admittedEarly(request.fingerprint, now);
    if (demoted) this.demotedCount += 1;
    // A full queue pushed out the newest request of the tenant most over its fair share (see FairQueue).
    const pushed = offered.displaced;
    if (!pushed) return { kind: "queued" };
    this.settlePromise(pushed.ticket, false);
    this.standingQueue?.refused(now);
    return { kind: "queued", displaced: { ticket: pushed.ticket, rejection: this.reject("queue_full", now, pushed) } };
  }

  /**
   * An attempt arrives, submitted or handed a slot in an isolate: the tenant's headroom, the legacy schedule's
   * arrival count and the ledger hear of it. It claims its own booking if one is due (`claim`); `early`: it holds a
   * promise not yet due (back at the first step of a two-step one). Neither is a fresh arrival for the ledger's
   * forecast; every other attempt is.
   */
  private arrive(
    request: Pick<Requester, "tenant" | "weight" | "priority" | "fingerprint">,
    retry: boolean,
    now: number,
  ): { claim: ClaimedBooking | undefined; early: boolean } {
    this.headroom?.arrived(request.tenant, request.weight, request.priority, now);
    this.retrySchedule?.onArrival(now, retry);
    const booking = this.booking;
    const claim = booking?.claim(request.fingerprint, now);
    const early = booking !== undefined && claim === undefined && booking.holds(request.fingerprint);
    if (booking && claim === undefined && !early) booking.onFresh(now);
    return { claim, early };
  }

  /** A retry that claimed a promise was queued: kept now (`keptWhenQueued`), else once it is placed. */
  private promiseQueued(ticket: string, leadS: number): void {
    if (this.booking?.keptWhenQueued) this.booking.kept(true, leadS);
    else this.promisedInQueue.set(ticket, leadS);
  }

  /** A queued ticket left the queue, placed or shed: if it held a claimed promise, the ledger learns the outcome. */
  private settlePromise(ticket: string, placed: boolean): void {
    const leadS = this.promisedInQueue.get(ticket);
    if (leadS === undefined) return;
    this.promisedInQueue.delete(ticket);
    if (placed || this.booking?.shedBreaksPromise) this.booking?.kept(placed, leadS);
  }

  /** Whether the request's client was first refused more than `demoteAfterS` ago (never while that is off). */
  private demoted(fingerprint: string | undefined, now: number): boolean {
    const after = this.admission.demoteAfterS;
    const first = this.refusals?.firstRefusedAtMs(fingerprint);
    return after !== undefined && first !== undefined && now - first > after * 1000;
  }

  /** Whether this is the request's first refusal, as far as the router remembers (never for one without a fingerprint). */
  private neverRefused(fingerprint: string | undefined): boolean {
    return fingerprint !== undefined && this.refusals !== undefined && this.refusals.of(fingerprint) === 0;
  }

  /** Whether the request was refused `lastChanceAfterRefusals` times already (never while that is off). */
  private onLastChance(fingerprint: string | undefined): boolean {
    const after = this.admission.lastChanceAfterRefusals;
    return this.refusals !== undefined && after !== undefined && this.refusals.of(fingerprint) >= after;
  }

  /**
   * Whether the requests never refused, offered over the last `DRAINING_WINDOW_S`, come to less than
   * `freshPastTargetShare` of the drain rate (never while the estimate is cold).
   */
  private freshFallShort(now: number): boolean {
    const share = this.admission.freshPastTargetShare;
    const rate = this.estimator.warm ? this.estimator.rate : undefined;
    if (this.freshOffered === undefined || share === undefined || rate === undefined) return false;
    return this.freshOffered.rate(now) < share * rate;
  }

  /** Whether some replica is not known to have no room (see `QueueLengthCache.mayHaveRoom`). */
  private replicaMayHaveRoom(now: number): boolean {
    return this.options.replicas.some((replica) => this.cache.mayHaveRoom(replica, now));
  }

  /** Whether some replica's cached queue length is below its cap (a free slot, as far as the router knows). */
  private hasFreeSlot(): boolean {
    return this.options.replicas.some((replica) => this.cache.accepts(replica));
  }

  /**
   * Starts a placement round for the head of the queue: two candidates and which of them to probe. The two are
   * drawn from the whole fleet (power of two choices); but when both look full (or down) while this router's own
   * releases freed a slot elsewhere, the two are drawn from those replicas instead, so a freed slot is taken at
   * once - no probe of full replicas, no backoff while a slot the router knows of waits.
   */
  beginRound(): RoundPlan | undefined {
    if (this.queue.size === 0) return undefined;
    const now = this.clock.now();
    let candidates = chooseTwo(this.options.replicas, this.random);
    if (!candidates.some((replica) => this.cache.accepts(replica))) {
      const free = this.knownFreeReplicas(now);
      if (free.length > 0) candidates = chooseTwo(free, this.random);
    }
    const probe = candidates.filter((replica) => this.cache.needsProbe(replica, now));
    for (const replica of probe) this.cache.probeSent(replica);
    return { candidates, probe, probeDeadlineMs: probeDeadlineMs(this.streak) };
  }

  /** A probe's answer: the replica's queue length, `undefined` when it failed, `"timeout"` when it missed its deadline. */
  reportProbe(replica: string, queueLength: number | undefined | "timeout"): void {
    const now = this.clock.now();
    // A probe past its deadline says "slow", not "gone": the replica is passed over this round, but it does
    // not count towards a fleet that is down (that would refuse everyone with 503 on a busy machine).
    if (queueLength === "timeout") this.cache.invalidate(replica, now, false);
    else if (queueLength === undefined || !Number.isFinite(queueLength)) this.cache.invalidate(replica, now);
    // A replica cannot hold fewer of our requests than we have unreleased leases on: a report read after it
    // answered but before our release arrived would otherwise count that request twice (once by the report,
    // once by the release) and let one more in than `maxOngoingRequests`.
    else this.cache.report(replica, Math.max(queueLength, this.leasesOn(replica)), now);
  }

  /**
   * Ends a round: the accepting candidate with the shorter queue takes the head of the queue; if neither accepts,
   * a replica where this router's own release freed a slot does (one released while the probes were out);
   * otherwise the backoff streak grows and the driver waits `delayMs` (and, if every replica is down, the queue is
   * shed).
   *
   * With `tenantHeadroomSlots`, a head whose tenant is at or above its fair share is not placed when that would
   * leave fewer than that many slots free while another tenant below its share is active: the next request in
   * fair order of a tenant that may be placed (in the head's class) takes the slot, or the round is `held`.
   */
  finishRound(plan: RoundPlan): RoundOutcome {
    const now = this.clock.now();
    const head = this.queue.peek();
    if (head === undefined) return { kind: "idle" };
    const queueLengthOf = (r: string) => this.cache.get(r)?.queueLength ?? Number.POSITIVE_INFINITY;
    const replica =
      pickShortestAccepting(plan.candidates, queueLengthOf, (r) => this.cache.accepts(r)) ??
      pickShortestAccepting(this.knownFreeReplicas(now), queueLengthOf, () => true);
    if (replica === undefined) {
      this.streak += 1;
      this.estimator.advance(now, this.queue.size);
      const shed = this.fleetDown() ? this.shedAll("no_replica_available", now) : this.shedAwaitingProbe(now);
      return { kind: "backoff", delayMs: backoffDelayMs(this.streak), shed };
    }
    const reserved = this.options.booking?.demotedHeadroomSlots ?? 0;
    if (reserved > 0 && head.yields && this.cache.freeSlots(this.options.replicas) <= reserved) {
      // Not a failed round either: the slots are kept for fresh arrivals; a release or an arrival ends the hold.
      this.estimator.advance(now, this.queue.size);
      return { kind: "held", delayMs: DEMOTED_HOLD_RECHECK_MS };
    }
    const gate = this.headroom?.gate(now, this.cache.freeSlots(this.options.replicas));
    let eligible: ((tenant: string) => boolean) | undefined;
    if (gate?.holds(head.tenant, head.priority)) {
      eligible = (tenant) => !gate.holds(tenant, head.priority);
      if (this.queue.peek(eligible) === undefined) {
        // Not a failed round: the streak stays, and the driver waits for a release or an arrival.
        this.estimator.advance(now, this.queue.size);
        return { kind: "held", delayMs: Math.max(1, gate.recheckAtMs - now) };
      }
    }
    // The head, or the first in fair order that the headroom lets through.
    const { ticket, tenant, priority, fingerprint } = this.queue.dispatch(eligible) as NonNullable<
      ReturnType<FairQueue["dispatch"]>
    >;
    // Placed, the request is served: its refusals are forgotten (a later request with the same fingerprint - the
    // same body sent again - starts afresh). Not when queued: the queue may still shed it.
    if (!this.admission.forgetRefusalsWhenQueued) this.refusals?.forget(fingerprint);
    this.settleAwaitingProbe(ticket, "admitted");
    this.standingQueue?.update(now, this.queue.size);
    this.streak = 0;
    this.cache.assign(replica);
    this.recordPlacement(ticket, replica, tenant, priority, now);
    this.settlePromise(ticket, true);
    return tenant ? { kind: "placed", ticket, replica, tenant } : { kind: "placed", ticket, replica };
  }

  /**
   * Ends a lease: the response finished, failed or its client left. `replicaFailed` `true` marks the replica down
   * until a probe succeeds; `"full"` (the replica refused the request as full itself, a 429) makes it count as full
   * until a probe sent after the release reads its queue length, in a round under way too
   * (`QueueLengthCache.markFull`). Returns false for an unknown (already released or reclaimed) ticket.
   */
  release(ticket: string, replicaFailed: ReleaseOutcome = false): boolean {
    const lease = this.leases.get(ticket);
    if (!lease) return false;
    this.leases.delete(ticket);
    this.completed += 1;
    this.cache.complete(lease.replica);
    this.headroom?.ended(lease.tenant, lease.priority, this.clock.now());
    if (replicaFailed === "full") this.cache.markFull(lease.replica, this.clock.now());
    else if (replicaFailed) this.cache.invalidate(lease.replica, this.clock.now());
    return true;
  }

  /**
   * Whether a Worker isolate may hand a finished request's slot straight to its next request (see
   * `handOff`): only while nothing waits, no promise is outstanding, and more slots are free than the tenant
   * headroom keeps (so a hand-off takes nothing that queueing, a booked retry or a lighter tenant would get).
   */
  handoffAllowed(): boolean {
    if (this.queue.size > 0 || this.booking?.anyOutstandingAt(this.clock.now())) return false;
    return this.cache.freeSlots(this.options.replicas) > (this.options.tenantHeadroomSlots ?? 0);
  }

  /**
   * The slot of `ticket` was handed, in a Worker isolate, from the request that ended to the next one, on the
   * same replica: counted as that request's end and the next one's placement (admitted, its tenant, a drain
   * for the estimator), with the lease's lifetime started again. The next request is an arrival as a submitted one
   * is (`arrive`): a fresh one for `booked_capacity`'s forecast, or the claim of its own booking, a promise kept. A
   * next request the router refused with a hint (by its `fingerprint`) is a hinted retry admitted, timed when the
   * isolate's report arrives (at most about 100 ms after the hand-off), and its refusals are forgotten as a placed
   * request's are. Returns false for an unknown ticket (reclaimed, or from before a restart).
   *
   * @example
   * ```ts
   * core.handOff("t1", { tenant: "beta", fingerprint }); // t1's slot now serves beta's request
   * ```
   */
  handOff(ticket: string, next: Pick<SubmitOptions, "tenant" | "weight" | "priority" | "fingerprint"> = {}): boolean {
    const lease = this.leases.get(ticket);
    if (!lease) return false;
    const now = this.clock.now();
    const timing = this.hintedRetries.returned(next.fingerprint, now);
    if (timing !== undefined) this.hintedRetries.count("admitted", timing);
    this.refusals?.forget(next.fingerprint);
    this.completed += 1;
    this.headroom?.ended(lease.tenant, lease.priority, now);
    const tenant = next.tenant ?? "";
    const priority = next.priority ?? "interactive";
    // The isolate does not report whether the next request said it was a retry: only the legacy `retry_schedule`
    // reads that, and hand-offs happen only while nothing waits, when retries are few.
    const { claim, early } = this.arrive(
      { tenant, weight: next.weight ?? 1, priority, fingerprint: next.fingerprint },
      false,
      now,
    );
    // Placed at once: a promise it claimed is kept; one not yet due goes back to the ledger, as in `submit`.
    if (claim?.promised) this.booking?.kept(true, claim.leadS);
    if (early) this.booking?.admittedEarly(next.fingerprint, now);
    this.recordPlacement(ticket, lease.replica, tenant, priority, now);
    return true;
  }

  /**
   * What a placement counts, from the queue (`finishRound`) or by a hand-off (`handOff`): the tenant's admission,
   * the headroom, the lease (its lifetime from now), the admitted counter and a drain for the estimator.
   */
  private recordPlacement(ticket: string, replica: string, tenant: string, priority: PriorityClass, now: number): void {
    if (tenant) this.tenantCounts.add(tenant, "admitted");
    this.headroom?.placed(tenant, priority);
    this.leases.set(ticket, { replica, expiresAtMs: now + this.options.leaseTimeoutMs, tenant, priority });
    this.admitted += 1;
    this.estimator.recordDrain(now, this.queue.size);
    this.accuracy.onDrain(now, this.estimator.drainCount);
  }

  /** The client gave up: leave the queue, or give back the slot if it was already placed. */
  cancel(ticket: string): "dequeued" | "released" | "unknown" {
    // A client that left says nothing of the forecast: its promise is neither kept nor broken.
    this.promisedInQueue.delete(ticket);
    if (this.queue.remove(ticket)) {
      this.settleAwaitingProbe(ticket, "admitted");
      return "dequeued";
    }
    return this.release(ticket) ? "released" : "unknown";
  }

  /** Sheds requests that waited past the queue timeout and reclaims leases past their lifetime. */
  expire(): { timedOut: Array<{ ticket: string; rejection: Rejection }>; reclaimed: string[] } {
    const now = this.clock.now();
    const timedOut: Array<{ ticket: string; rejection: Rejection }> = [];
    const expired: string[] = [];
    const waits = this.waitsMs();
    for (const entry of this.queue.entries()) {
      if (now - entry.enqueuedAtMs < waits.timeoutMs) break; // arrival order: the rest are younger
      if (now < this.waitDeadlineMs(entry, waits)) continue; // demoted: a longer wait
      expired.push(entry.ticket);
    }
    for (const ticket of expired) {
      this.settlePromise(ticket, false);
      this.settleAwaitingProbe(ticket, "admitted");
      const entry = this.queue.remove(ticket);
      timedOut.push({ ticket, rejection: this.reject("queue_timeout", now, entry) });
    }
    const reclaimed: string[] = [];
    for (const [ticket, lease] of this.leases) {
      if (lease.expiresAtMs <= now) {
        this.release(ticket);
        reclaimed.push(ticket);
      }
    }
    return { timedOut, reclaimed };
  }

  /**
   * How long a request may wait now (`timeoutMs`): the queue's timeout, or `standingTimeoutS` while the queue stands;
   * and a demoted one (`demotedMs`): the queue's own timeout or `demotedTimeoutS`, whichever is longer (the shorter
   * standing one is for those newest-first dispatch leaves at the bottom, and the demoted give way by design), or
   * `demotedQuietTimeoutS` while no one has been turned away for a full queue lately. Read once per pass over the
   * queue: the same for every entry.
   */
  private waitsMs(): { timeoutMs: number; demotedMs: number } {
    const standingS = this.admission.standingTimeoutS;
    const timeoutMs =
      standingS === undefined || !this.standingQueue?.isStanding
        ? this.options.queueTimeoutMs
        : Math.min(this.options.queueTimeoutMs, standingS * 1000);
    const quietS = this.refusingNow() ? undefined : this.admission.demotedQuietTimeoutS;
    const demotedS = Math.max(this.admission.demotedTimeoutS ?? 0, quietS ?? 0);
    return { timeoutMs, demotedMs: Math.max(this.options.queueTimeoutMs, demotedS * 1000) };
  }

  /**
   * When `entry` is shed for waiting: `timeoutMs` after it was queued, or `demotedMs` for a demoted entry (see
   * `waitsMs`). So no entry's deadline comes before `enqueuedAtMs + timeoutMs`.
   */
  private waitDeadlineMs(
    entry: { enqueuedAtMs: number; yields?: boolean },
    waits: { timeoutMs: number; demotedMs: number },
  ): number {
    return entry.enqueuedAtMs + (entry.yields ? waits.demotedMs : waits.timeoutMs);
  }

  /** Whether anyone was turned away for a full queue within the last `DRAINING_WINDOW_S` seconds. */
  private refusingNow(): boolean {
    return this.clock.now() - this.lastFullRefusalMs < DRAINING_WINDOW_S * 1000;
  }

  /** The earliest moment `expire()` has work to do, for an alarm; `undefined` when nothing waits. */
  nextExpiryMs(): number | undefined {
    let next: number | undefined;
    // In arrival order, up to the oldest entry that does not yield: every later one's deadline is at least its.
    // Entries that yield before it may keep a longer timeout (the queue's under a standing queue's shorter one, or
    // `demotedTimeoutS`, `demotedQuietTimeoutS`), so a later entry's may come first.
    const waits = this.waitsMs();
    for (const entry of this.queue.entries()) {
      const at = this.waitDeadlineMs(entry, waits);
      if (next === undefined || at < next) next = at;
      if (!entry.yields) break;
    }
    for (const lease of this.leases.values())
      if (next === undefined || lease.expiresAtMs < next) next = lease.expiresAtMs;
    return next;
  }

  /** The signals the ledger plans on: with `knownDrainRate` (the simulator's), the drain rate it knows. */
  private ledgerSignals(signals: LoadSignals, now: number): LoadSignals {
    const known = this.options.knownDrainRate;
    return known ? { ...signals, drainRate: known(now / 1000) } : signals;
  }

  /** The signals a Retry-After policy reads, all from memory. */
  loadSignals(): LoadSignals {
    return {
      queueDepth: this.queue.size,
      drainRate: this.estimator.rate,
      warm: this.estimator.warm,
      replicaQueueLengthSum: this.cache.totalQueueLength(),
      numReplicas: this.options.replicas.length,
      maxOngoingRequests: this.options.maxOngoingRequests,
      backoffStreak: this.streak,
    };
  }

  /**
   * The `booked_capacity` ledger's promises and trust, read without moving anything on (unlike `stats()`, which
   * advances the drain-rate estimator): the simulator samples it without changing a run. `undefined` for the other
   * policies.
   */
  ledgerView(): LedgerView | undefined {
    const booking = this.booking;
    if (!booking) return undefined;
    return {
      promises: booking.promiseOutcomes,
      trust: booking.trust,
      showRate: booking.showRate,
      freshBaseline: booking.baseline ?? null,
    };
  }

  stats(): RouterStats {
    this.estimator.advance(this.clock.now(), this.queue.size);
    const cached = this.cache.snapshot();
    return {
      queueDepth: this.queue.size,
      maxQueuedRequests: this.options.maxQueuedRequests,
      drainRate: this.estimator.rate ?? null,
      estimatorWarm: this.estimator.warm,
      drainCount: this.estimator.drainCount,
      backoffStreak: this.streak,
      activeLeases: this.leases.size,
      admitted: this.admitted,
      completed: this.completed,
      rejections: { ...this.rejections },
      rejectionsByReason: { ...this.rejectionsByReason },
      suggestedDelayBuckets: SUGGESTED_DELAY_BOUNDS.map((le, i) => ({ le, count: this.suggestedDelayCounts[i] ?? 0 })),
      suggestedDelaySumS: this.suggestedDelaySumS,
      drainTimeError: this.accuracy.errorHistogram(),
      replicas: Object.fromEntries(this.options.replicas.map((r) => [r, cached[r] ?? null])),
      recentObservations: this.accuracy.recent(),
      pendingObservations: this.accuracy.pendingCount,
      tenants: this.tenantCounts.snapshot(),
      hintedRetries: this.hintedRetries.counts(),
      outstandingBookings: this.booking?.outstandingAt(this.clock.now()) ?? 0,
      ledger: this.ledgerView() ?? null,
      demoted: this.demotedCount,
    };
  }

  /** Replicas where this router's own releases freed a slot since their last (fresh) report (QueueLengthCache.knownFree). */
  private knownFreeReplicas(now: number): string[] {
    return this.options.replicas.filter((replica) => this.cache.knownFree(replica, now));
  }

  /** This router's unreleased leases on `replica`. */
  private leasesOn(replica: string): number {
    let count = 0;
    for (const lease of this.leases.values()) if (lease.replica === replica) count += 1;
    return count;
  }

  private fleetDown(): boolean {
    const now = this.clock.now();
    return this.options.replicas.every((replica) => this.cache.isDown(replica, now));
  }

  /**
   * The requests let in only to wait for a probe (`admit`: a replica may have had room), refused once no replica may
   * have any (every one known full on a fresh report, or down), and with them, newest first, any past the queue's
   * bound (a bound of 0 lets the one request placed at once by work conservation past it): the queue holds no more
   * than its bound for anyone else.
   */
  private shedAwaitingProbe(now: number): Array<{ ticket: string; rejection: Rejection }> {
    if (this.replicaMayHaveRoom(now)) return [];
    const bound = this.queueBound();
    const beyond = this.queue.size > bound ? [...this.queue.entries()].reverse().slice(0, this.queue.size - bound) : [];
    for (const entry of beyond) this.queue.remove(entry.ticket);
    // Let in at an empty queue, it is the oldest waiting: last in newest-first order.
    const awaiting = this.awaitingProbe === undefined ? undefined : this.queue.remove(this.awaitingProbe);
    const shed = this.refuseShed(awaiting ? [...beyond, awaiting] : beyond, "queue_full", now);
    // Not found: it left the queue another way (placed, cancelled, timed out) and was counted then.
    this.awaitingProbe = undefined;
    return shed;
  }

  /** The queue's bound: `maxQueuedRequests`, -1 meaning unlimited (Ray's `max_queued_requests = -1`). */
  private queueBound(): number {
    return this.options.maxQueuedRequests < 0 ? Number.POSITIVE_INFINITY : this.options.maxQueuedRequests;
  }

  private shedAll(reason: RejectionReason, now: number): Array<{ ticket: string; rejection: Rejection }> {
    return this.refuseShed(this.queue.clear(), reason, now);
  }

  /** A hinted retry that waited for a probe (`awaitingProbeTiming`) is counted now, with what became of it. */
  private settleAwaitingProbe(ticket: string, outcome: HintOutcome): void {
    if (ticket !== this.awaitingProbe || this.awaitingProbeTiming === undefined) return;
    this.hintedRetries.count(outcome, this.awaitingProbeTiming);
    this.awaitingProbeTiming = undefined;
  }

  /** Refuses entries already taken out of the queue, each with its hint; a promise one of them held ends broken. */
  private refuseShed(
    entries: readonly FairEntry[],
    reason: RejectionReason,
    now: number,
  ): Array<{ ticket: string; rejection: Rejection }> {
    return entries.map((entry) => {
      this.settlePromise(entry.ticket, false);
      this.settleAwaitingProbe(entry.ticket, "refused");
      return { ticket: entry.ticket, rejection: this.reject(reason, now, entry) };
    });
  }

  /**
   * The simulator's hint for a refusal its schedule covers, as the ledger would send it (within the second after the
   * scheduled one, within the client's horizon), for a policy without a ledger; undefined elsewhere.
   */
  private scheduledDecision(
    now: number,
    request: Partial<Requester>,
    signals: LoadSignals,
    horizonS: number,
  ): RetryAfterDecision | undefined {
    const scheduled = this.options.hintSchedule?.(now, this.neverRefused(request.fingerprint));
    if (scheduled === undefined) return undefined;
    const { retryAfter } = this.options;
    return decideRetryAfter(
      signals,
      { ...retryAfter, jitter: 0 },
      this.random,
      () => scheduled + this.random(),
      horizonS,
    );
  }

  /**
   * A refusal and its Retry-After. With `tenant`, the queue depth the policies read is the requests that would be
   * placed before this tenant's next one (its share of the drain, its own backlog: FairQueue.aheadOf); with a
   * single tenant that is the queue length, as before.
   */
  private reject(reason: RejectionReason, now: number, request: Partial<Requester> = {}): Rejection {
    const tenant = request.tenant !== undefined ? request : undefined;
    const horizonS = request.horizonS ?? DEFAULT_HORIZON_S;
    const signals = this.loadSignals();
    if (tenant)
      signals.queueDepth = this.queue.aheadOf(
        tenant.tenant as string,
        tenant.weight ?? 1,
        tenant.priority ?? "interactive",
      );
    if (reason === "queue_full") this.lastFullRefusalMs = now;
    const { retryAfter } = this.options;
    // With every replica down there is no drain to estimate: only the static value (or nothing) is honest.
    const schedule = this.retrySchedule;
    const booking = this.booking;
    let booked: BookedHint | undefined;
    const decision =
      reason === "no_replica_available"
        ? decideRetryAfter(signals, retryAfter, this.random, () => undefined)
        : schedule
          ? // The schedule places the hint inside the booked second itself: the +-20% jitter would leave it. (Its
            // static fallback keeps the jitter: a cold router's refusals must not all name the same second.)
            decideRetryAfter(signals, { ...retryAfter, computedJitter: 0 }, this.random, () =>
              signals.warm ? schedule.estimate(now, signals, this.random) : undefined,
            )
          : booking
            ? // The ledger places the hint inside its second (or spreads a best effort over the horizon); the static
              // fallback keeps the jitter.
              decideRetryAfter(
                signals,
                { ...retryAfter, computedJitter: 0 },
                this.random,
                () => {
                  // Back at the first step of a two-step promise: told the rest of it; else a new booking.
                  booked =
                    booking.heldHint(request.fingerprint, now, horizonS) ??
                    (signals.warm
                      ? booking.hint(now, this.ledgerSignals(signals, now), horizonS, this.random, {
                          first: this.neverRefused(request.fingerprint),
                          firstRefusedAtMs: this.refusals?.firstRefusedAtMs(request.fingerprint),
                        })
                      : undefined);
                  return booked?.delayS;
                },
                horizonS,
              )
            : (this.scheduledDecision(now, request, signals, horizonS) ??
              decideRetryAfter(signals, retryAfter, this.random));
    // The schedule records the promise actually sent (after jitter), so later hints plan around it.
    if (schedule && decision.rung === "computed") schedule.book(now, decision.jitteredS as number);
    if (booking && booked && decision.rung === "computed")
      booking.book(request.fingerprint, now, { delayS: decision.jitteredS as number, promised: booked.promised });
    if (decision.jitteredS !== undefined) this.hintedRetries.hinted(request.fingerprint, now, decision.jitteredS);
    this.refusals?.refused(request.fingerprint, now);
    const statusCode = reason === "no_replica_available" ? 503 : this.options.statusCode;
    this.rejections[decision.rung] += 1;
    if (tenant?.tenant) this.tenantCounts.add(tenant.tenant, "shed");
    this.rejectionsByReason[reason] += 1;
    if (decision.jitteredS !== undefined) {
      const bucket = SUGGESTED_DELAY_BOUNDS.findIndex((le) => (decision.jitteredS as number) <= le);
      this.suggestedDelayCounts[bucket] = (this.suggestedDelayCounts[bucket] ?? 0) + 1;
      this.suggestedDelaySumS += decision.jitteredS;
    }
    this.accuracy.recordRejection(now, signals.queueDepth, this.estimator.drainCount, decision.jitteredS);
    const message =
      reason === "no_replica_available"
        ? "No replica of this deployment is reachable"
        : reason === "queue_timeout"
          ? `Request timed out waiting for a replica (max_queued_requests=${this.options.maxQueuedRequests})`
          : `Request dropped due to backpressure (num_queued_requests=${this.queue.size}, max_queued_requests=${this.options.maxQueuedRequests})`;
    return {
      statusCode,
      reason,
      message,
      decision,
      record: {
        event: "spillway.rejection",
        reason,
        status: statusCode,
        policy: retryAfter.retryAfterPolicy,
        rung: decision.rung,
        queue_depth: this.queue.size,
        max_queued_requests: this.options.maxQueuedRequests,
        drain_rate: signals.drainRate ?? null,
        estimator_warm: signals.warm,
        pre_jitter_s: decision.preJitterS ?? null,
        post_jitter_s: decision.jitteredS ?? null,
        retry_after_s: decision.retryAfterS ?? null,
        retry_after_ms: decision.retryAfterMs ?? null,
        drain_counter: this.estimator.drainCount,
        backoff_streak: this.streak,
        ...(tenant?.tenant ? { tenant: tenant.tenant } : {}),
        ...(booking
          ? {
              booking: {
                promised: booked?.promised ?? null,
                trust: booking.trust,
                baseline: booking.baseline ?? null,
                outstanding: booking.outstanding,
              },
            }
          : {}),
      },
    };
  }
}
