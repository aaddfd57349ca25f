import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { fakeScheduler } from "./fake-scheduler";

// What Node's HTTP parser refuses never reaches the app: the server's clientError handler answers it.
let server: RunningEngineServer;

beforeAll(async () => {
  server = await startEngineServer({
    port: 0,
    maxTotalTokens: 1024,
    speed: 1000,
    createScheduler: fakeScheduler(),
    log: () => {},
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
