/**
 * fast-check's settings for a property: the file's own number of runs and seed, unless `RUNS` / `SEED` (Node) or
 * `VITE_RUNS` / `VITE_SEED` (workerd: the Workers pool passes only `VITE_`-prefixed variables into it) name others,
 * so a deeper search, or one with another seed, needs no edit. Always a seed: a property without one draws a new
 * seed each run, and a test whose outcome changes from run to run cannot gate CI.
 *
 * @example
 * ```ts
 * // VITE_RUNS=1000 VITE_SEED=7 npx vitest run --project edge test/edge/request-fingerprint.property.test.ts
 * fc.assert(property, propertyRuns(150, 20261206));
 * ```
 */
export function propertyRuns(numRuns: number, seed: number): { numRuns: number; seed: number } {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  // An empty or malformed value is no value (`RUNS= npx vitest` must not run a property zero times).
  const read = (names: string[], fallback: number, min: number) => {
    for (const name of names) {
      const value = Number(env[name] || Number.NaN);
      if (Number.isSafeInteger(value) && value >= min) return value;
    }
    return fallback;
  };
  return {
    numRuns: read(["RUNS", "VITE_RUNS"], numRuns, 1),
    seed: read(["SEED", "VITE_SEED"], seed, Number.MIN_SAFE_INTEGER),
  };
}
