import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type BackendKind, createFakeBackend, type FakeBackend } from "../../src/bench/fake-openai-backends";
import { ReplayGuard, verifyRequest } from "../../src/core/request-signature";
import { TEST_SIGNING_SECRET, TEST_UPSTREAM_KEY } from "./edge-test-config";

const replayGuard = new ReplayGuard(30_000);

/**
 * A Node test server speaking the engine server's API (`/load`, `/v1/chat/completions`, `/v1/completions`)
 * with behaviour the edge tests control. It hosts many virtual replicas by path prefix
 * (`http://127.0.0.1:PORT/r/<id>`), each with its own state, so test files never share a replica.
 *
 * The last message's content (or the prompt) says what to do:
 * - `hold:K` answer only after `POST /r/<id>/__release/K`;
 * - `sleep:MS` answer after MS milliseconds;
 * - with `stream: true`, `stream:N` sends N SSE chunks then `[DONE]`; `streamhold:K` sends one chunk, waits
 *   for release K, then finishes;
 * - `hang` never answers (until the server closes); with `stream: true`, `streamhang` sends the SSE headers at
 *   once (as vLLM, SGLang and spillway's engine do) and then nothing;
 * - with `stream: true`, `streamkill` sends one chunk and then resets the connection (an engine killed
 *   mid-stream); without `stream`, `jsonkill` sends the headers and half an answer, then resets;
 * - with `stream: true`, `streamstall` sends one chunk and then nothing (an engine hung mid-stream); without
 *   `stream`, `jsonstall` sends the headers and half an answer, then nothing;
 * - `streamkill:partial` and `streamstall:partial` send half of a second event before they reset or hang;
 * - `usage:N` answers with `usage.total_tokens` N (a stream ends with a usage chunk);
 * - anything else: answer at once.
 * Control: `POST /r/<id>/__down` (connections are reset, `/load` included), `__drain` (every request, `/load`
 * included, is answered 503 with `retry-after: 1` and `connection: close`, as the engine server's shutdown gate
 * answers while it drains), `__full` (others' requests fill it: `/load` reports 64 more waiting, and a request is
 * answered 429 with `retry-after: 2`, as TGI answers when its queue is full), `__up` (ends all three),
 * `__slowload/MS` (answer `/load` after MS ms), `GET __state`.
 * Replicas whose id starts with `signed-` verify spillway's signature; those whose id starts with `unauthorized-`
 * refuse every request with 401, as an engine does whose signing secret the Worker lacks.
 * Fake vLLM, SGLang and TGI servers (no `/load`, a `/metrics` page) live at `/b/<kind>/<id>`.
 */
interface ReplicaState {
  inflight: number;
  served: string[];
  disconnected: number;
  down: boolean;
  draining: boolean;
  /** Requests (probes included) answered 503 while draining. */
  refusedDraining: number;
  /** Full with others' requests (`__full`): requests are answered 429. */
  full: boolean;
  /** Requests answered 429 while full. */
  refusedFull: number;
  probes: number;
  loadDelayMs: number;
  unsigned: number;
  /** Requests that arrived with an `Authorization` header (the client's key must never reach an engine). */
  withAuthorization: number;
  /** The `x-spillway-*` headers of each request served, in order (the edge's own signature headers among them). */
  internalHeaders: Record<string, string>[];
  /** Requests waiting for their key's release: several may hold one key (e.g. a flood of `hold:flood`). */
  holds: Map<string, Array<() => void>>;
  released: Set<string>;
}

const replicas = new Map<string, ReplicaState>();

function stateOf(id: string): ReplicaState {
  let state = replicas.get(id);
  if (!state) {
    state = {
      inflight: 0,
      served: [],
      disconnected: 0,
      down: false,
      draining: false,
      refusedDraining: 0,
      full: false,
      refusedFull: 0,
      probes: 0,
      loadDelayMs: 0,
      unsigned: 0,
      withAuthorization: 0,
      internalHeaders: [],
      holds: new Map(),
      released: new Set(),
    };
    replicas.set(id, state);
  }
  return state;
}

function waitRelease(state: ReplicaState, key: string): Promise<void> {
  if (state.released.has(key)) return Promise.resolve();
  // Every holder is kept: when a router lets two requests of one key in at once (its probe can read the
  // replica before the first one arrived), remembering only the last left the first hanging for ever.
  return new Promise((resolve) => state.holds.set(key, [...(state.holds.get(key) ?? []), resolve]));
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** Checks spillway's signature as an engine would (the path the engine sees, the exact body bytes). */
async function signatureValid(req: IncomingMessage, body: string): Promise<boolean> {
  const headers = { get: (name: string) => (req.headers[name] as string | undefined) ?? null };
  const result = await verifyRequest(
    [TEST_SIGNING_SECRET],
    headers,
    { method: req.method ?? "GET", path: req.url ?? "/", body },
    Date.now(),
    replayGuard,
    30_000,
  );
  return result.ok;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function commandOf(body: Record<string, unknown>): string {
  const messages = body.messages as { content?: string }[] | undefined;
  return String(messages?.at(-1)?.content ?? body.prompt ?? "");
}

const backends = new Map<string, FakeBackend>();

/**
 * A fake vLLM, SGLang or TGI server at `/b/<kind>/<id>`: 2 requests run at once (the rest wait), vLLM over two
 * engines, model `m`; ids starting with `key-` require `Authorization: Bearer ${TEST_UPSTREAM_KEY}`.
 */
function backendFor(kind: BackendKind, id: string): FakeBackend {
  const key = `${kind}/${id}`;
  let backend = backends.get(key);
  if (!backend) {
    backend = createFakeBackend(kind, {
      model: "m",
      maxRunning: 2,
      engines: kind === "vllm" ? 2 : 1,
      delayMs: 30,
      ...(id.startsWith("key-") ? { apiKey: TEST_UPSTREAM_KEY } : {}),
    });
    backends.set(key, backend);
  }
  return backend;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const backend = /^\/b\/(vllm|sglang|tgi)\/([^/]+)(\/.*)$/.exec(req.url ?? "");
  if (backend) {
    const [, kind, id, path] = backend as unknown as [string, BackendKind, string, string];
    return backendFor(kind, id).handle(req, res, path);
  }
  // A query on the replica's URL (a gateway's `?key=`) reaches every path, `/load` included: the path is read without it.
  const match = /^\/r\/([^/?]+)(\/[^?]*)/.exec(req.url ?? "");
  if (!match) return json(res, 404, { error: "no replica" });
  const [, id, path] = match as unknown as [string, string, string];
  const state = stateOf(id);
  if (path === "/__down") {
    state.down = true;
    return json(res, 200, {});
  }
  if (path === "/__drain") {
    state.draining = true;
    return json(res, 200, {});
  }
  if (path === "/__full") {
    state.full = true;
    return json(res, 200, {});
  }
  if (path === "/__up") {
    state.down = false;
    state.draining = false;
    state.full = false;
    return json(res, 200, {});
  }
  if (path.startsWith("/__slowload/")) {
    state.loadDelayMs = Number(path.slice("/__slowload/".length));
    return json(res, 200, {});
  }
  if (path === "/__state") {
    return json(res, 200, { ...state, holds: [...state.holds.keys()], released: [...state.released] });
  }
  if (path.startsWith("/__release/")) {
    const key = path.slice("/__release/".length);
    state.released.add(key);
    for (const release of state.holds.get(key) ?? []) release();
    state.holds.delete(key);
    return json(res, 200, {});
  }
  if (state.down) {
    // Read the body first: resetting mid-upload leaves workerd with an unhandled rejection of its own.
    for await (const _ of req) {
    }
    req.socket.destroy();
    return;
  }
  const text = await readText(req);
  if (state.draining) {
    // src/engine/shutdown.ts's answer to anything that arrives once the engine drains.
    state.refusedDraining += 1;
    res.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1" });
    res.end(JSON.stringify({ error: { message: "the engine server is shutting down", type: "service_unavailable" } }));
    return;
  }
  if (id.startsWith("unauthorized-") || (id.startsWith("signed-") && !(await signatureValid(req, text)))) {
    state.unsigned += 1;
    return json(res, 401, { error: { message: "unauthorized" } });
  }
  if (path === "/load") {
    state.probes += 1;
    if (state.loadDelayMs > 0) await new Promise((r) => setTimeout(r, state.loadDelayMs));
    const waiting = state.full ? 64 : 0;
    return json(res, 200, {
      queueLength: state.inflight + waiting,
      running: state.inflight,
      waiting,
      accepting: true,
      tokenUsage: 0,
    });
  }
  if (req.method !== "POST") return json(res, 404, { error: "not found" });
  if (state.full) {
    state.refusedFull += 1;
    res.writeHead(429, { "content-type": "application/json", "retry-after": "2" });
    res.end(JSON.stringify({ error: "Model is overloaded", error_type: "overloaded" }));
    return;
  }
  const body = JSON.parse(text || "{}") as Record<string, unknown>;
  const command = commandOf(body);
  state.inflight += 1;
  state.served.push(command);
  if (req.headers.authorization !== undefined) state.withAuthorization += 1;
  state.internalHeaders.push(
    Object.fromEntries(
      Object.entries(req.headers).flatMap(([name, value]) =>
        name.startsWith("x-spillway-") ? [[name, String(value)]] : [],
      ),
    ),
  );
  let finished = false;
  res.on("close", () => {
    if (!finished) state.disconnected += 1;
    state.inflight -= 1;
  });
  const [verb, arg = ""] = command.split(":");
  if (verb === "hold") await waitRelease(state, arg);
  if (verb === "sleep") await new Promise((r) => setTimeout(r, Number(arg)));
  if (verb === "hang") await new Promise(() => {});
  if (body.stream === true) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (verb === "streamhang") {
      res.flushHeaders();
      await new Promise(() => {});
    }
    const chunk = (text: string) =>
      `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: text } }] })}\n\n`;
    const count = verb === "stream" ? Number(arg) : 1;
    for (let i = 0; i < count; i++) res.write(chunk(`t${i}`));
    // `streamkill:partial` / `streamstall:partial`: half of a second event before the engine dies or hangs.
    if (arg === "partial") res.write(chunk("t1").slice(0, 40));
    if (verb === "streamhold") await waitRelease(state, arg);
    if (verb === "streamstall") await new Promise(() => {});
    if (verb === "streamkill") {
      await new Promise((r) => setTimeout(r, 20));
      res.socket?.destroy();
      return;
    }
    if (verb === "usage")
      res.write(`data: ${JSON.stringify({ choices: [], usage: { total_tokens: Number(arg) } })}\n\n`);
    finished = true;
    res.end("data: [DONE]\n\n");
    return;
  }
  if (verb === "jsonstall") {
    // Headers and half a JSON answer, then the engine hangs (the connection stays open).
    res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
    res.write('{"object":"chat.completion","choices":[');
    await new Promise(() => {});
  }
  if (verb === "jsonkill") {
    // Headers and half a JSON answer, then the process "dies".
    res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
    res.write('{"object":"chat.completion","choices":[');
    await new Promise((r) => setTimeout(r, 20));
    res.socket?.destroy();
    return;
  }
  finished = true;
  json(res, 200, {
    object: "chat.completion",
    replica: id,
    choices: [{ index: 0, message: { role: "assistant", content: `done ${command}` }, finish_reason: "stop" }],
    ...(verb === "usage" ? { usage: { total_tokens: Number(arg) } } : {}),
  });
}

/**
 * Starts the fake engine on 127.0.0.1, port 0.
 *
 * @example
 * ```ts
 * const fake = await startFakeEngine();
 * const replica = `${fake.url}/r/my-test-a`;
 * await fake.close();
 * ```
 */
export async function startFakeEngine(): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
