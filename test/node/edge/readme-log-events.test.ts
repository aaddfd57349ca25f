import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");

/** README's "Edge logs" section: from its heading to the next heading. */
function edgeLogsSection(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const start = readme.indexOf("### Edge logs");
  expect(start, 'README has an "Edge logs" section').toBeGreaterThanOrEqual(0);
  const next = readme.indexOf("\n#", start + 1);
  return readme.slice(start, next === -1 ? undefined : next);
}

/** Every `event: "spillway.*"` that the edge's and the core's code write, with the file that writes it. */
function loggedEvents(): Map<string, string> {
  const events = new Map<string, string>();
  for (const dir of ["src/edge", "src/core"]) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
      const path = join(entry.parentPath, entry.name);
      for (const m of readFileSync(path, "utf8").matchAll(/event: "(spillway\.[a-z_]+)"/g))
        events.set(m[1] as string, path.slice(root.length + 1));
    }
  }
  return events;
}

describe("README's edge logs", () => {
  it("names every event the edge and its routers log, each as `spillway.<name>`", () => {
    const section = edgeLogsSection();
    const events = loggedEvents();
    // The known lines are found at all (a pattern that found none would pass for nothing).
    expect([...events.keys()]).toEqual(
      expect.arrayContaining(["spillway.rejection", "spillway.replica_down", "spillway.upstream_timeout"]),
    );
    const missing = [...events].filter(([event]) => !section.includes(`\`${event}\``));
    expect(missing, "events logged but not named in README's Edge logs (event, file)").toEqual([]);
  });
});
