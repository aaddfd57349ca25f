import { describe, it } from "vitest";

const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";

/**
 * `describe` for a suite that needs something outside `npm ci` (Debian's chromium, the optional llama.cpp
 * package). Where it is missing, a developer's run skips the suite with a message saying how to get it; in CI
 * (`CI` set, and `.ci/run` installs everything) a missing prerequisite fails instead of hiding.
 *
 * @example
 * ```ts
 * describeWith(existsSync("/usr/bin/chromium"), "apt-get install -y chromium", "dashboard", () => { ... });
 * ```
 */
export function describeWith(available: boolean, howToGet: string, name: string, body: () => void): void {
  if (available) {
    describe(name, body);
    return;
  }
  if (inCi) {
    describe(name, () => {
      it("has its prerequisite in CI", () => {
        throw new Error(`missing prerequisite: ${howToGet} (.ci/run installs it)`);
      });
    });
    return;
  }
  console.warn(`[skipped] ${name}: missing prerequisite (${howToGet})`);
  describe.skip(`${name} (skipped: ${howToGet})`, body);
}
