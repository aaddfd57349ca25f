import type { HintScheduleTable } from "./hint-schedule";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";

/** What the search reads of a run: the figures issue 15's targets use. */
export interface HintRunFigures {
  servedWithinS: CompletionCurve;
  servedFraction: number;
  attemptsPerOffered: number;
}

/** A run's figures against the target's envelope (the best other policy at each horizon). */
export interface HintSearchScore extends HintRunFigures {
  /** Curve less envelope at the horizon where that is least (a share; negative: behind). */
  worstGap: number;
  worstHorizonS: number;
  /** Curve less envelope, summed over the horizons. */
  gapSum: number;
}

/** Where and how finely the search looks. */
export interface HintSearchSettings {
  /** The table's first bucket starts here (seconds of the run). */
  fromS: number;
  /** The table ends here: refusals after it get the ledger's hint. */
  toS: number;
  bucketS: number;
  /** Passes over every cell of the table. */
  sweeps: number;
  /** The hints (seconds) a cell may take, beside `null` (the ledger's). */
  values: readonly number[];
  /**
   * Issue 15's other targets, kept while the curve is searched: a table is kept only if its run serves at least this
   * share (the best other policy's less a point) and makes at most these attempts per offered request (static 30 s's),
   * or no worse than the ledger alone where the ledger already misses them. Absent: not checked.
   */
  servedAtLeast?: number;
  attemptsAtMost?: number;
}

export interface HintSearchResult {
  /** The best table found. */
  table: HintScheduleTable;
  /** The empty table's run (the ledger's hints everywhere): the default. */
  start: HintSearchScore;
  best: HintSearchScore;
  /** Runs made. */
  evaluated: number;
}

/**
 * A run's score against the envelope: its worst gap, the horizon of it, and the gaps summed.
 *
 * @example
 * ```ts
 * scoreAgainst(figures, { "5": 0.6, "15": 0.75, "30": 0.9, "60": 0.96, "120": 0.98 }).worstGap; // e.g. -0.04
 * ```
 */
export function scoreAgainst(figures: HintRunFigures, envelope: CompletionCurve): HintSearchScore {
  let worstGap = Number.POSITIVE_INFINITY;
  let worstHorizonS = COMPLETION_HORIZONS_S[0] as number;
  let gapSum = 0;
  for (const h of COMPLETION_HORIZONS_S) {
    const gap = (figures.servedWithinS[String(h)] ?? 0) - (envelope[String(h)] ?? 0);
    gapSum += gap;
    if (gap < worstGap) {
      worstGap = gap;
      worstHorizonS = h;
    }
  }
  return { ...figures, worstGap, worstHorizonS, gapSum };
}

/** The search's objective: the worst gap first, the summed gaps (a tenth as much) to tell ties apart. */
const objective = (s: HintSearchScore) => s.worstGap + s.gapSum / 10;

/**
 * A coordinate search over a table of hints (`HintScheduleTable`): cell by cell, first refusals then later ones,
 * each cell tries every value and the ledger's hint and keeps the one whose run scores best against the envelope
 * while keeping the served and attempts limits of `settings`, for `sweeps` passes. `evaluate` runs the scenario
 * with a table (on the seeds it was measured on: the search knows their arrivals, so what it finds is what timing
 * can do with foresight, on those seeds). A local search, not a bound: a better table may exist.
 *
 * @example
 * ```ts
 * const result = searchHintSchedule((table) => evaluatePolicy(..., { ...spec, hintSchedule: table }), envelope, {
 *   fromS: 60, toS: 120, bucketS: 5, sweeps: 2, values: [1, 5, 15, 30, 60],
 * });
 * result.best.worstGap - result.start.worstGap; // what the table gained at the worst horizon
 * ```
 */
export function searchHintSchedule(
  evaluate: (table: HintScheduleTable) => HintRunFigures,
  envelope: CompletionCurve,
  settings: HintSearchSettings,
): HintSearchResult {
  const buckets = Math.ceil((settings.toS - settings.fromS) / settings.bucketS);
  if (!(buckets > 0)) throw new RangeError(`hint search: empty window ${settings.fromS}-${settings.toS} s`);
  const table: HintScheduleTable = {
    fromS: settings.fromS,
    bucketS: settings.bucketS,
    first: new Array<number | null>(buckets).fill(null),
    later: new Array<number | null>(buckets).fill(null),
  };
  let evaluated = 0;
  const run = () => {
    evaluated += 1;
    return scoreAgainst(evaluate(table), envelope);
  };
  const start = run();
  const servedFloor = Math.min(start.servedFraction, settings.servedAtLeast ?? Number.NEGATIVE_INFINITY);
  const attemptsCeiling = Math.max(start.attemptsPerOffered, settings.attemptsAtMost ?? Number.POSITIVE_INFINITY);
  const admissible = (s: HintSearchScore) =>
    s.servedFraction >= servedFloor - 1e-12 && s.attemptsPerOffered <= attemptsCeiling + 1e-12;
  let best = start;
  for (let sweep = 0; sweep < settings.sweeps; sweep++) {
    for (const row of [table.first, table.later])
      for (let cell = 0; cell < buckets; cell++) {
        let kept = row[cell] ?? null;
        for (const value of [null, ...settings.values]) {
          if (value === kept) continue;
          row[cell] = value;
          const score = run();
          if (admissible(score) && objective(score) > objective(best) + 1e-12) {
            best = score;
            kept = value;
          }
        }
        row[cell] = kept;
      }
  }
  return { table: { ...table, first: [...table.first], later: [...table.later] }, start, best, evaluated };
}
