/**
 * numpy's default percentile (linear interpolation between closest ranks), as bench_serving reports.
 * Returns 0 for an empty list, as bench_serving does (`np.mean([] or 0)`).
 *
 * @example
 * ```ts
 * percentile([1, 2, 3, 4], 50); // 2.5
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (rank - lo);
}

/**
 * The arithmetic mean, 0 for an empty list.
 *
 * @example
 * ```ts
 * mean([1, 2, 3]); // 2
 * ```
 */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}
