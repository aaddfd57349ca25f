/**
 * How the generated docs print figures: shares as percentages, gaps in signed points, plain numbers, verdicts.
 *
 * @example
 * ```ts
 * pct(0.1234); // "12.3%"
 * pts(-0.021); // "-2.1"
 * num(1.5031, 3); // "1.503"
 * yes(false); // "**missed**"
 * ```
 */
export const pct = (v: number | null | undefined) =>
  v === null || v === undefined ? "n/a" : `${(v * 100).toFixed(1)}%`;
export const pts = (v: number) => `${v >= 0 ? "+" : ""}${(v * 100).toFixed(1)}`;
export const num = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? "n/a" : v.toFixed(d));
export const yes = (ok: boolean) => (ok ? "met" : "**missed**");
