import { spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Runs `npm run engine -- args` (tsx in-process loader) and collects its exit and stderr. */
function runEngineCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/engine/main.ts", ...args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("npm run engine on an address it cannot listen on", () => {
  let holder: Server;
  let port = 0;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it("exits 1 with one line naming the address, not a stack trace", async () => {
    const run = await runEngineCli(["--port", String(port)]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`engine: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  }, 30_000);

  it("exits 1 with one line for a --host name that does not resolve (it threw getaddrinfo's stack trace)", async () => {
    // An empty label: no resolver can look it up, and glibc refuses it without sending a query.
    const run = await runEngineCli(["--host", "a..b", "--port", "0"]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("engine: cannot listen on a..b:0 (ENOTFOUND)");
  }, 30_000);
});
