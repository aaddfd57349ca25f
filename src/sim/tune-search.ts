import type { CapacityBookingOptions } from "../core/capacity-booking";
import type { PolicySpec } from "./policies";

/** A point of the search: overrides of the default's ledger and admission tunables (empty: the default). */
export interface TuningCandidate {
  ledger: Partial<CapacityBookingOptions>;
  booking: NonNullable<PolicySpec["booking"]>;
}

/** The values each tunable may take: a grid around each default, wide enough to cross the variants' settings. */
export interface TuningSpace {
  ledger: Partial<Record<keyof CapacityBookingOptions, readonly number[]>>;
  booking: Partial<
    Record<"queueDelayTargetS" | "standingIntervalS" | "demoteAfterS" | "maxHeldRoomShare", readonly number[]>
  >;
}

/**
 * The tunables `npm run eval:tune` searches: the ledger's forecast, trust and timing, its best effort and probe, and
 * the admission's delay target and demotion. Every default is one of the values, so the search starts on the grid.
 *
 * @example
 * ```ts
 * TUNING_SPACE.ledger.burstFadeS; // [0, 1, 2, 3, 5]: the default, 2 s, among them
 * ```
 */
export const TUNING_SPACE: TuningSpace = {
  ledger: {
    burstFadeS: [0, 1, 2, 3, 5],
    burstAlpha: [0.1, 0.2, 0.3, 0.5],
    overloadFloorQuantile: [0, 0.25, 0.5, 0.75],
    overloadFloorS: [5, 10, 20],
    overloadFloorMovingS: [0, 3, 5],
    minBacklogDrainShare: [0.02, 0.05, 0.1, 0.2],
    trustLoss: [0.7, 0.85, 0.95],
    trustGain: [0.01, 0.02, 0.05],
    minTrust: [0.1, 0.2, 0.4],
    leadS: [0.5, 1, 2],
    lateS: [2, 3, 5],
    twoStepHorizons: [1, 2],
    baselineWindowS: [30, 60, 120],
    freshAlpha: [0.05, 0.1, 0.2],
    priorShowRate: [0.8, 0.9, 1],
    bestEffortMinEndS: [45, 60, 75],
    bestEffortRecurMinEndS: [60, 90, 120],
    bestEffortAgeFactor: [0.5, 1, 2],
    probeS: [0, 10, 20, 25, 30],
    probeYoungS: [15, 30, 60],
    probeRecurS: [60, 120, 300],
  },
  booking: {
    queueDelayTargetS: [0.5, 0.75, 1, 1.5, 2],
    standingIntervalS: [10, 20, 30, 45],
    demoteAfterS: [2, 3, 5, 10],
    maxHeldRoomShare: [0, 0.1, 0.25],
  },
};

/** What one candidate scored: the search maximises `objective`; the rest is kept for the report. */
export interface TuningScore {
  objective: number;
}

/** One step of a search: the candidate tried, its score, and whether it became the best. */
export interface TuningStep<S extends TuningScore> {
  candidate: TuningCandidate;
  score: S;
  /** `better`: it became the best; `infeasible`: it scored better but failed `feasible`; `worse`: neither. */
  verdict: "better" | "infeasible" | "worse";
}

/**
 * A neighbour of `from`: one to three tunables of `space` set to a value drawn from their grids (a value may
 * repeat the current one, so some neighbours are `from` itself).
 *
 * @example
 * ```ts
 * neighbour({ ledger: {}, booking: {} }, TUNING_SPACE, Math.random); // e.g. { ledger: { burstFadeS: 3 }, booking: {} }
 * ```
 */
export function neighbour(from: TuningCandidate, space: TuningSpace, random: () => number): TuningCandidate {
  const next: TuningCandidate = { ledger: { ...from.ledger }, booking: { ...from.booking } };
  const keys = [
    ...Object.keys(space.ledger).map((k) => ["ledger", k] as const),
    ...Object.keys(space.booking).map((k) => ["booking", k] as const),
  ];
  const changes = 1 + Math.floor(random() * 3);
  for (let i = 0; i < changes; i++) {
    const [block, key] = keys[Math.floor(random() * keys.length)] as (typeof keys)[number];
    const values = (space[block] as Record<string, readonly number[]>)[key] as readonly number[];
    (next[block] as Record<string, number>)[key] = values[Math.floor(random() * values.length)] as number;
  }
  return next;
}

/**
 * A first-improvement hill climb: from `start`, `iterations` neighbours are scored; one that scores higher than the
 * best so far replaces it if `feasible` accepts it (checked only then: it may be costly). Deterministic for a
 * deterministic `random` and `evaluate`.
 *
 * @example
 * ```ts
 * const run = hillClimb({ start: { ledger: {}, booking: {} }, space: TUNING_SPACE, iterations: 50, random,
 *   evaluate: (c) => ({ objective: -(c.ledger.burstFadeS ?? 2) }), feasible: () => true });
 * run.best.candidate.ledger.burstFadeS; // 0
 * ```
 */
export function hillClimb<S extends TuningScore>(options: {
  start: TuningCandidate;
  space: TuningSpace;
  iterations: number;
  random: () => number;
  evaluate: (candidate: TuningCandidate) => S;
  feasible: (candidate: TuningCandidate, score: S) => boolean;
}): { best: { candidate: TuningCandidate; score: S }; steps: TuningStep<S>[] } {
  let best = { candidate: options.start, score: options.evaluate(options.start) };
  const steps: TuningStep<S>[] = [];
  for (let i = 0; i < options.iterations; i++) {
    const candidate = neighbour(best.candidate, options.space, options.random);
    const score = options.evaluate(candidate);
    let verdict: TuningStep<S>["verdict"] = "worse";
    if (score.objective > best.score.objective) {
      verdict = options.feasible(candidate, score) ? "better" : "infeasible";
      if (verdict === "better") best = { candidate, score };
    }
    steps.push({ candidate, score, verdict });
  }
  return { best, steps };
}

/**
 * The overrides of a candidate that differ from the defaults (what a report names).
 *
 * @example
 * ```ts
 * changedTunables({ ledger: { burstFadeS: 2, leadS: 2 }, booking: {} }, { ledger: { burstFadeS: 2, leadS: 1 }, booking: {} });
 * // { leadS: 2 }
 * ```
 */
export function changedTunables(
  candidate: TuningCandidate,
  defaults: { ledger: Record<string, unknown>; booking: Record<string, unknown> },
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const block of ["ledger", "booking"] as const)
    for (const [key, value] of Object.entries(candidate[block]))
      if (value !== undefined && value !== null && value !== defaults[block][key]) out[key] = value as number;
  return out;
}
