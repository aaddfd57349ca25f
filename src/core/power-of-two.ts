/**
 * Picks up to two distinct replicas uniformly at random (power of two choices).
 *
 * @example
 * ```ts
 * chooseTwo(["a", "b", "c"], () => 0); // ["a", "b"]
 * ```
 */
export function chooseTwo(replicas: readonly string[], random: () => number): string[] {
  if (replicas.length <= 2) return [...replicas];
  const first = Math.floor(random() * replicas.length);
  // Draw the second from the n - 1 others so the pair is distinct without rejection sampling.
  let second = Math.floor(random() * (replicas.length - 1));
  if (second >= first) second += 1;
  return [replicas[first] as string, replicas[second] as string];
}

/**
 * Of the candidates that accept, the one with the shortest queue (the first on a tie); `undefined` if none.
 *
 * @example
 * ```ts
 * pickShortestAccepting(["a", "b"], (r) => r === "a" ? 3 : 1, () => true); // "b"
 * ```
 */
export function pickShortestAccepting(
  candidates: readonly string[],
  queueLengthOf: (replica: string) => number,
  accepts: (replica: string) => boolean,
): string | undefined {
  let best: string | undefined;
  for (const candidate of candidates) {
    if (!accepts(candidate)) continue;
    if (best === undefined || queueLengthOf(candidate) < queueLengthOf(best)) best = candidate;
  }
  return best;
}
