/**
 * How the generated docs print figures: shares as percentages, gaps in signed points, plain numbers, verdicts.
 *
 * @example
 * ```ts
 * pct(0.1234); // "12.3%"
 * pts(-0.021); // "-2.1"
 * marginPts(-0.0001); // "+0.0" (a solver tolerance, not a deficit)
 * num(1.5031, 3); // "1.503"
 * yes(false); // "**missed**"
 * ```
 */
export const pct = (v: number | null | undefined) =>
  v === null || v === undefined ? "n/a" : `${(v * 100).toFixed(1)}%`;
export const pts = (v: number) => `${v >= 0 ? "+" : ""}${(v * 100).toFixed(1)}`;
/** Points with a sign for a linear program's margin: the solver's tolerance (well under 0.05 points) is not shown as -0.0. */
export const marginPts = (share: number) => pts(Math.abs(share) < 0.0005 ? 0 : share);
export const num = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? "n/a" : v.toFixed(d));
export const yes = (ok: boolean) => (ok ? "met" : "**missed**");
