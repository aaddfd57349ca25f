import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { freePort, type ManagedProcess, startManaged, waitForWorker } from "../../../src/bench/stack";

/** A child that runs until stopped; with `port`, it serves 200 on 127.0.0.1:`port` itself. */
function child(port?: number): ManagedProcess {
  const program =
    port === undefined
      ? "setInterval(() => {}, 60_000)"
      : `require("node:http").createServer((q, s) => s.end("child")).listen(${port}, "127.0.0.1")`;
  return startManaged("child", process.execPath, ["-e", program], { quiet: true });
}

/**
 * `waitForWorker` is how every process test knows that `wrangler dev` (or a soak engine) is up on the port it was
 * given. A port found free can be taken before the child binds it; then the child exits on EADDRINUSE (wrangler
 * seconds later), but whatever took the port answers at once, and the test would run against it.
 */
describe.skipIf(!existsSync("/proc/net/tcp"))("waitForWorker: the answer must come from the child's own port", () => {
  it("fails when another server holds the port and answers 200 (it resolved, and the test ran against that server)", async () => {
    const port = await freePort();
    const squatter = createServer((_req, res) => res.end("squatter"));
    await new Promise<void>((done) => squatter.listen(port, "127.0.0.1", done));
    const idle = child();
    try {
      await expect(waitForWorker(idle, `http://127.0.0.1:${port}/health`, 20_000)).rejects.toThrow(
        `port ${port} is held by another process, not child's`,
      );
    } finally {
      await idle.stop();
      squatter.closeAllConnections();
      await new Promise((done) => squatter.close(done));
    }
  }, 30_000);

  it("resolves once the child itself serves the port", async () => {
    const port = await freePort();
    const server = child(port);
    try {
      await waitForWorker(server, `http://127.0.0.1:${port}/health`, 20_000);
      expect(await (await fetch(`http://127.0.0.1:${port}/health`)).text()).toBe("child");
    } finally {
      await server.stop();
    }
  }, 30_000);
});
