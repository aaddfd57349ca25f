import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort, waitForHttp } from "../../../src/bench/stack";

/** Processes whose command line mentions `needle` (ps, as an operator would check). */
function processesMentioning(needle: string): string[] {
  return execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(needle) && !line.includes("ps -eo"));
}

describe("npm start", () => {
  it("brings up three engines and the Worker, and Ctrl-C leaves no process behind", async () => {
    const [worker, ...engines] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const persistTo = mkdtempSync(join(tmpdir(), "spillway-start-"));
    const child = spawn(
      "node_modules/.bin/tsx",
      ["scripts/start.ts", "--port", String(worker), "--engine-ports", engines.join(","), "--persist-to", persistTo],
      { stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    try {
      await waitForHttp(`http://127.0.0.1:${worker}/health`, 60_000);
      // The Worker routes to the demo's engines (configured on the moved ports).
      const res = await fetch(`http://127.0.0.1:${worker}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "demo-model", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }),
      });
      expect(res.status).toBe(200);
      for (const port of engines) expect(processesMentioning(`--port ${port}`).length).toBeGreaterThan(0);
      expect(processesMentioning(`--port ${worker}`).length).toBeGreaterThan(0);

      process.kill(child.pid as number, "SIGINT");
      expect(await exited).toBe(0);
      expect(output).toContain("spillway demo is up");
      // workerd is started with --socket-addr=entry=127.0.0.1:<port>, wrangler and engines with --port <port>.
      for (const port of [worker, ...engines]) {
        expect(processesMentioning(`--port ${port}`), `port ${port}`).toEqual([]);
        expect(processesMentioning(`127.0.0.1:${port}`), `port ${port}`).toEqual([]);
      }
    } finally {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // Already gone.
      }
      rmSync(persistTo, { recursive: true, force: true });
    }
  }, 90_000);
});
