import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The repository's root (this file is test/support/repo-files.ts). */
const root = resolve(import.meta.dirname, "../..");

/**
 * A committed file's text, by its path from the repository's root: what the docs tests compare with the data and
 * renderers that generate them.
 *
 * @example
 * ```ts
 * expect(repoText("docs/wave-period.md")).toBe(renderWavePeriod(report));
 * ```
 */
export function repoText(path: string): string {
  return readFileSync(join(root, path), "utf8");
}

/**
 * A committed JSON file, parsed, by its path from the repository's root.
 *
 * @example
 * ```ts
 * const report = repoJson<WavePeriodReport>("docs/wave-period.json");
 * ```
 */
export function repoJson<T>(path: string): T {
  return JSON.parse(repoText(path)) as T;
}
