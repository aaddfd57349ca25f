import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const dir = resolve(root, "src/bench/edge/ablations");

describe("scripts/edge-ablation.sh's patches", () => {
  const patches = readdirSync(dir).filter((f) => f.endsWith(".patch"));

  it("there are the four the docs name", () => {
    expect(patches.sort()).toEqual([
      "answer-passed-through.patch",
      "no-message-checks.patch",
      "no-router.patch",
      "router-answers-at-once.patch",
    ]);
  });

  it.each(patches)("%s still applies to this tree (an ablation of code that moved measures nothing)", (patch) => {
    expect(() =>
      execFileSync("git", ["apply", "--check", resolve(dir, patch)], { cwd: root, stdio: "pipe" }),
    ).not.toThrow();
  });
});
