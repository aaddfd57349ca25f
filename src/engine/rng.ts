/**
 * A small seeded pseudo-random generator (mulberry32): the engine's output lengths, generated text and
 * the bench client's datasets must replay from a seed, so nothing here reads `Math.random`.
 *
 * @example
 * ```ts
 * const rng = seededRandom(42);
 * rng(); // 0.6011037519201636, the same on every run
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Mixes integers into one 32-bit hash (FNV-1a over the words); used to derive per-request seeds and
 * per-position tokens without keeping generator state.
 *
 * @example
 * ```ts
 * hashInts([7, 3]) === hashInts([7, 3]); // true
 * ```
 */
export function hashInts(values: readonly number[]): number {
  let h = 0x811c9dc5;
  for (const v of values) {
    let x = v | 0;
    for (let i = 0; i < 4; i++) {
      h ^= x & 0xff;
      h = Math.imul(h, 0x01000193);
      x >>>= 8;
    }
  }
  return h >>> 0;
}
