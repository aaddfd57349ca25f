import { promisesEnded } from "../core/capacity-booking";
import type { PolicyResult, ScenarioResult } from "./evaluation";
import { headerClientShares, headerlessBehindPts } from "./header-clients";
import { DEFAULT_POLICY_ID, EVAL_POLICIES, type PolicySpec } from "./policies";
import { checkTargets, withDefault } from "./targets";

/** One variant of the default policy: what it changes, as a policy the simulator runs. */
export interface PolicyVariant {
  id: string;
  /** What differs from the default, in a few words. */
  change: string;
  spec: PolicySpec;
}

const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID) as PolicySpec;
const variant = (
  id: string,
  change: string,
  overrides: Pick<PolicySpec, "booking" | "ledger" | "clairvoyantForecast" | "knownCapacity">,
): PolicyVariant => ({
  id,
  change,
  spec: { ...base, id: `${DEFAULT_POLICY_ID}:${id}`, label: `${DEFAULT_POLICY_ID} (${change})`, ...overrides },
});

/**
 * The variants that `candidates-combined` makes at once: each ahead of the default on the summed worst curve gaps
 * (docs/retry-policy.md, "The candidates combined").
 *
 * @example
 * ```ts
 * COMBINED_CANDIDATES.includes("horizon-pack"); // true
 * ```
 */
export const COMBINED_CANDIDATES = [
  "no-queue-refill",
  "fresh-past-target",
  "horizon-pack",
  "demoted-headroom-1",
] as const;

/**
 * The alternatives the default's tunables were chosen against, run on the same arrivals by `npm run eval` so the
 * choice can be re-checked from committed code: the previous defaults, and the designs tried and not kept.
 *
 * @example
 * ```ts
 * DEFAULT_POLICY_VARIANTS.map((v) => v.id); // ["held-room", "backlog-at-drain-rate", ...]
 * ```
 */
export const DEFAULT_POLICY_VARIANTS: readonly PolicyVariant[] = [
  variant("held-room", "promises hold up to half the queue, overbooked for no-shows (an earlier default)", {
    booking: { maxHeldRoomShare: 0.5, standingIntervalS: 10 },
    ledger: { maxOverbooking: 2, minBacklogDrainShare: 1, burstFadeS: 5 },
  }),
  variant("backlog-at-drain-rate", "the queue ahead assumed to drain at the whole drain rate", {
    ledger: { minBacklogDrainShare: 1 },
  }),
  variant("standing-10s", "queue-delay target after 10 s of standing queue", { booking: { standingIntervalS: 10 } }),
  variant("standing-20s", "queue-delay target after 20 s of standing queue", {
    booking: { standingIntervalS: 20 },
  }),
  variant(
    "standing-from-start",
    "queue-delay target from the moment the queue stands above it (a standing interval of 0), not after 30 s",
    { booking: { standingIntervalS: 0 } },
  ),
  variant(
    "standing-timeout-5s",
    "while the queue stands, a request that waited 5 s is shed with a hint (CoDel's short timeout under adaptive LIFO)",
    { booking: { standingTimeoutS: 5 } },
  ),
  variant("standing-timeout-10s", "the same after 10 s", { booking: { standingTimeoutS: 10 } }),
  variant("delay-target-0.5s", "queue-delay target 0.5 s", { booking: { queueDelayTargetS: 0.5 } }),
  // Shorter targets serve more of the sustained overload, sooner, and widen the other scenarios' curve gaps.
  variant("delay-target-0.6s", "queue-delay target 0.6 s", { booking: { queueDelayTargetS: 0.6 } }),
  variant("delay-target-0.7s", "queue-delay target 0.7 s", { booking: { queueDelayTargetS: 0.7 } }),
  variant("no-delay-target", "no queue-delay target", { booking: { queueDelayTargetS: null } }),
  variant("target-while-draining", "the queue-delay target applies while the queue drains by itself too", {
    booking: { drainingOfferedShare: null },
  }),
  variant(
    "last-chance",
    "a request refused twice (probably its last attempt) queued past the queue-delay target, not demoted",
    {
      booking: { lastChanceAfterRefusals: 2 },
    },
  ),
  variant("two-step", "two-step promises up to two horizons away", { ledger: { twoStepHorizons: 2 } }),
  variant("no-demotion", "no demotion: retries wait in line with first attempts", {
    booking: { demoteAfterS: null },
  }),
  variant(
    "demoted-timeout-off",
    "a demoted request shed at the queue's own timeout, as every other, quiet or not (the default until 2026-12-07)",
    { booking: { demotedTimeoutS: null, demotedQuietTimeoutS: null } },
  ),
  variant(
    "demoted-quiet-60",
    "a demoted request may wait up to 60 s while no arrival is refused, not 120 s (the default before run 30)",
    { booking: { demotedQuietTimeoutS: 60 } },
  ),
  variant(
    "demoted-quiet-off",
    "a demoted request shed after 40 s whether or not arrivals are being refused (the default before the quiet wait)",
    { booking: { demotedQuietTimeoutS: null } },
  ),
  variant("no-burst-fade", "no burst fade: the forecast is the baseline from the refusal on", {
    ledger: { burstFadeS: 0 },
  }),
  variant("slow-burst-rate", "the burst fade's rate smoothed as slowly as the baseline's (alpha 0.1)", {
    ledger: { burstAlpha: 0.1 },
  }),
  variant("burst-persistence", "the burst fade's time constant is the burst's age once that is longer than 2 s", {
    ledger: { burstPersistence: 1 },
  }),
  variant(
    "no-queue-refill",
    "the queue ahead of a refusal drains from the refusal on, as if the burst had ended (no queue refill)",
    { ledger: { queueRefill: false } },
  ),
  variant("no-overload-floor", "no overload floor: the baseline alone, even after a quiet spell", {
    ledger: { overloadFloorS: 0 },
  }),
  variant(
    "lowest-overload-floor",
    "the overload floor is the lowest of the fast-smoothed rates before the overload, not the median",
    { ledger: { overloadFloorQuantile: 0 } },
  ),
  variant(
    "fast-floor-only",
    "the overload floor reads the fast-smoothed rates alone, not also their 3 s moving means",
    { ledger: { overloadFloorMovingS: 0 } },
  ),
  variant("burst-fade-5s", "the burst fades out of the forecast with a 5 s time constant, not 2 s", {
    ledger: { burstFadeS: 5 },
  }),
  variant(
    "floor-before-rise",
    "the overload floor read before the fresh rate's step up into the overload, not up to its first refusal",
    { ledger: { overloadFloorSkipsRise: 2 } },
  ),
  variant("floor-before-rise-fade-5s", "floor-before-rise and a 5 s burst fade", {
    ledger: { overloadFloorSkipsRise: 2, burstFadeS: 5 },
  }),
  variant(
    "floor-before-rise-persistence",
    "floor-before-rise and a burst fade of 0.75 x the burst's age once that is longer than 2 s",
    { ledger: { overloadFloorSkipsRise: 2, burstPersistence: 0.75 } },
  ),
  variant(
    "before-median-floor",
    "the lowest overload floor, a 5 s burst fade and adaptive LIFO among the demoted (the default until the second change of 2026-12-02, with today's best effort)",
    {
      ledger: { overloadFloorQuantile: 0, burstFadeS: 5, overloadFloorMovingS: 0 },
      booking: { demotedOrder: "newest_first", freshNewestShare: 0 },
    },
  ),
  variant(
    "before-queue-refill",
    "neither queue refill nor the overload floor, a 5 s burst fade, adaptive LIFO among the demoted (the default until the first change of 2026-12-02, with today's best effort)",
    {
      ledger: { queueRefill: false, overloadFloorS: 0, burstFadeS: 5 },
      booking: { demotedOrder: "newest_first", freshNewestShare: 0 },
    },
  ),
  variant(
    "best-effort-second-half",
    "a best effort over the second half of the client's horizon whatever the overload's age (the default until the third change of 2026-12-02)",
    { ledger: { bestEffortMinEndS: 120 } },
  ),
  variant("best-effort-no-age", "a best effort within 30 to 60 s whatever the overload's age, recurring or not", {
    ledger: { bestEffortAgeFactor: 0, bestEffortRecurMinEndS: 60 },
  }),
  variant(
    "no-probe",
    "no probe: a first refusal in a young overload that follows another gets the best effort (the default until the fourth change of 2026-12-02)",
    { ledger: { probeS: 0 } },
  ),
  variant(
    "probe-every-overload",
    "the probe on the first refusals of every young overload, not only of one that follows another",
    { ledger: { probeRecurS: Number.POSITIVE_INFINITY } },
  ),
  variant(
    "recurring-best-effort-off",
    "in an overload that began at most 120 s after the one before it ended, a best effort of at least 60 s, as in any other, and a probe of up to 20 s, not 120 s and 25 s (the default until 2026-12-07)",
    { ledger: { bestEffortRecurMinEndS: 60, probeS: 20 } },
  ),
  variant("demote-after-10s", "demotion after 10 s", { booking: { demoteAfterS: 10 } }),
  variant("demote-after-30s", "demotion after 30 s (only requests refused long ago)", {
    booking: { demoteAfterS: 30 },
  }),
  variant("demoted-fifo", "demoted requests in arrival order, the newest pushed out (not by their next horizon)", {
    booking: { demotedOrder: "arrival" },
  }),
  variant(
    "newest-first-order",
    "demoted requests newest first refused first, adaptive LIFO (not by their next horizon; the default until the fourth session of 2026-12-03)",
    { booking: { demotedOrder: "newest_first" } },
  ),
  variant(
    "demoted-headroom-1",
    "a demoted request is placed only while more than one slot of the fleet is free: the last is kept for fresh arrivals",
    { booking: { demotedHeadroomSlots: 1 } },
  ),
  variant("demoted-headroom-2", "a demoted request is placed only while more than two slots of the fleet are free", {
    booking: { demotedHeadroomSlots: 2 },
  }),
  variant("demoted-headroom-4", "a demoted request is placed only while more than four slots of the fleet are free", {
    booking: { demotedHeadroomSlots: 4 },
  }),
  variant(
    "fresh-next-horizon",
    "the requests not demoted served earliest deadline first on their next completion horizon from arrival, not in arrival order",
    { booking: { freshOrder: "next_horizon" } },
  ),
  variant(
    "horizon-pack",
    "each promise in the latest second with room that still makes the completion horizon the earliest one makes",
    { ledger: { horizonPackS: 120 } },
  ),
  variant(
    "trust-by-lead",
    "a promise's outcome moves only the trust of promises made about as far ahead (4 s buckets, doubling), not one trust for all",
    { ledger: { trustBucketS: 4 } },
  ),
  variant(
    "trust-by-lead-persistence",
    "trust by lead time, and a burst forecast to fade no faster than it has lasted (burstPersistence 1)",
    { ledger: { trustBucketS: 4, burstPersistence: 1 } },
  ),
  variant(
    "fifo-while-standing",
    "first attempts in arrival order while the queue stands too, not newest first (the default until the ninth session of 2026-12-03)",
    { booking: { freshNewestShare: 0 } },
  ),
  variant(
    "fresh-newest-half",
    "half of the first attempts' dispatches go to the newest that can still be answered within 5 s, standing queue or not",
    { booking: { freshNewestShare: 0.5, freshNewestWhen: "always" } },
  ),
  variant(
    "demoted-share-quarter",
    "a quarter of the dispatches go to the demoted while others wait too, not none until nothing else waits",
    { booking: { demotedShare: 0.25 } },
  ),
  variant(
    "demoted-first-under-8s",
    "while the queue does not stand, the demoted go before first attempts as long as each of those has waited less than 8 s",
    { booking: { demotedFirstUnderS: 8 } },
  ),
  variant(
    "draining-ignores-demoted",
    "the draining test counts only the attempts that join the line, not the demoted retries",
    { booking: { drainingIgnoresDemoted: true } },
  ),
  variant(
    "fresh-past-target",
    "a request never refused joins past the queue-delay target while such requests come to less than the drain rate (the quiet spell after an overload)",
    { booking: { freshPastTargetShare: 1 } },
  ),
  variant(
    "probe-beyond-30s",
    "a first refusal whose earliest room would answer it more than 30 s later is sent back in 12.5 to 25 s (a probe), not booked there",
    { ledger: { probeBeyondS: 30 } },
  ),
  // COMBINED_CANDIDATES at once: do their gains add up? (docs/retry-policy.md, "The candidates combined"; run 26 in
  // docs/benchmarks.md ran it end to end as the default.)
  variant(
    "candidates-combined",
    "no queue refill, horizon packing, fresh-past-target and the last free slot kept for first attempts (demoted-headroom-1), at once",
    {
      ledger: { queueRefill: false, horizonPackS: 120 },
      booking: { freshPastTargetShare: 1, demotedHeadroomSlots: 1 },
    },
  ),
  variant(
    "candidates-unpacked",
    "the candidates combined without horizon packing: no queue refill, fresh-past-target and demoted-headroom-1",
    { ledger: { queueRefill: false }, booking: { freshPastTargetShare: 1, demotedHeadroomSlots: 1 } },
  ),
  variant(
    "kept-when-queued",
    "a claimed promise counts as kept once its retry is queued, not once it is placed (the default until 2026-12-03)",
    { ledger: { keptWhenQueued: true } },
  ),
  variant(
    "forget-when-queued",
    "a request's refusals forgotten once it is queued, not once it is placed (the default until 2026-12-05)",
    { booking: { forgetRefusalsWhenQueued: true } },
  ),
  variant(
    "shed-promise-neutral",
    "a promised retry shed from the queue before it is placed counts as neither kept nor broken (not as broken)",
    { ledger: { shedBreaksPromise: false } },
  ),
  variant(
    "sdk-room-off",
    "every place in the queue open to SDK clients, none kept for clients without SDK headers (the default until 2026-12-04)",
    { booking: { sdkClientsLeaveShare: 0 } },
  ),
  variant(
    "sdk-room-10pct",
    "10% of the queue's limit closed to SDK clients without a promise, kept for clients without SDK headers",
    { booking: { sdkClientsLeaveShare: 0.1 } },
  ),
  variant(
    "clairvoyant-forecast",
    "the fresh arrivals of every coming second known in advance (the run's own, a 5 s mean) instead of forecast",
    { clairvoyantForecast: true },
  ),
  variant(
    "known-capacity",
    "the fleet's measured capacity (each shard's share, less after a replica loss) known in place of the drain-rate EWMA",
    { knownCapacity: true },
  ),
  variant(
    "perfect-information",
    "both at once: the coming fresh arrivals and the fleet's measured capacity known, neither forecast nor estimated",
    { clairvoyantForecast: true, knownCapacity: true },
  ),
  variant(
    "previous-default",
    "demoted-fifo, standing-20s, target-while-draining and slow-burst-rate, no queue refill or floor (an earlier default)",
    {
      booking: { demotedOrder: "arrival", standingIntervalS: 20, drainingOfferedShare: null, freshNewestShare: 0 },
      ledger: { burstAlpha: 0.1, queueRefill: false, overloadFloorS: 0, burstFadeS: 5 },
    },
  ),
];

/** How one variant fares on issue 15's targets, scored against the same other policies as the default. */
export interface VariantSummary {
  id: string;
  change: string;
  /** Scenarios where it meets each target (of `scenarios`). */
  met: { curve: number; served: number; oracle: number; attempts: number };
  scenarios: number;
  /** The worst completion-curve gap of each scenario, summed (points; 0 would be "never behind"). */
  worstCurveGapSumPts: number;
  /** The mean wait of each scenario (`RunMetrics.meanWaitS`: what the curve does not count), summed, seconds. */
  meanWaitSumS: number;
  /**
   * Per scenario: final served share, attempts per offered, p50 time to success, the fleet's share left idle while
   * clients slept (`idleWhileWaitingFraction`, absent from runs before it was recorded), mean wait, completion
   * curve, worst curve gap (points).
   */
  perScenario: Record<
    string,
    {
      servedFraction: number;
      attemptsPerOffered: number;
      timeToSuccessP50S: number | null;
      idleWhileWaitingFraction?: number;
      meanWaitS: number;
      /** The completion curve (absent from runs before it was recorded). */
      servedWithinS?: Record<string, number>;
      worstCurveGap: { horizonS: number; gapPts: number };
      /**
       * The share of the ledger's promises that ended broken (`PromiseOutcomes`): absent where none ended, and
       * from runs before it was recorded.
       */
      promisesBrokenShare?: number;
      /** The promises the ledger made (absent from runs before it was recorded, and without a ledger). */
      promisesMade?: number;
      /**
       * SDK clients' served share less header-less clients', points (null: the mix has none; absent from runs
       * before it was recorded): issue 15 wants at most 5.
       */
      headerlessGapPts?: number | null;
    }
  >;
}

/**
 * Scores a variant's results: each scenario's default result is replaced by the variant's and checked against
 * the other policies of the same run.
 *
 * @example
 * ```ts
 * const summary = summarizeVariant(v, results, results.map((r) => evaluateScenario(scenarioOf(r), [v.spec], 3).policies[0]));
 * summary.met.served; // scenarios where its final served share is within 1 point of the best other policy
 * ```
 */
export function summarizeVariant(
  v: PolicyVariant,
  results: readonly ScenarioResult[],
  variantResults: readonly PolicyResult[],
): VariantSummary {
  const met = { curve: 0, served: 0, oracle: 0, attempts: 0 };
  let worstCurveGapSumPts = 0;
  let meanWaitSumS = 0;
  const perScenario: VariantSummary["perScenario"] = {};
  results.forEach((result, i) => {
    const own = variantResults[i];
    if (!own) throw new Error(`no result of variant ${v.id} for ${result.name}`);
    const check = checkTargets(withDefault(result, own));
    for (const key of ["curve", "served", "oracle", "attempts"] as const) if (check.met[key]) met[key] += 1;
    worstCurveGapSumPts += Math.min(0, check.worstCurveGap.gap) * 100;
    meanWaitSumS += own.metrics.meanWaitS;
    const ledger = own.metrics.ledger;
    const ended = ledger ? promisesEnded(ledger) : 0;
    const clients = headerClientShares({ ...result, policies: [own] }, own.id);
    perScenario[result.name] = {
      servedFraction: own.metrics.servedFraction,
      attemptsPerOffered: own.metrics.attemptsPerOffered,
      timeToSuccessP50S: own.metrics.timeToSuccessP50S,
      idleWhileWaitingFraction: own.metrics.idleWhileWaitingFraction,
      meanWaitS: own.metrics.meanWaitS,
      servedWithinS: own.metrics.servedWithinS,
      worstCurveGap: { horizonS: check.worstCurveGap.horizonS, gapPts: 100 * check.worstCurveGap.gap },
      ...(ledger ? { promisesMade: ledger.made } : {}),
      ...(ledger && ended > 0 ? { promisesBrokenShare: ledger.broken / ended } : {}),
      headerlessGapPts: headerlessBehindPts(clients) ?? null,
    };
  });
  return { id: v.id, change: v.change, met, scenarios: results.length, worstCurveGapSumPts, meanWaitSumS, perScenario };
}

/**
 * The default itself, scored the same way (the first row of the variants table).
 *
 * @example
 * ```ts
 * defaultSummary(results).met.served; // e.g. 12
 * ```
 */
export function defaultSummary(results: readonly ScenarioResult[]): VariantSummary {
  const own = results.map((r) => r.policies.find((p) => p.id === r.defaultPolicy) as PolicyResult);
  return summarizeVariant({ id: "default", change: "the defaults", spec: base }, results, own);
}

/** Variants ahead of the default (`variants[0]`) on the summed worst curve gaps, by seed set. */
export interface VariantsAhead {
  both: string[];
  tunedOnly: string[];
  heldOnly: string[];
  /** The largest lead (points) of a variant ahead on both sets, on either set. */
  largestLeadPts: number;
}

/**
 * Which variants' summed worst curve gaps are smaller than the default's (the first summary of each list) on the
 * tuning seeds, on the held-out seeds, or on both: a variant that wins on one set only did not win on its design.
 *
 * @example
 * ```ts
 * variantsAhead(json.variants, json.heldOut.variants).both; // ["two-step", ...]
 * ```
 */
export function variantsAhead(variants: readonly VariantSummary[], heldOut: readonly VariantSummary[]): VariantsAhead {
  const ahead: VariantsAhead = { both: [], tunedOnly: [], heldOnly: [], largestLeadPts: 0 };
  const [tunedDefault, heldDefault] = [variants[0], heldOut[0]];
  if (!tunedDefault || !heldDefault) return ahead;
  const held = new Map(heldOut.map((v) => [v.id, v]));
  const lead = (v: VariantSummary | undefined, def: VariantSummary) =>
    v === undefined ? Number.NEGATIVE_INFINITY : v.worstCurveGapSumPts - def.worstCurveGapSumPts;
  for (const v of variants.slice(1)) {
    const [onTuned, onHeld] = [lead(v, tunedDefault), lead(held.get(v.id), heldDefault)];
    if (onTuned > 0 && onHeld > 0) {
      ahead.both.push(v.id);
      ahead.largestLeadPts = Math.max(ahead.largestLeadPts, onTuned, onHeld);
    } else if (onTuned > 0) ahead.tunedOnly.push(v.id);
    else if (onHeld > 0) ahead.heldOnly.push(v.id);
  }
  return ahead;
}
