import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterEach, describe, expect, it } from "vitest";
import { CliError } from "../../../src/engine/cli";
import type { Engine } from "../../../src/engine/engine";
import { type EngineCommand, parseEngineCommand } from "../../../src/engine/engine-command";
import { createEngineLoop, QUEUE_FULL_MESSAGE } from "../../../src/engine/engine-loop";
import type { EngineCore } from "../../../src/engine/generation";
import { createEngineApp, type RunningEngineServer, startEngineServer } from "../../../src/engine/index";
import { createLogger } from "../../../src/engine/log-line";
import { createEngineMetrics } from "../../../src/engine/metrics";
import { tokenizer } from "../../../src/engine/tokenizer";

const QUEUE_FULL_BODY = {
  error: { message: "The request queue is full.", type: "server_error", param: null, code: null },
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("condition not reached");
}

const loadOf = async (url: string) =>
  (await (await fetch(`${url}/load`)).json()) as { running: number; waiting: number };

const post = (url: string, body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "demo-model", prompt: "hello", ignore_eos: true, ...body }),
    signal,
  });

/** An engine whose decode steps wait until `open()`: a request admitted before then stays running. */
function gatedEngine() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const engine: Engine = {
    prefill: async (batch) => batch.entries.map(() => 7),
    decode: async (batch) => {
      await gate;
      return batch.requests.map(() => 7);
    },
    release: () => {},
  };
  return { engine, open };
}

/** The engine's HTTP app over its loop on a gated engine, listening on 127.0.0.1. */
async function gatedServer(maxQueuedRequests: number | undefined) {
  const { engine, open } = gatedEngine();
  const metrics = createEngineMetrics("demo-model");
  const logger = createLogger("error", () => {});
  const core: EngineCore = createEngineLoop({
    scheduler: { maxTotalTokens: 4096, maxRunningRequests: 1 },
    maxQueuedRequests,
    engine,
    tokenizer,
    metrics,
    logger,
  });
  const app = createEngineApp({
    name: "gated",
    core,
    tokenizer,
    limits: { servedModelName: "demo-model", maxTotalTokens: 4096, contextLength: 4096, pageSize: 1 },
    metrics,
    logger,
    maxBodyBytes: 1 << 20,
    accessLog: false,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, () => resolve(s as Server));
  });
  cleanups.push(async () => {
    open();
    await core.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open };
}

describe("--max-queued-requests (SGLang's): a request that finds the waiting queue full is refused with 503", () => {
  it("refuses the (cap + running + 1)th request, JSON or stream, serves the earlier ones, and serves again once drained", async () => {
    const { url, open } = await gatedServer(1);
    // One running (max-running-requests 1, its decode held by the gate), then one waiting: the queue is full.
    const running = post(url, { max_tokens: 3 });
    await until(async () => (await loadOf(url)).running === 1);
    const waiting = post(url, { max_tokens: 3 });
    await until(async () => (await loadOf(url)).waiting === 1);

    const refused = await post(url, { max_tokens: 3 });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual(QUEUE_FULL_BODY);
    // A stream is refused at admission too: a JSON 503, not an SSE stream that carries an error.
    const refusedStream = await post(url, { max_tokens: 3, stream: true });
    expect(refusedStream.status).toBe(503);
    expect(refusedStream.headers.get("content-type")).toContain("application/json");
    expect(await refusedStream.json()).toEqual(QUEUE_FULL_BODY);
    // Nothing was queued by the refusals.
    expect(await loadOf(url)).toMatchObject({ running: 1, waiting: 1 });

    open();
    for (const answer of [await running, await waiting]) {
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as {
        choices: { finish_reason: string }[];
        usage: { completion_tokens: number };
      };
      expect(body.choices[0]?.finish_reason).toBe("length");
      expect(body.usage.completion_tokens).toBe(3);
    }
    await until(async () => {
      const load = await loadOf(url);
      return load.running === 0 && load.waiting === 0;
    });
    const again = await post(url, { max_tokens: 3 });
    expect(again.status).toBe(200);
  });

  it("queues without a bound when unset (the default)", async () => {
    const { url, open } = await gatedServer(undefined);
    const first = post(url, { max_tokens: 2 });
    await until(async () => (await loadOf(url)).running === 1);
    const queued = [post(url, { max_tokens: 2 }), post(url, { max_tokens: 2 }), post(url, { max_tokens: 2 })];
    await until(async () => (await loadOf(url)).waiting === 3);
    open();
    for (const answer of [await first, ...(await Promise.all(queued))]) expect(answer.status).toBe(200);
  });

  it("is an option of startEngineServer, which refuses the next request while one runs and one waits", async () => {
    const server: RunningEngineServer = await startEngineServer({
      port: 0,
      maxRunningRequests: 1,
      maxQueuedRequests: 1,
      eosDistribution: "never",
      log: () => {},
    });
    cleanups.push(() => server.close());
    // At speed 1 a step takes at least 20 ms: 30000 tokens take ten minutes, so these two stay until aborted.
    const first = new AbortController();
    const second = new AbortController();
    const long = { max_tokens: 30_000, stream: true };
    await post(server.url, long, first.signal);
    await until(async () => (await loadOf(server.url)).running === 1);
    await post(server.url, long, second.signal);
    await until(async () => (await loadOf(server.url)).waiting === 1);

    const refused = await post(server.url, { max_tokens: 2 });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual(QUEUE_FULL_BODY);

    first.abort();
    second.abort();
    await until(async () => {
      const load = await loadOf(server.url);
      return load.running === 0 && load.waiting === 0;
    });
    expect((await post(server.url, { max_tokens: 2 })).status).toBe(200);
  });

  it("keeps SGLang's message", () => {
    expect(QUEUE_FULL_MESSAGE).toBe("The request queue is full.");
  });
});

describe("--max-queued-requests on the command line and in --config", () => {
  const files: Record<string, string> = {
    "ok.json": JSON.stringify({ maxQueuedRequests: 8 }),
    "zero.json": JSON.stringify({ maxQueuedRequests: 0 }),
  };
  const read = (path: string) => files[path] ?? "";
  const failure = (argv: string[]) => {
    try {
      parseEngineCommand(argv, {}, read);
    } catch (error) {
      expect(error).toBeInstanceOf(CliError); // the command exits with status 2 and this message
      return (error as Error).message;
    }
    throw new Error("expected a CliError");
  };

  it("is unset by default, and set by the flag or the config file's maxQueuedRequests", () => {
    const parse = (argv: string[]) => (parseEngineCommand(argv, {}, read) as EngineCommand).options;
    expect(parse([]).maxQueuedRequests).toBeUndefined();
    expect(parse(["--max-queued-requests", "4"]).maxQueuedRequests).toBe(4);
    expect(parse(["--config", "ok.json"]).maxQueuedRequests).toBe(8);
    expect(parse(["--config", "ok.json", "--max-queued-requests", "2"]).maxQueuedRequests).toBe(2);
  });

  it.each([["0"], ["-1"], ["1.5"], ["many"]])("refuses %s naming the flag", (value) => {
    expect(failure(["--max-queued-requests", value])).toMatch(/^--max-queued-requests: /);
  });

  it("refuses a bad value in the config file naming the file and the flag", () => {
    expect(failure(["--config", "zero.json"])).toContain("--config zero.json: --max-queued-requests");
  });
});
