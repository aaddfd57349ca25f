/**
 * Whether two runs of the same policies rank them alike - the end-to-end run against the simulator's scenario
 * of the same stack (issue 15: "the end-to-end run shows the same ordering as the simulator").
 */

/** What one run measured of one policy: final served share, completion curve and attempts per offered request. */
export interface RankedFigures {
  id: string;
  servedFraction: number;
  servedWithinS: Record<string, number>;
  attemptsPerOffered: number;
}

/** One measure in both runs: the policies best first in each, and the pairs the two runs order alike. */
export interface MeasureOrdering {
  measure: string;
  /** Policy ids, best first (highest share; fewest attempts). */
  first: string[];
  second: string[];
  /** Pairs of policies ordered alike, or within the tie tolerance in either run. */
  alike: number;
  pairs: number;
  /** The pairs ordered oppositely: `[x, y]` is x ahead of y in the first run and behind it in the second. */
  opposite: [string, string][];
}

/**
 * Differences within these are ties (they agree with either order): a point of a share, 0.02 attempts - about
 * the run-to-run movement of the end-to-end run (docs/benchmarks.md).
 */
export const ORDERING_TIES = { share: 0.01, attempts: 0.02 } as const;

/**
 * Compares the ranking of the policies both runs measured, measure by measure (served share, the share served
 * within each of `horizonsS`, attempts per offered request), pair by pair.
 *
 * @example
 * ```ts
 * const a = { id: "a", servedFraction: 1, servedWithinS: { "5": 0.6 }, attemptsPerOffered: 1.2 };
 * const b = { id: "b", servedFraction: 0.6, servedWithinS: { "5": 0.6 }, attemptsPerOffered: 2 };
 * compareOrderings([a, b], [a, b], [5]).every((m) => m.alike === m.pairs); // true
 * ```
 */
export function compareOrderings(
  first: readonly RankedFigures[],
  second: readonly RankedFigures[],
  horizonsS: readonly number[],
): MeasureOrdering[] {
  const ids = first.map((p) => p.id).filter((id) => second.some((q) => q.id === id));
  const measures: { measure: string; value: (p: RankedFigures) => number; tie: number }[] = [
    { measure: "served", value: (p) => p.servedFraction, tie: ORDERING_TIES.share },
    ...horizonsS.map((h) => ({
      measure: `<= ${h} s`,
      value: (p: RankedFigures) => p.servedWithinS[String(h)] ?? 0,
      tie: ORDERING_TIES.share,
    })),
    // Fewer attempts is better: ranked on the negated count.
    { measure: "attempts per offered", value: (p) => -p.attemptsPerOffered, tie: ORDERING_TIES.attempts },
  ];
  const byId = (run: readonly RankedFigures[], id: string) => run.find((p) => p.id === id) as RankedFigures;
  return measures.map(({ measure, value, tie }) => {
    const rank = (run: readonly RankedFigures[]) => [...ids].sort((a, b) => value(byId(run, b)) - value(byId(run, a)));
    let alike = 0;
    let pairs = 0;
    const opposite: [string, string][] = [];
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) {
        const a = ids[i] as string;
        const b = ids[j] as string;
        const d1 = value(byId(first, a)) - value(byId(first, b));
        const d2 = value(byId(second, a)) - value(byId(second, b));
        pairs += 1;
        if (Math.abs(d1) <= tie || Math.abs(d2) <= tie || Math.sign(d1) === Math.sign(d2)) alike += 1;
        else opposite.push(d1 > 0 ? [a, b] : [b, a]);
      }
    return { measure, first: rank(first), second: rank(second), alike, pairs, opposite };
  });
}
