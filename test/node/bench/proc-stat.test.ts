import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { procStat } from "../../../src/bench/proc-stat";

describe.skipIf(!existsSync("/proc/self/stat"))("procStat (Linux /proc)", () => {
  it("reads this process's parent and group, and a child's command name", async () => {
    expect(procStat(process.pid)?.ppid).toBe(process.ppid);
    const child = spawn("sleep", ["5"], { detached: true, stdio: "ignore" });
    try {
      const stat = procStat(child.pid as number);
      expect(stat).toEqual({
        comm: "sleep",
        state: expect.stringMatching(/^[RSD]$/),
        ppid: process.pid,
        pgid: child.pid,
      });
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("is undefined for a process that is not there", () => {
    expect(procStat(2 ** 30)).toBeUndefined();
  });
});
