/**
 * Jain's fairness index of non-negative values: `(sum x)^2 / (n * sum x^2)`, 1 when all are equal, `1/n` when
 * one takes everything; 1 for no values or all zero.
 *
 * @example
 * ```ts
 * jainIndex([1, 1, 1, 1]); // 1
 * jainIndex([1, 0, 0, 0]); // 0.25
 * ```
 */
export function jainIndex(values: readonly number[]): number {
  const sum = values.reduce((s, x) => s + x, 0);
  const squares = values.reduce((s, x) => s + x * x, 0);
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}

/**
 * Weighted max-min fair shares of `capacity` among demands (water-filling): every tenant gets its demand if that
 * is below its weighted share, and what the satisfied ones leave is shared again among the rest by weight.
 *
 * @example
 * ```ts
 * maxMinFairShares(10, [2, 100, 100], [1, 1, 1]); // [2, 4, 4]
 * ```
 */
export function maxMinFairShares(capacity: number, demands: readonly number[], weights: readonly number[]): number[] {
  const shares = demands.map(() => 0);
  let left = capacity;
  let open = demands.map((_, i) => i);
  while (open.length > 0 && left > 1e-9) {
    const totalWeight = open.reduce((s, i) => s + (weights[i] as number), 0);
    const satisfied = open.filter(
      (i) => (demands[i] as number) - (shares[i] as number) <= (left * (weights[i] as number)) / totalWeight,
    );
    if (satisfied.length === 0) {
      for (const i of open) shares[i] = (shares[i] as number) + (left * (weights[i] as number)) / totalWeight;
      return shares;
    }
    for (const i of satisfied) {
      left -= (demands[i] as number) - (shares[i] as number);
      shares[i] = demands[i] as number;
    }
    open = open.filter((i) => !satisfied.includes(i));
  }
  return shares;
}
