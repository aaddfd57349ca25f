import { nextHorizonStartByMs } from "./fair-queue";
import { FreshArrivalForecast } from "./fresh-arrival-forecast";
import { MinHeap } from "./min-heap";
import { SecondCounts } from "./second-counts";

/** Tunables of the `booked_capacity` policy (measured in the simulator: docs/retry-policy.md). */
export interface CapacityBookingOptions {
  /** Seconds of future the ledger covers: the longest client horizon plus slack. */
  ledgerS: number;
  /** EWMA weight of the per-second fresh-arrival count (fresh: an attempt that claims no booking). */
  freshAlpha: number;
  /** The baseline of fresh arrivals is the lowest smoothed rate of the last `baselineWindowS` seconds. */
  baselineWindowS: number;
  /** Bookings per second never fall below this share of the drain rate (sustained overload). */
  minRetryShare: number;
  /** ...and never exceed this share (fresh arrivals keep the rest). */
  maxRetryShare: number;
  /** A booking holds queue room from `leadS` before its due instant to `heldLateS` after it... */
  leadS: number;
  heldLateS: number;
  /** ...a retry may claim it from `earlyS` before the due instant (clock granularity)... */
  earlyS: number;
  /** ...and up to `lateS` after it (round trips, whole-second `Retry-After`); after that it lapses. */
  lateS: number;
  /** Most bookings kept at once (memory bound); the oldest are dropped beyond it. */
  maxBookings: number;
  /**
   * Two-step promises: when no second within a client's horizon has room, the earliest second with room up to
   * `twoStepHorizons` horizons away is booked, and the client is told to come back one step before it (a hint
   * within its horizon); refused then, it is told the rest. `1`: no second step (a best effort instead).
   */
  twoStepHorizons: number;
  /** Decay per resolved promise of the show-rate counts (shows and no-shows), so the rate follows the clients. */
  showDecay: number;
  /** The show rate assumed before any promise resolved, and its weight in promises. */
  priorShowRate: number;
  priorWeight: number;
  /** Promises per second are at most this multiple of the retry capacity (overbooking for no-shows). */
  maxOverbooking: number;
  /**
   * Trust in the forecast, in [minTrust, 1], scales the retry capacity: a promise kept (its retry admitted) adds
   * `trustGain`, a promise broken (its retry refused) multiplies it by `trustLoss` - the forecast learns from
   * the promises' outcomes instead of assuming the baseline returns.
   */
  minTrust: number;
  trustGain: number;
  trustLoss: number;
  /**
   * The queue ahead of a refusal drains through the capacity fresh arrivals leave (drain - baseline), not the
   * whole drain rate; this floor (a share of the drain rate) bounds that estimate when the baseline is near it.
   */
  minBacklogDrainShare: number;
  /**
   * The fresh arrivals above the baseline fade out of the forecast with this time constant, seconds: a burst under
   * way is expected to go on for a few seconds rather than stop at once, so promises do not land inside it (where
   * fresh arrivals fill the queue and the promise is broken). 0: the forecast is the baseline from now on.
   * 2 s by default since 2026-12-02 (5 s before), with the median overload floor (`overloadFloorQuantile`): with
   * the floor reading the traffic itself, a 5 s fade under-booked the seconds after a short burst (the end-to-end
   * twin's fleet idle while refused clients slept); variant `burst-fade-5s`, docs/retry-policy.md.
   */
  burstFadeS: number;
  /**
   * EWMA weight of the fresh-arrival rate whose excess over the baseline the burst fade forecasts: faster than
   * `freshAlpha`, so a burst's first second already counts (at 0.1 a second into a 3x burst the smoothed rate has
   * risen a tenth of the way, and the promises made then landed inside the burst and were broken).
   */
  burstAlpha: number;
  /**
   * A burst that has lasted D seconds is forecast to fade with a time constant of at least `burstPersistence` x D:
   * a burst's age is the best online guess of how much of it is left (the longer it has lasted, the longer it is
   * likely to last). With a fixed 5 s fade (the default then), the promises made 10 to 15 s into `burst-3x`'s
   * 20 s burst came back while the burst's queue still stood, and waited behind it or were refused. 0 (the default): the fade is
   * `burstFadeS` whatever the burst's age. Measured and left off: fewer attempts, later service (docs/retry-policy.md,
   * variant `burst-persistence`).
   */
  burstPersistence: number;
  /**
   * The burst's age (for `burstPersistence`) is the time since the first refusal after a quiet spell of this many
   * seconds without one: the router refuses only while it is overloaded, so refusals mark the burst whatever the
   * baseline (which a router that has seen less than `baselineWindowS` of traffic does not know yet).
   */
  burstQuietS: number;
  /**
   * When no second within the client's horizon has room, the hint is a best effort uniform over [end / 2, end]:
   * `end` is the overload's age (dated as for `burstQuietS`) times `bestEffortAgeFactor`, at least `bestEffortMinEndS`, at most
   * the horizon. An overload that has lasted A seconds is likely to last about as long again, so a young one sends
   * clients back within a minute and a standing one up to their horizon. It used to be the horizon's second half
   * whatever the age (`bestEffortMinEndS` at or above the horizon; variant `best-effort-second-half`,
   * docs/retry-policy.md): an openai-node client (120 s) refused in a 20 s burst slept 60 to 120 s while the fleet
   * had room again soon after the burst.
   */
  bestEffortMinEndS: number;
  /**
   * The best effort's least end in an overload that recurs (one that began at most `probeRecurS` after the one
   * before it ended, as for the probe); `undefined`: `bestEffortMinEndS` there too. Such an overload's age says
   * little of how long it will last, and the next wave follows a trough: sent back within a minute, a wave's
   * refusals land in the next wave and spend their retries there. 120 by default since 2026-12-07, with a 25 s
   * probe: it serves more in `waves` (variant `recurring-best-effort-off`, 60 s and a 20 s probe, is the rule
   * before; docs/retry-policy.md).
   */
  bestEffortRecurMinEndS: number | undefined;
  /** The best effort's end per second of the overload's age (1: it is expected to last as long again as it has). */
  bestEffortAgeFactor: number;
  /**
   * A probe instead of a best effort: a request refused for the first time, with no room in its client's horizon,
   * in an overload younger than `probeYoungS` that began at most `probeRecurS` after the one before it ended
   * (overloads that come and go), is told to come back uniformly in [probeS / 2, probeS] rather than the best
   * effort's [end / 2, end]. Such an overload has likely ended by then: the client comes back into the room after it
   * instead of sleeping through it, and keeps a retry for a best effort if not. 0: no probes. Measured in `waves`
   * (docs/retry-policy.md; variant `no-probe` turns it off): without it, a wave's late refusals slept through the
   * trough after it and came back in the next wave. `probeRecurS` Infinity: every young overload, the first
   * included (variant `probe-every-overload`). 25 since 2026-12-07 (20 before), with `bestEffortRecurMinEndS`.
   */
  probeS: number;
  probeYoungS: number;
  probeRecurS: number;
  /**
   * Whether the queue ahead of a refusal is forecast to refill: it stays at its depth while the forecast fresh
   * arrivals (baseline plus the fading burst) exceed the drain rate, and only then drains through what they leave.
   * Off, it drains from the refusal on through what the baseline leaves, as if the burst had ended: in `burst-10x`
   * the promises made in the burst's first seconds came back while its queue, refilled by the rest of the burst,
   * still stood, and were refused at once. On by default since the queue timeout is enforced (2026-12-02), with
   * `overloadFloorS` (docs/retry-policy.md; variant `no-queue-refill` turns it off).
   */
  queueRefill: boolean;
  /**
   * Seconds before an overload's first refusal (after `burstQuietS` without one) whose fresh arrivals set a floor
   * under the baseline for that overload: the lowest fast-smoothed rate (`burstAlpha`) from then on. After a quiet
   * spell the baseline (the lowest rate of the last `baselineWindowS`) is near zero, so promises plan on the whole
   * drain rate while the ordinary traffic seen just before the burst comes back after it and fills that capacity:
   * the twin of the end-to-end run (`npm run eval:e2e-twin`) counted those broken promises among its attempts.
   * Seconds that were already inside the overload (a deep queue fills before its first refusal) are skipped.
   * 0: no floor. 10 by default, with `queueRefill`, which without it made more attempts than issue 15's end-to-end
   * target allows after a quiet spell (docs/retry-policy.md; variant `no-overload-floor` turns it off).
   */
  overloadFloorS: number;
  /**
   * Which value of those seconds' fast-smoothed rates the floor is: 0 the lowest, 0.5 (the default since
   * 2026-12-02) the median. The lowest reads a rate still climbing when ordinary traffic began less than
   * `overloadFloorS` before the burst (the end-to-end run's 10 s at 0.5x after a quiet spell), so the floor sits
   * well below that traffic and promises overbook the seconds after the burst: each broken promise is one more
   * attempt (the end-to-end run made 1.50 per offered request with it). The median reads the traffic itself; with
   * the 2 s `burstFadeS` the seconds after the burst are still booked full (variants `lowest-overload-floor` and
   * `before-median-floor`, docs/retry-policy.md).
   */
  overloadFloorQuantile: number;
  /**
   * When above 1, the floor is read over the seconds before the fresh rate's step up into the overload, not
   * over the window that ends at its first refusal: the window is split into a newer and an older run of seconds
   * where two levels fit it best (`riseLength`, src/core/fresh-arrival-forecast.ts), and when the newer averages
   * at least this many times the older, its seconds are skipped. A fleet with free slots absorbs a burst's first seconds before any router refuses,
   * so the window can hold mostly the burst's own rates (as in `sharded-16`: 16 routers with 8-deep queues over
   * one fleet); the floor then comes out above the router's drain rate, nothing is left to promise, and every
   * hint of the burst is a best effort (a test in test/node/core/capacity-booking.test.ts). 0 (the default):
   * off. Measured (variants `floor-before-rise`, `floor-before-rise-fade-5s` and `floor-before-rise-persistence`,
   * docs/retry-policy.md): with the 2 s `burstFadeS` it makes more attempts after a quiet spell than issue 15's
   * end-to-end target allows, because there the burst's first seconds in the window were what held promises back
   * while the burst lasted; with a longer fade, each misses the twin's 15 s target from a cold router.
   */
  overloadFloorSkipsRise: number;
  /**
   * Seconds of the moving mean of fresh arrivals whose `overloadFloorQuantile` over the same seconds raises the
   * overload floor when it reads higher than the fast-smoothed rates (and below the drain rate): the fast-smoothed
   * rates lag a rise of traffic from a quiet spell, so the floor read them low and the promises made on it
   * overbooked the seconds after the burst (`FreshArrivalForecast.overloadFloor`): in the twin of the end-to-end
   * run after a quiet spell (`npm run eval:e2e-twin`) each broken promise was one more attempt. 3 by default since
   * 2026-12-05. 0: the fast-smoothed rates alone (variant `fast-floor-only`, docs/retry-policy.md).
   */
  overloadFloorMovingS: number;
  /**
   * When a claimed promise counts as kept (`kept(true)`, for the trust): false (the default since 2026-12-03), once
   * its retry is placed on a replica, and as broken when the retry, queued, times out, is pushed out or is shed; true,
   * as soon as the retry is queued (the behaviour until then; variant `kept-when-queued`). Queued is not served:
   * traces of `llm-sizes` show promised retries queued behind a standing queue, shed at the 30 s queue timeout and
   * retried a third time, while the ledger counted each a kept promise and went on promising at full trust.
   */
  keptWhenQueued: boolean;
  /**
   * Whether a promised retry shed from the queue before it was placed counts as a broken promise (true, the default)
   * or settles nothing, neither kept nor broken (false; variant `shed-promise-neutral`): the trust then does not rise
   * for it, but does not fall either. Measured: it leaves less capacity idle while clients sleep and serves less of
   * `burst-10x` and `capacity-halves` (docs/retry-policy.md). Without effect with `keptWhenQueued`.
   */
  shedBreaksPromise: boolean;
  /**
   * Horizon packing: a promise goes in the latest second with room that still lets its request finish within the
   * same completion horizon (5, 15, 30, 60, 120 s from its first refusal, `packServiceS` before it) as the earliest
   * second with room would, at most `horizonPackS` seconds after that earliest one. The earlier seconds stay free
   * for later refusals that can still make a shorter horizon: first come, first served, a refusal that can only
   * finish within 60 s takes the seconds that one refused after it needed to finish within 15 s. 0 (the default):
   * the earliest second with room. Measured and not kept (variant `horizon-pack`, docs/retry-policy.md): it is read
   * off the completion curve's horizons, and serves a packed request later within its horizon, which the curve does
   * not see and its client does: closer to the curve target, longer mean waits.
   */
  horizonPackS: number;
  /** Horizon packing: seconds from a promised retry's instant to its answer that a horizon allows for. */
  packServiceS: number;
  /**
   * A probe instead of a far promise: a request refused for the first time whose earliest second with room would
   * answer it more than this many seconds after the refusal (`packServiceS` counted) is told to come back uniformly
   * in [probeS / 2, probeS], promised nothing, instead of being booked there: it tries for the 30 s horizon that the
   * booking would miss, and is booked on its next refusal. 0 (the default): off. Measured and not kept (variant
   * `probe-beyond-30s`, docs/retry-policy.md): nearer the curve target at 30 and 60 s in `waves`, at the cost of
   * more attempts than static 30 s in most scenarios and of requests whose last retry it spends.
   */
  probeBeyondS: number;
  /**
   * Trust by lead time: a promise's outcome moves only the trust of promises made about as far ahead as it was (its
   * lead: from the refusal to its booked instant), in buckets [0, b), [b, 2b), [2b, 4b), ... of this many seconds
   * `b` (the last from `b` x 2^6 on). A train of short spikes breaks the promises made a few seconds ahead (the
   * next spike fills their seconds) while those made past the train are kept; one trust learned from the near ones
   * shrank the far ones' capacity to `minTrust`, and the fleet sat idle after the train while clients slept. 0 (the
   * default): one trust for every lead. Measured and not kept (variants `trust-by-lead`, `trust-by-lead-persistence`,
   * docs/retry-policy.md, docs/burst-train.md): less of the fleet idle and fewer requests served, since the one trust
   * is also the ledger's only memory that an overload goes on, which each lead must then learn again from its own
   * broken promises.
   */
  trustBucketS: number;
}

export const DEFAULT_CAPACITY_BOOKING_OPTIONS: CapacityBookingOptions = {
  ledgerS: 125,
  freshAlpha: 0.1,
  baselineWindowS: 60,
  minRetryShare: 0,
  maxRetryShare: 1,
  leadS: 1,
  heldLateS: 0.5,
  earlyS: 1,
  lateS: 3,
  maxBookings: 65_536,
  twoStepHorizons: 1,
  showDecay: 0.995,
  maxOverbooking: 1,
  priorShowRate: 0.9,
  priorWeight: 10,
  minTrust: 0.2,
  trustGain: 0.02,
  trustLoss: 0.85,
  minBacklogDrainShare: 0.05,
  burstFadeS: 2,
  burstAlpha: 0.3,
  burstPersistence: 0,
  burstQuietS: 5,
  queueRefill: true,
  overloadFloorS: 10,
  overloadFloorQuantile: 0.5,
  overloadFloorSkipsRise: 0,
  overloadFloorMovingS: 3,
  bestEffortMinEndS: 60,
  bestEffortRecurMinEndS: 120,
  bestEffortAgeFactor: 1,
  probeS: 25,
  probeYoungS: 30,
  probeRecurS: 120,
  keptWhenQueued: false,
  shedBreaksPromise: true,
  horizonPackS: 0,
  packServiceS: 5,
  probeBeyondS: 0,
  trustBucketS: 0,
};

/**
 * A hint set from outside the ledger, by the refusal's time and whether it is the request's first refusal: seconds
 * (the hint is drawn within the second after them, within the client's horizon, and promises nothing), or
 * `undefined` to leave the refusal to the ledger. Only the simulator sets one: `npm run eval:hint-search` asks how
 * close to the curve target the best hints found for a scenario, knowing its arrivals, come with the default's
 * admission.
 *
 * @example
 * ```ts
 * // Refusals in the first 10 s after t = 60 s told 30 s the first time, 5 s after that; the ledger answers the rest.
 * const schedule: HintSchedule = (nowMs, first) => (nowMs >= 60_000 && nowMs < 70_000 ? (first ? 30 : 5) : undefined);
 * ```
 */
export type HintSchedule = (nowMs: number, firstRefusal: boolean) => number | undefined;

/**
 * How the promises of a ledger have ended, counted since it started: what an operator reads to see whether the
 * ledger keeps its word (`spillway_promises_total`). A promise is made when a refusal's hint books capacity; it ends
 * kept (its retry was placed on a replica: `CapacityBookingOptions.keptWhenQueued`), broken (its retry came back on
 * time and was refused, or queued and then shed) or as a no-show (its client did not come back within `lateS`).
 * The rest are outstanding, came back and wait in the queue, or were replaced by a newer hint to the same request.
 *
 * @example
 * ```ts
 * const { made, kept, broken, noShow } = ledger.promiseOutcomes;
 * const keptShare = kept / Math.max(1, kept + broken); // the forecast's record, what `trust` learns from
 * ```
 */
export interface PromiseOutcomes {
  made: number;
  kept: number;
  broken: number;
  noShow: number;
}

/**
 * The counts of {@link PromiseOutcomes}, for code that adds or subtracts them field by field.
 *
 * @example
 * ```ts
 * for (const k of PROMISE_OUTCOME_KEYS) sum[k] += shard[k];
 * ```
 */
export const PROMISE_OUTCOME_KEYS = [
  "made",
  "kept",
  "broken",
  "noShow",
] as const satisfies readonly (keyof PromiseOutcomes)[];

/**
 * The promises that have ended, kept, broken or no-show: what the shares of each outcome are shares of.
 *
 * @example
 * ```ts
 * promisesEnded({ made: 10, kept: 6, broken: 2, noShow: 1 }); // 9: one is still outstanding
 * ```
 */
export function promisesEnded(p: PromiseOutcomes): number {
  return p.kept + p.broken + p.noShow;
}

/** What a returning request claimed (see `CapacityBooking.claim`): a promise, or a best effort. */
export interface ClaimedBooking {
  /** Whether capacity was booked for it (a promise), not a best effort beyond the capacity. */
  promised: boolean;
  /** Seconds from the hint to the booked instant (the promise's lead, which `kept` learns by with `trustBucketS`). */
  leadS: number;
}

/** A promise made to one request: come back at `dueMs`. */
interface Booking {
  dueMs: number;
  /** When the hint was given, ms. */
  madeMs: number;
  second: number;
  /** Whether it took capacity in the ledger (an overflow hint is a best effort, not a promise). */
  promised: boolean;
}

/** The hint for one refusal: the delay and whether it is a promise (capacity booked) or a best effort. */
export interface BookedHint {
  delayS: number;
  promised: boolean;
  /**
   * A two-step promise: seconds from now to the booked instant, beyond `delayS` (the first step, within the
   * client's horizon). Absent: the booked instant is `delayS` away.
   */
  dueS?: number;
  /** The hint is the rest of a promise this request already holds (nothing new to book). */
  held?: boolean;
}

/**
 * The ledger of the `booked_capacity` policy: the retries this router has promised, counted per second of the
 * future and keyed by the request's fingerprint (a hash of the client's credential, method, path and body,
 * computed by the Worker), plus a forecast of fresh arrivals.
 *
 * Why it exists: a hint of "when the current queue drains" sends a refused client back while a burst is still
 * arriving. This ledger instead hands out *future capacity*: of each future second's drain, the share the
 * forecast of fresh arrivals leaves free (`drainRate - forecast`, within [minRetryShare, maxRetryShare] of the
 * drain rate; the forecast is the baseline plus the current excess over it, fading with `burstFadeS`, or optionally
 * more slowly the longer the burst has lasted: `burstPersistence`), minus the
 * retries already promised that second. A refused request gets the earliest second with
 * room within its client's horizon; the promise is bound to its fingerprint, so only that request's own retry
 * can take the room held for it. When no second within the horizon has room, the hint is a best effort spread
 * over the second half of the horizon (never stacked on the cap) and nothing is booked.
 *
 * The drain rate is read at each hint: when it falls, new promises plan on the lower rate (the schedule
 * shrinks), and the room held for promises already made is capped by the router.
 *
 * Pure: time and randomness are parameters. Each operation is O(log n) or O(ledgerS).
 *
 * @example
 * ```ts
 * const ledger = new CapacityBooking(DEFAULT_CAPACITY_BOOKING_OPTIONS, 0);
 * ledger.onFresh(0);
 * const hint = ledger.hint(0, { queueDepth: 10, drainRate: 10 }, 60, () => 0.5); // { delayS: ~1.5, promised: true }
 * ledger.book("fp-a", 0, hint as BookedHint);
 * ledger.claim("fp-b", 1_500); // undefined: not its booking
 * const claim = ledger.claim("fp-a", 1_500); // { promised: true, leadS: ~1.5 }
 * ledger.kept(true, claim?.leadS ?? 0); // its retry was placed: the trust of promises ~1.5 s ahead rises
 * ```
 */
export class CapacityBooking {
  /** Promises per second: `lateS` (rounded up) and one more behind the current second, `ledgerS` ahead. */
  private readonly promised: SecondCounts;
  private readonly bookings = new Map<string, Booking>();
  /** Every booking by due instant, so lapsed ones are found in O(log n) (entries of replaced bookings are skipped). */
  private readonly byDue = new MinHeap<DueEntry>((entry) => entry.dueMs);
  /** Fresh arrivals per second: the baseline, a burst's current rate and an overload's floor. */
  private readonly fresh: FreshArrivalForecast;
  /** When the overload under way was first refused, and when it was last (see `burstPersistence`), ms. */
  private overloadSinceMs = Number.NaN;
  private lastRefusalMs = Number.NaN;
  /** When the overload before the one under way was last refused (its end), ms; NaN before a second overload. */
  private previousOverloadEndMs = Number.NaN;
  /** Decayed counts of promises claimed on time and of promises that lapsed (starting from the prior). */
  private shows: number;
  private noShows: number;
  /** The trust of each lead-time bucket (one bucket unless `trustBucketS`). */
  private readonly trustLevels: number[];
  private readonly outcomes: PromiseOutcomes = { made: 0, kept: 0, broken: 0, noShow: 0 };

  /**
   * @param knownFreshRate Fresh arrivals per second at time t (seconds, on the clock of `nowMs`), known in advance:
   *   it replaces the forecast of the seconds a hint looks at. Only the simulator knows them (variant
   *   `clairvoyant-forecast`, which asks how much of the default's gap is its forecast's error); absent in production.
   * @param hintSchedule Hints set from outside for the refusals it covers (see {@link HintSchedule}); absent in
   *   production.
   */
  constructor(
    private readonly options: CapacityBookingOptions,
    nowMs: number,
    private readonly knownFreshRate?: (tS: number) => number,
    private readonly hintSchedule?: HintSchedule,
  ) {
    const keepS = Math.ceil(options.lateS) + 1;
    this.promised = new SecondCounts(options.ledgerS + keepS + 1, keepS, nowMs);
    this.fresh = new FreshArrivalForecast(options);
    this.shows = options.priorShowRate * options.priorWeight;
    this.noShows = (1 - options.priorShowRate) * options.priorWeight;
    this.trustLevels = new Array(options.trustBucketS > 0 ? TRUST_BUCKETS : 1).fill(1);
  }

  /** The fresh-arrival baseline (requests per second): the lowest smoothed rate of the window; `undefined` before a full second. */
  get baseline(): number | undefined {
    return this.fresh.baseline;
  }

  /**
   * The share of promises their clients come back to claim (decayed counts): backoff-only clients and no-shows
   * never do. Promised room is scaled by it, and promises per second are overbooked by its inverse.
   */
  get showRate(): number {
    return this.shows / (this.shows + this.noShows);
  }

  /** Whether a claimed promise counts as kept once its retry is queued rather than placed (see the option). */
  get keptWhenQueued(): boolean {
    return this.options.keptWhenQueued;
  }

  /** Whether a promised retry shed before it was placed counts as a broken promise (see the option). */
  get shedBreaksPromise(): boolean {
    return this.options.shedBreaksPromise;
  }

  /** The forecast's trust, in [minTrust, 1] (see `CapacityBookingOptions.minTrust`); by lead time, the lowest. */
  get trust(): number {
    return Math.min(...this.trustLevels);
  }

  /** The trust bucket of a promise `leadS` seconds ahead (see `trustBucketS`). */
  private trustBucket(leadS: number): number {
    const b = this.options.trustBucketS;
    if (!(b > 0) || leadS < b) return 0;
    return Math.min(TRUST_BUCKETS - 1, 1 + Math.floor(Math.log2(leadS / b)));
  }

  /** Absolute second of the current time, as of the last advance. */
  private get current(): number {
    return this.promised.currentSecond;
  }

  /** How the promises made so far have ended (a copy; see {@link PromiseOutcomes}). */
  get promiseOutcomes(): PromiseOutcomes {
    return { ...this.outcomes };
  }

  /**
   * A claimed promise's outcome: its retry was placed on a replica (kept) or refused, timed out, pushed out or shed
   * from the queue (broken); see `keptWhenQueued`. Only promises: a best effort booked no capacity, so its refusal
   * says nothing of the forecast (the router calls this for a claim whose `promised` is true). `leadS`: the claim's
   * (with `trustBucketS`, only the trust of promises made about as far ahead moves).
   */
  kept(admitted: boolean, leadS: number): void {
    const { minTrust, trustGain, trustLoss } = this.options;
    if (admitted) this.outcomes.kept += 1;
    else this.outcomes.broken += 1;
    const k = this.trustBucket(leadS);
    const level = this.trustLevels[k] as number;
    this.trustLevels[k] = admitted ? Math.min(1, level + trustGain) : Math.max(minTrust, level * trustLoss);
  }

  /**
   * Bookings not yet claimed, replaced or swept as lapsed (their sweep comes with the next second the ledger is
   * moved to: see {@link outstandingAt} for a count that does not wait for it).
   */
  get outstanding(): number {
    return this.bookings.size;
  }

  /**
   * Entries the lapse sweep holds: the bookings' and those of bookings replaced, claimed or evicted since (skipped
   * when they lapse). Right after a booking at most twice `outstanding` plus {@link STALE_DUE_ENTRIES}, so never more
   * than twice `maxBookings` plus it, whatever the refusal rate.
   */
  get dueEntries(): number {
    return this.byDue.size;
  }

  /**
   * Bookings still claimable or ahead at `nowMs`: not claimed, and due at most `lateS` ago. Read-only (what
   * `outstanding` counts once the ledger moves, without moving it): a router that went idle after an overload
   * says "none" once its promises have lapsed, not the count of its last busy second. O(n) in the bookings.
   *
   * @example
   * ```ts
   * ledger.outstandingAt(Date.now()); // 0 two minutes after the last refusal, with no request since
   * ```
   */
  outstandingAt(nowMs: number, atMost = Number.POSITIVE_INFINITY): number {
    const lapsedBeforeMs = this.lapsedBeforeMs(nowMs);
    let n = 0;
    for (const booking of this.bookings.values()) {
      if (n >= atMost) break;
      if (booking.dueMs >= lapsedBeforeMs) n += 1;
    }
    return n;
  }

  /** Whether any booking is still claimable or ahead at `nowMs` (`outstandingAt`, stopping at the first). */
  anyOutstandingAt(nowMs: number): boolean {
    return this.outstandingAt(nowMs, 1) > 0;
  }

  /** A booking due before this has lapsed at `nowMs`: its client is more than `lateS` late. */
  private lapsedBeforeMs(nowMs: number): number {
    return nowMs - this.options.lateS * 1000;
  }

  /** Promised retries in the second starting `offsetS` from now (tests and stats). */
  promisedAt(nowMs: number, offsetS: number): number {
    this.advance(nowMs);
    return this.promised.at(this.current + offsetS);
  }

  /** Counts an attempt that claimed no booking (a first attempt, or a retry nobody promised room to). */
  onFresh(nowMs: number): void {
    this.advance(nowMs);
    this.fresh.count();
  }

  /**
   * The request with this fingerprint returns: it takes its own booking if one is due (from `earlyS` before its
   * due instant to `lateS` after it), and learns whether it was a promise (capacity booked for it) or a best effort
   * (a hint beyond the capacity: a probe or the overflow). Any other request - whatever headers it sends - takes
   * nothing: `undefined`.
   */
  claim(fingerprint: string | undefined, nowMs: number): ClaimedBooking | undefined {
    this.advance(nowMs);
    if (fingerprint === undefined) return undefined;
    const booking = this.bookings.get(fingerprint);
    if (!booking) return undefined;
    if (nowMs < booking.dueMs - this.options.earlyS * 1000) return undefined;
    this.release(fingerprint, booking);
    const onTime = nowMs <= booking.dueMs + this.options.lateS * 1000;
    if (booking.promised) this.resolve(onTime);
    return onTime ? { promised: booking.promised, leadS: (booking.dueMs - booking.madeMs) / 1000 } : undefined;
  }

  private resolve(showed: boolean): void {
    if (!showed) this.outcomes.noShow += 1;
    const d = this.options.showDecay;
    this.shows = this.shows * d + (showed ? 1 : 0);
    this.noShows = this.noShows * d + (showed ? 0 : 1);
  }

  /** Whether this fingerprint holds a promise (claimable now or later). */
  holds(fingerprint: string | undefined): boolean {
    return fingerprint !== undefined && this.bookings.has(fingerprint);
  }

  /**
   * Queue room held now: the promises due from `heldLateS` ago to `leadS` ahead, times the show rate (the
   * promises expected to be claimed). Buckets are whole seconds; the window's edge seconds count pro rata.
   */
  heldRoom(nowMs: number): number {
    this.advance(nowMs);
    const fromS = nowMs / 1000 - this.options.heldLateS;
    const toS = nowMs / 1000 + this.options.leadS;
    let room = 0;
    for (let s = Math.floor(fromS); s < toS; s++) {
      const overlap = Math.min(s + 1, toS) - Math.max(s, fromS);
      if (overlap > 0) room += this.promised.at(s) * overlap;
    }
    // Whole places: a promise expected at all holds its place (a fraction would let the place go).
    return Math.max(0, Math.ceil(room * this.showRate - 1e-9));
  }

  /**
   * The hint for a refusal now: a point inside the earliest second at or after the queue's drain
   * (`queueDepth / (drainRate - baseline)`: the queue drains through what fresh arrivals leave; at least 1 s
   * away) whose promises are below the retry capacity, within `horizonS`; else, with `twoStepHorizons` > 1, a
   * two-step promise; else, on the request's first refusal (`refusal.first`) in a young overload that follows
   * another closely, a probe uniform in [probeS / 2, probeS]; else a best effort uniform in [end / 2, end], `end`
   * the overload's age within [`bestEffortMinEndS` (`bestEffortRecurMinEndS` in an overload that recurs), `horizonS`].
   * `undefined` when the drain rate is unusable (the ladder falls back).
   */
  hint(
    nowMs: number,
    signals: { queueDepth: number; drainRate: number | undefined },
    horizonS: number,
    random: () => number,
    refusal: { first?: boolean; firstRefusedAtMs?: number | undefined } = {},
  ): BookedHint | undefined {
    const rate = signals.drainRate;
    if (rate === undefined || !Number.isFinite(rate) || rate <= 0) return undefined;
    this.advance(nowMs);
    const { minRetryShare, maxRetryShare } = this.options;
    // hint() answers a refusal: the first after a quiet spell starts a new overload (its clock, its floor).
    const overloadStarts = !(nowMs - this.lastRefusalMs <= this.options.burstQuietS * 1000);
    const baseline = Math.max(this.baseline ?? 0, this.fresh.overloadFloor(overloadStarts, signals.queueDepth, rate));
    const spare = rate - baseline;
    // The queue ahead drains only through what fresh arrivals leave: a booking placed at `depth / rate` lands
    // while fresh arrivals and earlier bookings still fill the queue, so the queue never drains (measured:
    // after a burst, fresh arrivals were refused for ~30 s while bookings kept the queue full).
    const backlogDrainRate = Math.max(spare, rate * this.options.minBacklogDrainShare);
    const nowS = nowMs / 1000;
    const excess = Math.max(0, this.fresh.recent - baseline);
    if (overloadStarts) {
      this.previousOverloadEndMs = this.lastRefusalMs;
      this.overloadSinceMs = nowMs;
    }
    this.lastRefusalMs = nowMs;
    const burstAgeS = (nowMs - this.overloadSinceMs) / 1000;
    const fadeS =
      this.options.burstFadeS > 0 ? Math.max(this.options.burstFadeS, this.options.burstPersistence * burstAgeS) : 0;
    const overbooked = Math.min(this.options.maxOverbooking, 1 / this.showRate);
    // The fresh arrivals forecast `aheadS` seconds from now: the baseline plus the burst's excess, fading.
    const known = this.knownFreshRate;
    const forecastIn = known
      ? (aheadS: number) => known(nowS + aheadS)
      : (aheadS: number) => baseline + (fadeS > 0 ? excess * Math.exp(-aheadS / fadeS) : 0);
    // A future second's retry capacity: the drain rate less the fresh arrivals forecast for it, within bounds.
    const capacityAt = (second: number) =>
      Math.min(rate * maxRetryShare, Math.max(rate - forecastIn(second - nowS), rate * minRetryShare)) *
      overbooked *
      (this.trustLevels[this.trustBucket(second - nowS)] as number);
    const horizon = Math.max(1, Math.min(horizonS, this.options.ledgerS - 1));
    // With queueRefill, the queue stays at its depth while the forecast fresh arrivals exceed the drain rate.
    const drainS = this.options.queueRefill
      ? refilledDrainS(
          signals.queueDepth,
          rate,
          forecastIn,
          rate * this.options.minBacklogDrainShare,
          this.options.ledgerS,
        )
      : signals.queueDepth / backlogDrainRate;
    // A hint set from outside replaces the ledger's plan: nothing is booked (the overload's clock still runs above).
    const scheduled = this.hintSchedule?.(nowMs, refusal.first ?? false);
    if (scheduled !== undefined)
      return { delayS: Math.max(1, Math.min(horizon, scheduled + random())), promised: false };
    const first = Math.ceil(nowS + Math.max(1, drainS));
    const last = Math.floor(nowS + horizon) - 1;
    const earliest = this.firstSecondWithRoom(first, last, capacityAt);
    const within =
      earliest === undefined ? undefined : this.packed(earliest, last, capacityAt, refusal.firstRefusedAtMs ?? nowMs);
    // A probe: uniform in [probeS / 2, probeS], within the horizon, promising nothing.
    const probe = (): BookedHint => ({
      delayS: Math.max(1, Math.min(horizon, this.options.probeS * (0.5 + 0.5 * random()))),
      promised: false,
    });
    // A far promise's request tries once for a nearer horizon first (probeBeyondS; off by default).
    if (
      within !== undefined &&
      this.options.probeBeyondS > 0 &&
      refusal.first &&
      within + this.options.packServiceS - nowS > this.options.probeBeyondS
    )
      return probe();
    if (within !== undefined) {
      const start = Math.max(within, nowS + 1);
      const end = Math.min(within + 1, nowS + horizon);
      return { delayS: start - nowS + random() * Math.max(0, end - start), promised: true };
    }
    // Two steps (a client whose horizon already spans most of the ledger gains nothing from a second one): a
    // second beyond this horizon but within reach of a second hint. The first step comes back with a margin
    // inside the second hint's horizon (round trips, whole-second Retry-After), never before 1 s.
    if (this.options.twoStepHorizons > 1 && 2 * horizon <= this.options.ledgerS) {
      const margin = Math.min(5, horizon / 4);
      const farthest = Math.min(
        Math.floor(nowS + this.options.twoStepHorizons * horizon - margin) - 1,
        this.current + this.options.ledgerS - 1,
      );
      const beyond = this.firstSecondWithRoom(Math.max(first, last + 1), farthest, capacityAt);
      if (beyond !== undefined) {
        const dueS = beyond - nowS + random();
        return { delayS: Math.min(horizon, Math.max(1, dueS - (horizon - margin))), dueS, promised: true };
      }
    }
    const { bestEffortMinEndS, bestEffortAgeFactor, probeS, probeYoungS, probeRecurS } = this.options;
    // NaN before a second overload: the first is not "recurring" (unless probeRecurS is Infinity: every overload).
    const recurring =
      probeRecurS === Number.POSITIVE_INFINITY ||
      this.overloadSinceMs - this.previousOverloadEndMs <= probeRecurS * 1000;
    if (refusal.first && probeS > 0 && burstAgeS < probeYoungS && recurring) return probe();
    const minEnd = recurring ? (this.options.bestEffortRecurMinEndS ?? bestEffortMinEndS) : bestEffortMinEndS;
    const end = Math.min(horizon, Math.max(minEnd, bestEffortAgeFactor * burstAgeS));
    return { delayS: Math.max(1, end * (0.5 + 0.5 * random())), promised: false };
  }

  /**
   * `horizonPackS`: the latest second with room after `earliest` (which has room) that still makes the completion
   * horizon `earliest` makes for a request first refused at `firstMs`; `earliest` itself when packing is off or
   * `earliest` makes no horizon.
   */
  private packed(earliest: number, last: number, capacityAt: (second: number) => number, firstMs: number): number {
    const { horizonPackS, packServiceS } = this.options;
    if (!(horizonPackS > 0)) return earliest;
    // The horizon a start by the end of `earliest` makes, and the last second that still starts in time for it.
    const startByMs = nextHorizonStartByMs(firstMs, (earliest + 1) * 1000, packServiceS * 1000);
    if (!Number.isFinite(startByMs)) return earliest;
    const latest = Math.min(last, earliest + horizonPackS, Math.floor(startByMs / 1000) - 1);
    for (let s = latest; s > earliest; s--) if (this.promised.at(s) < capacityAt(s) - 1e-9) return s;
    return earliest;
  }

  /** The first second in [from, to] whose promises are below its capacity; `undefined` when none is. */
  private firstSecondWithRoom(from: number, to: number, capacityAt: (second: number) => number): number | undefined {
    for (let s = from; s <= to; s++) if (this.promised.at(s) < capacityAt(s) - 1e-9) return s;
    return undefined;
  }

  /**
   * The rest of a two-step promise this request holds, when it comes back at its first step (or any time before
   * its booked instant): the seconds left, within `horizonS`. `undefined` when it holds no promise still ahead.
   */
  heldHint(fingerprint: string | undefined, nowMs: number, horizonS: number): BookedHint | undefined {
    this.advance(nowMs);
    const booking = fingerprint === undefined ? undefined : this.bookings.get(fingerprint);
    if (!booking || booking.dueMs - this.options.earlyS * 1000 <= nowMs) return undefined;
    return { delayS: Math.min(horizonS, (booking.dueMs - nowMs) / 1000), promised: booking.promised, held: true };
  }

  /** The request was admitted before its booked instant (a first step found room): its promise is given back. */
  admittedEarly(fingerprint: string | undefined, nowMs: number): void {
    this.advance(nowMs);
    const booking = fingerprint === undefined ? undefined : this.bookings.get(fingerprint);
    if (booking && fingerprint !== undefined) this.release(fingerprint, booking);
  }

  /** Records the hint actually sent to the request with this fingerprint (a new hint replaces an older one). */
  book(fingerprint: string | undefined, nowMs: number, hint: BookedHint): void {
    this.advance(nowMs);
    if (fingerprint === undefined || !(hint.delayS >= 0) || hint.held) return;
    const old = this.bookings.get(fingerprint);
    if (old) this.release(fingerprint, old);
    const dueMs = nowMs + (hint.dueS ?? hint.delayS) * 1000;
    const second = Math.floor(dueMs / 1000);
    if (second - this.current >= this.options.ledgerS) return;
    // At the cap, the lapsed go first (their sweep otherwise waits for the next second), then the oldest booking.
    if (this.bookings.size >= this.options.maxBookings) this.sweepLapsed(nowMs);
    if (this.bookings.size >= this.options.maxBookings) {
      const oldest = this.bookings.keys().next().value as string;
      this.release(oldest, this.bookings.get(oldest) as Booking);
    }
    const booking: Booking = { dueMs, madeMs: nowMs, second, promised: hint.promised };
    this.bookings.set(fingerprint, booking);
    this.byDue.push({ dueMs, fingerprint, booking });
    // Entries of replaced, claimed or evicted bookings wait in the heap until their due instant lapses: a flood of
    // refusals (one request refused again and again, or more requests than `maxBookings`) would grow it with the
    // refusal rate. Past twice the bookings, the stale ones go (amortised O(1) a booking; the sweep skipped them).
    if (this.byDue.size > 2 * this.bookings.size + STALE_DUE_ENTRIES) this.forgetStaleDueEntries();
    if (!hint.promised) return;
    this.promised.add(second);
    this.outcomes.made += 1;
  }

  private release(fingerprint: string, booking: Booking): void {
    this.bookings.delete(fingerprint);
    // A promise for a second already cleared behind the window is no longer counted (`remove` leaves it alone).
    if (booking.promised) this.promised.remove(booking.second);
  }

  /** Moves to `nowMs`: each elapsed second closes a fresh-rate interval; lapsed seconds are cleared. */
  private advance(nowMs: number): void {
    const elapsed = this.promised.advance(nowMs);
    if (elapsed === 0) return;
    this.fresh.closeSeconds(elapsed);
    this.sweepLapsed(nowMs);
  }

  private forgetStaleDueEntries(): void {
    this.byDue.retain((entry) => this.bookings.get(entry.fingerprint) === entry.booking);
  }

  /** Lapsed promises leave the map as time passes: their clients did not come back (a no-show). */
  private sweepLapsed(nowMs: number): void {
    const lapsedBeforeMs = this.lapsedBeforeMs(nowMs);
    for (let head = this.byDue.peek(); head && head.dueMs < lapsedBeforeMs; head = this.byDue.peek()) {
      this.byDue.pop();
      if (this.bookings.get(head.fingerprint) !== head.booking) continue; // claimed or replaced since
      this.bookings.delete(head.fingerprint);
      if (head.booking.promised) this.resolve(false);
    }
  }
}

/** Stale entries the lapse sweep's heap may hold beyond the bookings' count before it drops them. */
export const STALE_DUE_ENTRIES = 1024;

/** Lead-time buckets of the trust with `trustBucketS`: [0, b), [b, 2b), ..., [32b, 64b), [64b, ...). */
const TRUST_BUCKETS = 8;

interface DueEntry {
  dueMs: number;
  fingerprint: string;
  booking: Booking;
}

/**
 * Seconds until a queue `depth` deep has drained while fresh arrivals come at `forecastIn(t)` per second, `t`
 * seconds from now, and the queue drains at `rate`: while the arrivals exceed the rate what drains is replaced (the
 * queue stays at its depth, its bound: a request was just refused), then it drains through what they leave, at
 * least `floorRate`. A fluid model stepped every quarter second, up to `maxS`; with constant arrivals below the
 * rate it is `depth / (rate - arrivals)`.
 *
 * @example
 * ```ts
 * refilledDrainS(20, 10, () => 2, 0.5, 125); // 2.5: nothing refills it, 8/s drain
 * refilledDrainS(20, 10, (t) => 2 + 18 * Math.exp(-t / 5), 0.5, 125); // ~8: 4 s refilled, then a slower drain
 * ```
 */
export function refilledDrainS(
  depth: number,
  rate: number,
  forecastIn: (aheadS: number) => number,
  floorRate: number,
  maxS: number,
): number {
  const stepS = 0.25;
  let left = depth;
  for (let t = 0; t < maxS; t += stepS) {
    const forecast = forecastIn(t);
    if (forecast >= rate) continue;
    const drain = Math.max(rate - forecast, floorRate);
    if (left <= drain * stepS) return t + left / drain;
    left -= drain * stepS;
  }
  return maxS;
}
