import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, waitForHttp } from "../../../src/bench/stack";
import { CliError, parseEngineArgs } from "../../../src/engine/cli";
import { type EngineCommand, parseEngineCommand } from "../../../src/engine/engine-command";
import { startEngineServer } from "../../../src/engine/index";
import { createShutdownGate } from "../../../src/engine/shutdown";

const files: Record<string, string> = {
  "ok.json": JSON.stringify({ maxTotalTokens: 4096, speed: 2, disableAccessLog: true, shutdownGraceS: 5 }),
  "unknown.json": JSON.stringify({ maxTotalTokenz: 4096 }),
  "typed.json": JSON.stringify({ speed: true }),
  "range.json": JSON.stringify({ maxTotalTokens: 1 }),
  "array.json": "[1]",
  "broken.json": "{oops",
  "inf.json": JSON.stringify({ speed: "inf" }),
  "switches.json": JSON.stringify({ disableRadixCache: true, speed: 0 }),
};
const read = (path: string) => {
  const text = files[path];
  if (text === undefined) throw new Error("ENOENT");
  return text;
};
const parse = (argv: string[]) => parseEngineCommand(argv, {}, read) as EngineCommand;
const failure = (argv: string[]) => {
  try {
    parseEngineCommand(argv, {}, read);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return (error as Error).message;
  }
  throw new Error("expected a CliError");
};

describe("engine --config FILE.json", () => {
  it("reads camelCase flags from the file; the command line overrides them", () => {
    const fromFile = parse(["--config", "ok.json"]);
    expect(fromFile.options).toMatchObject({ maxTotalTokens: 4096, speed: 2, accessLog: false });
    expect(fromFile.shutdownGraceS).toBe(5);
    const overridden = parse(["--config=ok.json", "--speed", "4", "--shutdown-grace-s", "1.5"]);
    expect(overridden.options).toMatchObject({ maxTotalTokens: 4096, speed: 4 });
    expect(overridden.shutdownGraceS).toBe(1.5);
    expect(parse(["--config", "inf.json"]).options.speed).toBe(Number.POSITIVE_INFINITY);
    expect(parse([]).shutdownGraceS).toBe(30);
  });

  it.each([
    ["unknown.json", 'unknown key "maxTotalTokenz"'],
    ["typed.json", "speed: expected a number"],
    ["range.json", "--config range.json: --max-total-tokens"],
    ["array.json", "expected a JSON object"],
    ["broken.json", "not valid JSON"],
    ["missing.json", "cannot read it"],
  ])("refuses %s with a message naming the file and key", (file, message) => {
    expect(failure(["--config", file])).toContain(message);
  });

  it("merges the file and the command line as objects, validated once, naming a bad value's source", () => {
    // The file's bad speed is overridden by the command line: nothing is wrong with the merged options.
    expect(parse(["--config", "switches.json", "--speed", "3"]).options).toMatchObject({
      disableRadixCache: true,
      speed: 3,
    });
    expect(failure(["--config", "switches.json"])).toContain("--config switches.json: --speed");
    expect(failure(["--config", "ok.json", "--speed", "0"])).toMatch(/^--speed: /);
  });

  it("refuses a bad --shutdown-grace-s", () => {
    expect(failure(["--shutdown-grace-s", "-1"])).toContain("--shutdown-grace-s");
    expect(failure(["--shutdown-grace-s"])).toContain("a value is required");
  });
});

describe("engine flags with a negative value", () => {
  it("takes --chunked-prefill-size -1 (chunking off, as --help and SGLang write it)", () => {
    expect(parse(["--chunked-prefill-size", "-1"]).options.chunkedPrefillSize).toBe(-1);
    expect(parseEngineArgs(["--chunked-prefill-size", "-1"])).toMatchObject({ chunkedPrefillSize: -1 });
  });

  it.each([
    [["--port", "-1"], "--port: must be at least 0, got -1"],
    [["--max-total-tokens", "-5"], "--max-total-tokens: must be at least 2, got -5"],
    [["--schedule-conservativeness", "-.5"], "--schedule-conservativeness: must be greater than 0, got -0.5"],
    [["--shutdown-grace-s", "-1"], '--shutdown-grace-s: expected a number of seconds >= 0, got "-1"'],
    [["--port", "--speed", "2"], "--port: a value is required (write --port=VALUE for one that starts with '-')"],
  ])("refuses %j with one line naming the flag (parseArgs said three about an 'ambiguous' argument)", (argv, line) => {
    expect(failure(argv)).toBe(line);
  });
});

const completion = (url: string, maxTokens: number) =>
  fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "demo-model", prompt: "hello", max_tokens: maxTokens, ignore_eos: true }),
  });

/** Resolves once the engine reports a running request (no sleeps on the wall clock). */
async function untilRunning(url: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const load = (await (await fetch(`${url}/load`)).json()) as { running: number };
    if (load.running > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no request started");
}

describe("clean shutdown (shutdown gate)", () => {
  it("refuses new requests with 503 while in-flight ones finish", async () => {
    const gate = createShutdownGate();
    const server = await startEngineServer({ port: 0, speed: 4, wrapFetch: gate.wrap, log: () => {} });
    try {
      const inFlight = completion(server.url, 24);
      await untilRunning(server.url);
      const drained = gate.drain(20_000);
      const refused = await completion(server.url, 4);
      expect(refused.status).toBe(503);
      expect((await refused.json()) as object).toHaveProperty("error");
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(24);
      expect(await drained).toEqual({ drained: true, inFlight: 0 });
    } finally {
      await server.close();
    }
  });

  it("close() lets a response already on its way out finish (it cut every connection at once, and lost it)", async () => {
    const encoder = new TextEncoder();
    let finish = () => {};
    const server = await startEngineServer({
      port: 0,
      speed: 4,
      log: () => {},
      // A response whose body ends only after close() has begun, as one the gate counted done while its last bytes
      // were still being written.
      wrapFetch: (handler) => (request, env) => {
        if (new URL(request.url).pathname !== "/slow") return handler(request, env);
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode("first "));
            finish = () => {
              controller.enqueue(encoder.encode("last"));
              controller.close();
            };
          },
        });
        return new Response(body, { status: 200 });
      },
    });
    const response = await fetch(`${server.url}/slow`);
    const text = response.text();
    const closed = server.close();
    setTimeout(() => finish(), 300);
    expect(await text).toBe("first last");
    await closed;
  });

  it("gives up after the grace period and reports what is left", async () => {
    const gate = createShutdownGate();
    const server = await startEngineServer({ port: 0, speed: 1, wrapFetch: gate.wrap, log: () => {} });
    const inFlight = completion(server.url, 2000).catch(() => undefined);
    await untilRunning(server.url);
    expect(await gate.drain(50)).toEqual({ drained: false, inFlight: 1 });
    await server.close();
    await inFlight;
  });
});

describe("npm run engine: SIGTERM", () => {
  const dir = mkdtempSync(join(tmpdir(), "spillway-engine-cli-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finishes the in-flight request, then exits 0", async () => {
    const port = await freePort();
    const config = join(dir, "engine.json");
    writeFileSync(config, JSON.stringify({ port, speed: 4, logLevel: "warning", disableAccessLog: true }));
    const child = spawn("node_modules/.bin/tsx", ["src/engine/main.ts", "--config", config], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitForHttp(`${url}/health`, 20_000);
      // About 2.5 s of decoding at speed 4: long enough that the request is still running when the SIGTERM is
      // handled on a busy machine (24 tokens, 0.15 s, had finished before it there), short beside the 30 s grace.
      const inFlight = completion(url, 400);
      await untilRunning(url);
      child.kill("SIGTERM");
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(await exited).toBe(0);
      expect(output).toContain("finishing 1 request(s)");
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});
