import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

// What Node's HTTP parser refuses never reaches the app: the server's clientError handler answers it.
let server: RunningEngineServer;
const logLines: string[] = [];
const lineWaiters: Array<() => void> = [];

beforeAll(async () => {
  server = await startEngineServer({
    port: 0,
    maxTotalTokens: 1024,
    speed: 1000,
    createScheduler: fakeScheduler(),
    log: (line) => {
      logLines.push(line);
      for (const wake of lineWaiters.splice(0)) wake();
    },
  });
});
afterAll(async () => {
  await server.close();
});

/** Writes raw bytes and reads until the server ends the connection (the client never closes its side first). */
function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: server.port, host: "127.0.0.1", allowHalfOpen: true }, () => socket.write(bytes));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("end", () => {
      socket.destroy();
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
    });
  });
}

describe("requests Node's HTTP parser refuses", () => {
  it.each([
    ["a non-numeric Content-Length", "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400],
    [
      "two Content-Lengths that differ",
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      400,
    ],
    ["a request line that is not HTTP", "GARBAGE\r\n\r\n", 400],
    [
      "headers past Node's size limit",
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(32 * 1024)}\r\n\r\n`,
      431,
    ],
  ])("%s get OpenAI's error body, then the connection closes", async (_, bytes, status) => {
    const res = await raw(bytes);
    expect(res.status).toBe(status);
    expect(res.headers).toContain("content-type: application/json");
    expect(res.headers).toContain("connection: close");
    const body = JSON.parse(res.body) as { error: { message: string; type: string; param: null; code: string } };
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: null });
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(typeof body.error.code).toBe("string");
  });

  it("leaves the server serving", async () => {
    await raw("GARBAGE\r\n\r\n");
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
  });
});

/** The access line of the request sent from `localPort`, once logged. */
async function accessLineOf(localPort: number): Promise<string> {
  for (;;) {
    const line = logLines.find((l) => l.includes(`127.0.0.1:${localPort} - "`));
    if (line !== undefined) return line;
    await new Promise<void>((wake) => lineWaiters.push(wake));
  }
}

const CHUNKED_HEAD =
  "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n" +
  "Expect: 100-continue\r\n\r\n";

/**
 * Sends `head` (with `Expect: 100-continue`) and, once the server has taken the request (its `100 Continue`),
 * `body`; then `after` (close, reset or nothing). Resolves with what the server sent after the 100 and the access line.
 */
function cutShort(
  head: string,
  body: string,
  after: (socket: Socket) => void,
): Promise<{ status: number; body: string; accessLine: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: server.port, host: "127.0.0.1", allowHalfOpen: true }, () => socket.write(head));
    const localPort = new Promise<number>((r) => socket.once("connect", () => r(socket.localPort ?? 0)));
    let text = "";
    let continued = false;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (!continued && text.includes("\r\n\r\n")) {
        continued = true;
        if (text !== "HTTP/1.1 100 Continue\r\n\r\n") reject(new Error(`expected 100 Continue, got ${text}`));
        text = "";
        socket.write(body, () => after(socket));
      }
    });
    // A reset or closed socket may report ECONNRESET or EPIPE to us: the server's side is what is tested.
    socket.on("error", () => {});
    socket.on("close", async () => {
      try {
        const accessLine = await accessLineOf(await localPort);
        const [head2 = "", rest = ""] = text.split("\r\n\r\n", 2);
        resolve({ status: Number(head2.split(" ")[1] ?? Number.NaN), body: rest, accessLine });
      } catch (error) {
        reject(error);
      }
    });
    socket.on("end", () => socket.destroy());
  });
}

describe("a request body cut short by its connection", () => {
  it("a malformed chunk is answered 400 with OpenAI's error body, and logged 400 (not 500, no error line)", async () => {
    const before = logLines.length;
    const res = await cutShort(CHUNKED_HEAD, '5\r\n{"mod\r\nzz\r\n', () => {});
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body) as { error: { message: string; type: string; param: null; code: string } };
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: null, code: "malformed_http_request" });
    expect(body.error.message).toContain("chunk size");
    expect(res.accessLine).toMatch(/"POST \/v1\/completions HTTP\/1\.1" 400$/);
    expect(logLines.slice(before).join("\n")).not.toContain("unhandled error");
  });

  it.each([
    ["closes its side", (socket: Socket) => socket.end()],
    ["resets the connection", (socket: Socket) => socket.resetAndDestroy()],
  ])("a client that %s mid-body (chunked) is a disconnect: 499, no error line", async (_, after) => {
    const before = logLines.length;
    const res = await cutShort(CHUNKED_HEAD, '5\r\n{"mod\r\n', after);
    expect(res.body).toBe(""); // nothing is sent to a client that went away
    expect(res.accessLine).toMatch(/"POST \/v1\/completions HTTP\/1\.1" 499$/);
    expect(logLines.slice(before).join("\n")).not.toContain("unhandled error");
  });

  it("a client that goes away before its Content-Length body arrived is a disconnect (499), not invalid JSON", async () => {
    const head =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n" +
      "Expect: 100-continue\r\n\r\n";
    const res = await cutShort(head, '{"mod', (socket) => socket.end());
    expect(res.accessLine).toMatch(/"POST \/v1\/completions HTTP\/1\.1" 499$/);
  });

  it("leaves the server serving", async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
  });
});
