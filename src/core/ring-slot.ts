/**
 * The bucket of a ring of `size` buckets that holds absolute index `index` (a second, a step), negative indices
 * included: a clock near its origin reads seconds before 0, and `%` alone would give a negative bucket.
 *
 * @example
 * ```ts
 * ringSlot(7, 4);  // 3
 * ringSlot(-1, 4); // 3
 * ```
 */
export function ringSlot(index: number, size: number): number {
  return ((index % size) + size) % size;
}
