import { hashInts, seededRandom } from "../engine/rng";

/**
 * Independent seeded random streams, one per named purpose, all derived from one seed: the arrivals of a
 * scenario do not shift when a policy draws more jitter, so every policy sees the same requests.
 *
 * @example
 * ```ts
 * const arrivals = randomStream(42, "arrivals");
 * const jitter = randomStream(42, "router", 0); // the router of shard 0
 * ```
 */
export function randomStream(seed: number, name: string, index = 0): () => number {
  const words = [seed, index];
  for (let i = 0; i < name.length; i++) words.push(name.charCodeAt(i));
  return seededRandom(hashInts(words));
}
