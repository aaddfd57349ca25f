/**
 * fast-check's settings for an edge property: the file's own number of runs and seed, unless `VITE_RUNS` or
 * `VITE_SEED` is set (`RUNS` / `SEED` as well where `process.env` holds them). The Workers pool passes only
 * `VITE_`-prefixed variables into workerd, so without them a search with other seeds or deeper meant editing the
 * file (the Node properties read `RUNS` and `SEED`).
 *
 * @example
 * ```ts
 * // VITE_RUNS=1000 VITE_SEED=7 npx vitest run test/edge/request-fingerprint.property.test.ts
 * fc.assert(property, propertyRuns(150, 20261206));
 * ```
 */
export function propertyRuns(numRuns: number, seed: number): { numRuns: number; seed: number } {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  return {
    numRuns: Number(env.RUNS ?? env.VITE_RUNS ?? numRuns),
    seed: Number(env.SEED ?? env.VITE_SEED ?? seed),
  };
}
