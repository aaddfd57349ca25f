import type { CapacityBookingOptions, HintSchedule } from "./capacity-booking";
import type { DrainRateOptions } from "./drain-rate";
import type { YieldOrder } from "./fair-queue";
import type { RetryAfterOptions } from "./retry-after";

/*
 * What a router is configured with: the deployment's options (validated at the edge by src/edge/config.ts, trusted
 * by RouterCore) and the admission of the `booked_capacity` policy with its defaults. The router itself is
 * src/core/router-core.ts.
 */

/**
 * Everything one router needs to know about its deployment. Validated at the edge; trusted here.
 *
 * @example
 * ```ts
 * const options: RouterOptions = {
 *   replicas: ["http://127.0.0.1:8001", "http://127.0.0.1:8002"],
 *   maxOngoingRequests: 8,
 *   maxQueuedRequests: 16,
 *   queueTimeoutMs: 30_000,
 *   leaseTimeoutMs: 600_000,
 *   statusCode: 429,
 *   retryAfter: {
 *     retryAfterPolicy: "booked_capacity",
 *     retryAfterS: 5, // the static fallback
 *     jitter: 0.1,
 *     saturation: { backoffStreakSaturation: 5, occupancyWeight: 0.25, backoffWeight: 0.25 },
 *   },
 *   drainRate: DEFAULT_DRAIN_RATE_OPTIONS,
 * };
 * ```
 */
export interface RouterOptions {
  /** Replica base URLs (or any stable replica ids). */
  replicas: string[];
  /**
   * Replicas that are never probed (`load: "none"`): their queue length is this router's own count of the
   * requests it has in flight there. Default: none.
   */
  unprobedReplicas?: string[];
  /** A replica accepts a request while its queue length is below this (Ray's `max_ongoing_requests`). */
  maxOngoingRequests: number;
  /** A request arriving while this many wait is rejected (Ray's `max_queued_requests`); -1: never (unlimited). */
  maxQueuedRequests: number;
  /** A request that waits longer than this is shed. */
  queueTimeoutMs: number;
  /** A lease never released (its Worker died) is reclaimed after this long. */
  leaseTimeoutMs: number;
  /** Status of a backpressure rejection: 429 (default) or 503. */
  statusCode: 429 | 503;
  retryAfter: RetryAfterOptions;
  drainRate: DrainRateOptions;
  /** Admission of the `booked_capacity` policy (ignored by the others); defaults in {@link DEFAULT_BOOKING_ADMISSION}. */
  booking?: BookingAdmission;
  /**
   * `booked_capacity`'s ledger tunables over `DEFAULT_CAPACITY_BOOKING_OPTIONS` (src/core/capacity-booking.ts; the simulator's variants of
   * the default; not in the Worker's configuration).
   */
  bookingLedger?: Partial<CapacityBookingOptions>;
  /**
   * The simulator's knowledge of the fresh arrivals to come (requests per second at t seconds), handed to the
   * ledger in place of its forecast (`CapacityBooking`'s `knownFreshRate`); never in the Worker's configuration.
   */
  knownFreshRate?: (tS: number) => number;
  /**
   * The simulator's hints for the refusals it covers, in place of the policy's: the ledger's for `booked_capacity`
   * (`CapacityBooking`'s `hintSchedule`), the constant or the drain estimate for the others (`npm run
   * eval:hint-search`); never in the Worker's configuration.
   */
  hintSchedule?: HintSchedule;
  /**
   * The simulator's knowledge of the fleet's capacity, as this router's share (requests per second at t seconds),
   * handed to the ledger in place of the drain-rate EWMA it plans on (the variant `known-capacity`, which measures
   * what that estimate's errors cost); never in the Worker's configuration.
   */
  knownDrainRate?: (tS: number) => number;
  /**
   * Slots of the fleet a tenant at or above its weighted fair share may not take while another tenant below its
   * share is active (src/core/tenant-headroom.ts): its request waits in the queue instead. 0 or absent: none (every
   * placement is work-conserving). Only traffic of several tenants is affected.
   */
  tenantHeadroomSlots?: number;
  /**
   * Routers that share this fleet (the deployment's shards; default 1). Each sees about 1/n of every tenant's
   * requests, so the headroom compares a tenant's requests here with 1/n of its fair share of the fleet's slots.
   */
  routerShards?: number;
}

/**
 * How `booked_capacity` admits: a queue-delay target and a cap on the room held for promised retries.
 *
 * @example
 * ```ts
 * const admission: BookingAdmission = { ...DEFAULT_BOOKING_ADMISSION, demoteAfterS: 10 };
 * ```
 */
export interface BookingAdmission {
  /**
   * CoDel-style target: a request that would wait longer than this in the queue (its position over the drain
   * rate) is refused at once with a booked hint instead of joining a standing queue. `undefined`: no target.
   */
  queueDelayTargetS: number | undefined;
  /**
   * The target applies once the queue has stood above it this long (CoDel's interval: a burst's transient queue
   * is kept, a standing one is cut), until nothing has been refused for as long - at least `DRAINING_WINDOW_S`
   * (src/core/standing-queue.ts), so that 0 (the target from the first moment the queue stands) does not let it go
   * at the next arrival - or the queue drains by itself (`drainingOfferedShare`).
   */
  standingIntervalS: number;
  /**
   * CoDel's short timeout under adaptive LIFO (Facebook pairs the two): while the queue stands, a request that has
   * waited this long (not a demoted one, which gives way by design) is shed with a booked hint at once, rather than
   * kept at the bottom of a newest-first queue until the queue's own timeout. `undefined`: off (the default).
   */
  standingTimeoutS?: number;
  /** At most this share of the queue's limit is held for promised retries. */
  maxHeldRoomShare: number;
  /**
   * A queue the offered load no longer refills is draining, not standing: while the attempts offered over the last
   * `DRAINING_WINDOW_S` seconds (src/core/standing-queue.ts) come to less than this share of the drain rate, the
   * delay target is off (a burst's queue after the burst ends drains by itself; cutting it refuses the fresh arrivals
   * that follow).
   * `undefined`: the target ignores the offered load.
   */
  drainingOfferedShare?: number;
  /**
   * A request refused this many times before (counted by fingerprint, src/core/refusal-counts.ts) is probably on
   * its last attempt (the SDKs retry twice by default: 2): it is queued past the delay target, up to the queue's
   * bound, rather than lost, and it is never demoted (`demoteAfterS`): a demoted last attempt would wait behind every
   * first attempt, be the first pushed out at the bound, or time out, and be lost all the same. `undefined`: off
   * (the delay target binds every request alike).
   */
  lastChanceAfterRefusals?: number;
  /**
   * A request whose client was first refused more than this long ago gives way (adaptive LIFO, at the grain of a
   * request): it waits behind every request not demoted (the queue's batch class), outside the delay target, and
   * holds no room - a request that finds the queue at its bound pushes one out (see `demotedOrder`). A few
   * seconds (the default, 3 s) demote the retries made at a hint and leave the SDKs' immediate backoff alone: in an
   * overload a retry takes only the capacity that first attempts leave, as the ledger planned it, and the capacity
   * goes to requests that can still be served soon after their first attempt; once the overload ends, it is served
   * at once. `undefined`: off.
   */
  demoteAfterS?: number;
  /**
   * The order of demoted requests among themselves (`FairQueue`'s `yieldOrder`): `next_horizon` (the default)
   * serves first the one whose next completion horizon (5, 15, 30, 60, 120 s after its first refusal, less
   * `demotedServiceS`) is due soonest; `newest_first` (adaptive LIFO) serves the one first refused most recently
   * first and pushes out the one first refused longest ago; `arrival` keeps them in line in arrival order and
   * pushes out the newest. Absent: `newest_first`, FairQueue's own default (`DEFAULT_BOOKING_ADMISSION` sets it).
   */
  demotedOrder?: YieldOrder;
  /** `demotedOrder` `next_horizon`: seconds from a request's start to its answer (`FairQueue`'s `yieldServiceS`; 4). */
  demotedServiceS?: number;
  /**
   * How long a demoted request may wait in the queue, seconds, when that is longer than the queue's own timeout
   * (`queueTimeoutMs`, which binds every other request). A demoted request gives way to every first attempt by
   * design, so it waits longer than they do; shed at the queue's timeout, it loses the wait it has made, often just
   * before the fresh arrivals thin out, and costs its client one more attempt (measured: in llm-sizes, 2.3% of the
   * requests had their first retry shed so, which put the attempts per offered request above static 30 s's). A wait
   * below the queue's timeout changes nothing. `undefined`: the queue's timeout, as for every request (the default
   * until 2026-12-07; now 40 s, docs/retry-policy.md, variant `demoted-timeout-off`).
   */
  demotedTimeoutS?: number;
  /**
   * How long a demoted request may wait while the router has turned no one away for lack of room (an arrival refused
   * for a full queue, or a queued request pushed out by one) in the last `DRAINING_WINDOW_S` seconds
   * (src/core/standing-queue.ts), when that is longer than its timeout otherwise
   * (`demotedTimeoutS`, the queue's): while no one is turned away the place it holds costs no one a refusal (a fresh
   * arrival goes before it, and at the queue's bound pushes it out), and shed it would only spend one more of its
   * client's attempts, to come back to a queue that has room. A refusal ends the quiet: from then on the shorter
   * deadline binds again, and a request already past it is shed. Measured (variant `demoted-quiet-off`,
   * docs/retry-policy.md): in llm-sizes the default's last attempts above static 30 s's were retries shed after 40 s
   * behind the arrivals that followed the burst, admitted at once on their next attempt. `undefined`: off (the
   * default until 2026-12-07's second change). 60 s before run 30, now 120 s (variant `demoted-quiet-60`,
   * docs/retry-policy.md): with 60 s, `capacity-halves` on the held-out seeds was the one scenario where the default
   * made more attempts per offered request than static 30 s.
   */
  demotedQuietTimeoutS?: number;
  /**
   * Trunk reservation for fresh arrivals: a demoted request is placed only while more than this many slots of the
   * fleet are free (as this router knows them); the last ones are kept for requests on their first attempts, which
   * then start at once and on a smaller batch. The round is held until a release or an arrival. `undefined` or 0: off.
   */
  demotedHeadroomSlots?: number;
  /**
   * The order of the requests that are not demoted among themselves (`FairQueue`'s `freshOrder`): `arrival` (FIFO,
   * the default) or `next_horizon` (earliest deadline first on each one's next completion horizon from its arrival,
   * `demotedServiceS` before it): behind a standing queue a new arrival that can still be served within 5 s goes
   * first, and a queued request goes first again as its own deadline comes. `undefined`: `arrival`.
   */
  freshOrder?: "arrival" | "next_horizon";
  /**
   * While demoted requests wait beside others, this share of the dispatches goes to the demoted (`FairQueue`'s
   * `yieldShare`) instead of none until nothing else waits. `undefined` or 0: off (measured, not kept: variant
   * `demoted-share-quarter`).
   */
  demotedShare?: number;
  /**
   * Of the dispatches among requests that are not demoted, this share goes to the newest that can still be answered
   * within 5 s of its arrival (`FairQueue`'s `newestShare`), when `freshNewestWhen` says. `undefined` or 0: off.
   * The default, 1 while the queue stands, is adaptive LIFO: a standing queue's newest arrival is served while it
   * can still be served soon, and the ones already late wait (the sustained overload's p50 time to success).
   */
  freshNewestShare?: number;
  /**
   * When `freshNewestShare` applies: `standing` (the default: only while the queue stands above the delay target,
   * see `standingIntervalS`; a burst's transient queue stays first in, first out) or `always` (measured, not kept:
   * variant `fresh-newest-half`). `undefined`: `always`.
   */
  freshNewestWhen?: "always" | "standing";
  /**
   * Room kept for clients that may not use a hint: this share of the queue's limit (the delay target's depth while
   * the queue stands) is closed to requests whose client announced an OpenAI SDK (`SubmitOptions.sdkClient`) and
   * holds no promise. An SDK honours Retry-After, so refusing it with a booked hint costs it a wait; a client
   * without SDK headers may retry on its own backoff or give up, so refusing it may lose the request. The default
   * (`DEFAULT_BOOKING_ADMISSION`, since 2026-12-04) keeps 5%; `undefined` or 0: off (variant `sdk-room-off`).
   */
  sdkClientsLeaveShare?: number;
  /**
   * While the queue does not stand, demoted requests go before the others as long as every request waiting that is
   * not demoted has waited less than this many seconds (`FairQueue`'s `yieldFirstUnderMs`): after a burst, the
   * arrivals that follow it lend the wait they can spare to the burst's refused requests, as the clairvoyant bound's
   * schedule does (`docs/evaluation.md`, "Which requests the default serves late"). `undefined`: off. Measured and
   * not kept (variant `demoted-first-under-8s`, docs/retry-policy.md): the arrivals after a burst miss their 5 s.
   */
  demotedFirstUnderS?: number;
  /**
   * The draining test (`drainingOfferedShare`) counts only the attempts that join the line, not the demoted ones:
   * after a wave, the retries its refusals bring back wait outside the delay target and do not refill the queue it
   * bounds, so the trough that follows may count as draining. `undefined` or false: every attempt counts. Measured
   * and not kept (variant `draining-ignores-demoted`, docs/retry-policy.md): the sustained overload's p50 doubles.
   */
  drainingIgnoresDemoted?: boolean;
  /**
   * When the router forgets a request's refusals (src/core/refusal-counts.ts: how many, and when the first was):
   * false or `undefined` (the default since 2026-12-05), once it is placed on a replica; true, once it is queued,
   * as until then. Queued is not served: a request queued on its second attempt and shed at the queue timeout came
   * back on its third as if never refused - not demoted by its first refusal, ranked by the wrong horizons among
   * the demoted (`next_horizon`), counted from one again. Measured (variant `forget-when-queued`,
   * docs/retry-policy.md, "Refusals remembered until the request is placed").
   */
  forgetRefusalsWhenQueued?: boolean;
  /**
   * While the requests never refused (first attempts, by fingerprint), offered over the last `DRAINING_WINDOW_S`
   * seconds (src/core/standing-queue.ts), come to less than this share of the drain rate, such a request joins the
   * queue past the delay target, up to the queue's bound. The target counts every request waiting ahead, but while
   * the queue stands the newest goes first (`freshNewestWhen` `standing`): as an overload gives way to a quiet spell
   * (the trough after a wave), a new arrival would wait about a slot's time, not the standing queue's depth, and
   * refusing it sent it past the promises made in the overload. `undefined`: off (the default). Measured and not
   * kept (variant `fresh-past-target`, docs/retry-policy.md): it serves the quiet spell's first arrivals sooner and
   * the overload's later, and leaves the pooled completion curve where it was.
   */
  freshPastTargetShare?: number;
}

/**
 * `booked_capacity`'s admission as the Worker runs it unless a deployment's `booking` says otherwise: each value's
 * reason is on its field in {@link BookingAdmission}, and the evaluation behind it in docs/retry-policy.md.
 *
 * @example
 * ```ts
 * const booking: BookingAdmission = { ...DEFAULT_BOOKING_ADMISSION, queueDelayTargetS: 2 };
 * ```
 */
export const DEFAULT_BOOKING_ADMISSION: BookingAdmission = {
  queueDelayTargetS: 1,
  standingIntervalS: 30,
  maxHeldRoomShare: 0,
  drainingOfferedShare: 1,
  demoteAfterS: 3,
  demotedOrder: "next_horizon",
  demotedTimeoutS: 40,
  demotedQuietTimeoutS: 120,
  freshNewestShare: 1,
  freshNewestWhen: "standing",
  sdkClientsLeaveShare: 0.05,
};
