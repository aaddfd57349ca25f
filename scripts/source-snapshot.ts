import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The code a long command computes from: every file under `src/`, `eval/` and `scripts/`, and the lockfile. A
 * figure written to docs/ must come from a tree that a commit holds; a command that runs for twenty minutes while
 * someone commits beside it would otherwise publish figures from code that no commit has (it happened: an
 * `npm run eval` recorded variant rows from the tree as it started, and a change to the standing queue that landed
 * during the run went into the same commit unmeasured).
 */
export const SOURCE_PATHS = ["src", "eval", "scripts", "package-lock.json"] as const;

/** Each source file's path (relative to the root, `/`-separated) and the SHA-256 of its content. */
export type SourceSnapshot = ReadonlyMap<string, string>;

/**
 * Hashes the sources under `root` now.
 *
 * @example
 * ```ts
 * const before = snapshotSources(process.cwd());
 * before.get("src/core/retry-after.ts"); // "9f2c…" (hex SHA-256)
 * ```
 */
export function snapshotSources(root: string, paths: readonly string[] = SOURCE_PATHS): SourceSnapshot {
  const snapshot = new Map<string, string>();
  for (const path of paths) {
    const full = join(root, path);
    if (!existsSync(full)) continue;
    const files = statSync(full).isDirectory()
      ? readdirSync(full, { recursive: true, encoding: "utf8" }).map((name) => join(full, name))
      : [full];
    for (const file of files) {
      if (file.includes("node_modules") || !statSync(file).isFile()) continue;
      const name = relative(root, file).split("\\").join("/");
      snapshot.set(name, createHash("sha256").update(readFileSync(file)).digest("hex"));
    }
  }
  return snapshot;
}

/**
 * The files added, removed or changed between two snapshots, sorted.
 *
 * @example
 * ```ts
 * changedSources(new Map([["src/a.ts", "1"]]), new Map([["src/a.ts", "2"], ["src/b.ts", "3"]]));
 * // ["src/a.ts", "src/b.ts"]
 * ```
 */
export function changedSources(before: SourceSnapshot, after: SourceSnapshot): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort();
}

/** The sources changed while a command ran: what it computed is no commit's, so it writes nothing. */
export class SourcesChangedError extends Error {
  constructor(readonly changed: readonly string[]) {
    const shown = changed.slice(0, 10).join(", ") + (changed.length > 10 ? `, and ${changed.length - 10} more` : "");
    super(
      `the sources changed while this command ran (${shown}): its figures are from the code as it started, which ` +
        "no commit may hold, so nothing was written; run it again on a tree nobody changes meanwhile",
    );
    this.name = "SourcesChangedError";
  }
}

/**
 * A writer of generated docs that refuses once the sources differ from what they were when it was made (at the
 * command's start: Node has compiled and loaded the code by then). Figures go out only if the tree that computed
 * them is still the tree on disk, so the commit that takes them holds the code that made them.
 *
 * @example
 * ```ts
 * const writeGenerated = generatedWriter(root); // at start-up, before the long work
 * // ... twenty minutes of simulation ...
 * writeGenerated(join(root, "docs/evaluation.json"), json); // throws SourcesChangedError if src/ changed
 * ```
 */
export function generatedWriter(
  root: string,
  paths: readonly string[] = SOURCE_PATHS,
): (file: string, content: string | Uint8Array) => void {
  const atStart = snapshotSources(root, paths);
  return (file, content) => {
    const changed = changedSources(atStart, snapshotSources(root, paths));
    if (changed.length > 0) throw new SourcesChangedError(changed);
    writeFileSync(file, content);
  };
}
