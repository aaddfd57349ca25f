import fc from "fast-check";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ReplayGuard, SIGNATURE_HEADERS, verifyRequest } from "../../src/core/request-signature";
import { type ForwardOutcome, forwardToReplica } from "../../src/edge/forward";
import { spillway } from "../../src/edge/middleware";
import type { ReleasedSlot } from "../../src/edge/slot-batch";
import { propertyRuns } from "../support/property-runs";
import { stallingBody } from "../support/stalling-body";

/**
 * How the edge forwards an admitted request to a replica and relays the answer, driven through the real
 * `spillway()` middleware inside workerd (a fake router namespace that admits every request to the replica it is
 * told, and a fake `fetch` standing in for the backends), against a model of a reverse proxy's contract:
 *
 * - The request a replica receives: POST to the replica's URL (its base path kept) + exactly the path and query the
 *   client's URL has (percent-encodings, repeated and empty query keys included: nothing decoded, nothing
 *   re-resolved); the body byte for byte (non-ASCII text included; a leading UTF-8 BOM is dropped, nothing else), with
 *   no Content-Length of the client's (the runtime sets it from the body);
 *   the client's headers minus hop-by-hop ones (Connection, those it names, Keep-Alive, any Proxy-*, TE, Trailer,
 *   Transfer-Encoding, Upgrade), Host, Content-Length, Expect, Authorization, `cf-*` and every `x-spillway-*`
 *   (forged ones included), plus `Authorization: Bearer <upstream key>` when the deployment names one and the four signature
 *   headers when a signing secret is set - a signature the engine's verifier accepts for that exact path and body.
 * - The answer a client receives: the replica's status, status text, headers (minus hop-by-hop ones and those
 *   its Connection names; Retry-After and every other header as sent) and body bytes; a Content-Length only where
 *   it is the body's length; an SSE answer (`text/event-stream`, in any case) streams: its first event reaches the
 *   client before the replica sends the next. The slot is released exactly once, not failed.
 * - Failures, per attempt: a replica that cannot be reached is released as failed and the next attempt goes to
 *   the router's next replica, up to `connectAttempts`, then 502 `bad_gateway`; one that sends no headers within
 *   `upstreamTimeoutS`, or an SSE answer's headers and no first chunk within it, is released as failed, 504
 *   `upstream_timeout` (the deadline bounds the headers and a stream's first chunk, never what follows nor a JSON
 *   body that takes longer); a JSON answer cut mid-body is released as failed, 502 `upstream_failed`; an SSE answer
 *   cut mid-stream keeps its status and the bytes sent, ends with an `upstream_failed` error event, released as
 *   failed; a replica's own 4xx/5xx answer is relayed untouched (README, "What a client is answered", lists
 *   spillway's own answers only), its slot released not failed, except: a 503 (the replica took nothing: an engine
 *   draining for shutdown, a proxy with no engine behind it, a server shedding) is released as full and, like a
 *   refused connection, moves on to the router's next replica while attempts remain (the last one is relayed); a
 *   replica's own 429 is relayed and released as full; a gateway's 502 is relayed and released as failed (a 504 is
 *   not: a proxy's read timeout says slow, not down).
 *
 * Inside workerd because the middleware is typed against the Workers runtime; `fetch` is stubbed, nothing leaves
 * the test. Fixed seeds; a second or two.
 * - A client that leaves: at any moment before the replica's headers (signing included), `forwardToReplica` ends as
 *   `client_gone` and the replica's request is aborted (or never sent); mid-stream, the replica's body is
 *   cancelled and the slot released once, not failed.
 */

const runs = propertyRuns(150, 20261207);

// ---------------------------------------------------------------------------------------------------------------
// Inputs

const HOP_BY_HOP = ["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"];

const caseMix = (name: string, mask: number) =>
  [...name].map((ch, i) => ((mask >> (i % 30)) & 1 ? ch.toUpperCase() : ch)).join("");

const tokenName = fc.stringMatching(/^[a-z0-9!#$%&'*+.^_`|~-]{1,10}$/);

/** Request header names: hop-by-hop, platform, credential, forged internal, ordinary, and any token. */
const requestHeaderName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOP_BY_HOP, "proxy-connection", "proxy-authorization", "proxy-foo") },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "host",
      "content-length",
      "expect",
      "authorization",
      "api-key",
      "x-api-key",
      "cf-ray",
      "cf-connecting-ip",
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "x-spillway-signature",
      "x-spillway-timestamp",
      "x-spillway-nonce",
      "x-spillway-deployment",
      "x-spillway-tenant",
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "accept",
      "user-agent",
      "x-stainless-lang",
      "x-stainless-retry-count",
      "openai-organization",
      "x-request-id",
      "x-a",
      "x-b",
      "api-key",
    ),
  },
  { weight: 2, arbitrary: tokenName },
);
const headerValue = fc.string({ unit: "grapheme-ascii", maxLength: 12 }).map((s) => s.replace(/[\r\n\0]/g, "").trim());

/** A `Connection` value naming some headers: mixed case, odd spacing, empty list elements. */
const connectionValue = fc
  .tuple(
    fc.array(fc.tuple(fc.oneof(requestHeaderName, fc.constantFrom("close", "keep-alive")), fc.nat(), fc.nat(3)), {
      maxLength: 4,
    }),
    fc.constantFrom(",", ", ", " ,, "),
  )
  .map(([items, separator]) =>
    items.map(([name, mask, pad]) => `${" ".repeat(pad)}${caseMix(name, mask)}`).join(separator),
  );

const clientHeaders = fc
  .tuple(
    fc.array(fc.tuple(requestHeaderName, fc.nat(), headerValue), { maxLength: 14 }),
    fc.option(fc.tuple(connectionValue, fc.nat()), { nil: undefined }),
  )
  .map(([pairs, connection]) => {
    const out: [string, string][] = pairs
      // Content-Length is the request's own business (test/node/edge/request-path.property.test.ts): right or absent here.
      .filter(([name]) => name !== "content-length")
      .map(([name, mask, value]) => [caseMix(name, mask), value]);
    if (connection !== undefined) out.push([caseMix("connection", connection[1]), connection[0]]);
    return out;
  });

/** Path segments: plain, sub-delims, percent-encodings that decode to separators, controls, `%`, dots, unicode. */
const segment = fc
  .array(
    fc.constantFrom(
      "v1",
      "chat",
      "completions",
      "a",
      "Z9",
      "-._~",
      "!$&'()*+,;=:@",
      "%41",
      "%7E",
      "%5C",
      "%5c",
      "%2F",
      "%2f",
      "%25",
      "%2541",
      "%20",
      "%0A",
      "%09",
      "%00",
      "%C3%A9",
      "%3F",
      "%23",
      "%2E",
      "%zz",
      "%",
      "é",
      "..",
      ".",
      "\\",
    ),
    { maxLength: 4 },
  )
  .map((parts) => parts.join(""));
const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => `/${segments.join("/")}`);
const queryPart = fc.constantFrom("a", "b", "a=1", "a=2", "b=", "=x", "k=%20", "k=+", "k=%2B", "k=%26%3D", "x=y=z", "");
const query = fc.oneof(
  fc.constant(""),
  fc.array(queryPart, { minLength: 1, maxLength: 5 }).map((parts) => `?${parts.join("&")}`),
);
const replicaBase = fc.constantFrom(
  "https://gpu.example",
  "https://gpu.example/",
  "https://gpu.example/llama",
  "http://10.0.0.1:8000/prefix/deep//",
);
const content = fc.string({ unit: "grapheme", maxLength: 24 });
const upstreamKey = fc.option(fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,24}$/), { nil: undefined });
const signingSecret = fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined });

// ---------------------------------------------------------------------------------------------------------------
// The edge: the real middleware, a router that admits everything, and a fake `fetch` for the replicas

interface Sent {
  url: string;
  method: string;
  headers: Headers;
  body: Uint8Array;
  signal: AbortSignal;
}

type Backend = (sent: Sent, attempt: number) => Promise<Response>;

interface EdgeOptions {
  replicas: string[];
  backend: Backend;
  apiKey?: string | undefined;
  secret?: string | undefined;
  connectAttempts?: number;
  upstreamTimeoutS?: number;
  upstreamIdleTimeoutS?: number;
  /** The replicas' `load` in the configuration (default: spillway's, probed). */
  load?: "spillway" | "none";
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function edge(options: EdgeOptions) {
  const sent: Sent[] = [];
  const tickets: { ticket: string; replica: string }[] = [];
  const releases: ReleasedSlot[] = [];
  const stub = {
    acquire: async (
      _deployment: string,
      _shard: number,
      ticket: string,
      _submit: unknown,
      carried: { released: ReleasedSlot[] },
    ) => {
      releases.push(...carried.released);
      const replica = options.replicas[tickets.length % options.replicas.length] as string;
      tickets.push({ ticket, replica });
      return { kind: "admitted", replica };
    },
    cancel: async () => undefined,
    releaseAll: async (released: readonly ReleasedSlot[]) => {
      releases.push(...released);
      return undefined;
    },
  };
  const app = new Hono();
  app.post(
    "/*",
    spillway({
      routers: () => ({ getByName: () => stub }) as never,
      ...(options.connectAttempts !== undefined ? { connectAttempts: options.connectAttempts } : {}),
    }) as never,
  );
  const deployment: Record<string, unknown> = {
    replicas: [...new Set(options.replicas.map((r) => r.replace(/\/+$/, "")))].map((url) =>
      options.load === "none" ? { url, load: "none" } : url,
    ),
    upstreamTimeoutS: options.upstreamTimeoutS ?? 60,
    upstreamIdleTimeoutS: options.upstreamIdleTimeoutS ?? 60,
  };
  if (options.apiKey !== undefined) deployment.upstreamApiKeySecret = "UPSTREAM_KEY";
  const env = {
    SPILLWAY_CONFIG: JSON.stringify({ logRejections: false, deployments: { m: deployment } }),
    SPILLWAY_SIGNING_SECRET: options.secret,
    UPSTREAM_KEY: options.apiKey,
  };
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  const send = async (url: string, init: RequestInit): Promise<Response> => {
    const request = new Request(url, init);
    const one: Sent = {
      url,
      method: request.method,
      headers: request.headers,
      body: new Uint8Array(await request.arrayBuffer()),
      signal: init.signal as AbortSignal,
    };
    sent.push(one);
    const response = await options.backend(one, sent.length);
    // As fetch does by default ("follow"): a 307/308 sends the same request to its Location.
    const location = response.headers.get("location");
    if (init.redirect !== "manual" && (response.status === 307 || response.status === 308) && location)
      return send(new URL(location, url).href, init);
    return response;
  };
  vi.stubGlobal("fetch", send);
  return {
    sent,
    tickets,
    releases,
    fetch: (request: Request) => app.fetch(request, env, ctx as never) as Promise<Response>,
    /**
     * Once the request's slots are all released (a streamed answer's slot goes when its relay ends, a moment after
     * the client read the last byte) and every `waitUntil` it left has settled.
     */
    settled: async () => {
      for (let i = 0; i < 200 && releases.length < tickets.length; i++) await new Promise((r) => setTimeout(r, 1));
      for (let i = 0; i < pending.length; i++) await pending[i];
    },
  };
}

function clientRequest(
  url: string,
  headers: [string, string][],
  body: string | Uint8Array,
  signal?: AbortSignal,
  typed = true,
): Request {
  const h = new Headers(typed ? { "content-type": "application/json" } : {});
  for (const [name, value] of headers) h.append(name, value);
  return new Request(url, { method: "POST", headers: h, body, ...(signal ? { signal } : {}) });
}

function requestBody(text: string, stream: boolean): string {
  return JSON.stringify({ model: "m", messages: [{ role: "user", content: text }], prompt: text, stream });
}

/** Resolves as `promise`, or rejects after `ms` (a relay that buffers a stream never answers). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.finally(() => {
      if (timer !== undefined) clearTimeout(timer);
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
    }),
  ]);
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

async function readAll(body: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  return new Uint8Array(await new Response(body).arrayBuffer());
}

/** The names a Connection header lists (RFC 9110 7.6.1), lower case. */
function connectionNames(headers: Headers): Set<string> {
  return new Set(
    (headers.get("connection") ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter((s) => s !== ""),
  );
}

/** Hop-by-hop in either direction: the fixed list, any Proxy-*, and what Connection names. */
function hopByHop(lower: string, named: Set<string>): boolean {
  return HOP_BY_HOP.includes(lower) || lower.startsWith("proxy-") || named.has(lower);
}

/** The model of what reaches the replica from the client's headers (before the edge's own are added). */
function expectedUpstream(incoming: Headers): Map<string, string> {
  const named = connectionNames(incoming);
  const out = new Map<string, string>();
  for (const [name, value] of incoming) {
    if (hopByHop(name, named)) continue;
    if (["host", "content-length", "expect", "authorization", "api-key", "x-api-key"].includes(name)) continue;
    if (name.startsWith("cf-") || name.startsWith("x-spillway-")) continue;
    out.set(name, value.trim());
  }
  return out;
}

const SIGNATURE_NAMES = Object.values(SIGNATURE_HEADERS) as string[];

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

// ---------------------------------------------------------------------------------------------------------------
// The request a replica receives

describe("forwarding a request to a replica", () => {
  it("keeps the method, path, query and body exactly; drops hop-by-hop, platform, credential and forged internal headers; signs and authenticates as the edge", async () => {
    const guard = new ReplayGuard(60_000);
    await fc.assert(
      fc.asyncProperty(
        clientHeaders,
        path,
        query,
        replicaBase,
        content,
        upstreamKey,
        signingSecret,
        fc.boolean(),
        fc.constantFrom("", " ", "\r\n\t "),
        fc.boolean(),
        async (headers, p, q, base, text, key, secret, bom, pad, typed) => {
          const backend: Backend = async () =>
            new Response('{"ok":true}', { headers: { "content-type": "application/json" } });
          const e = edge({ replicas: [base], backend, apiKey: key, secret });
          // The bytes the engine must receive: the client's (non-ASCII text included), less a leading BOM.
          const body = encoder.encode(requestBody(text, false) + pad);
          const sentBody = bom ? new Uint8Array([0xef, 0xbb, 0xbf, ...body]) : body;
          // Without the client's Content-Type the replica gets none either (the edge forwards bytes, not a string).
          const request = clientRequest(`http://edge.example${p}${q}`, headers, sentBody, undefined, typed);
          const client = new URL(request.url);
          const res = await e.fetch(request);
          expect(res.status, await res.clone().text()).toBe(200);
          await e.settled();
          expect(e.sent).toHaveLength(1);
          const [sent] = e.sent as [Sent];

          // Method, path and query: the client's, as its URL has them, under the replica's base path.
          expect(sent.method).toBe("POST");
          const expectedUrl = base.replace(/\/+$/, "") + client.pathname + client.search;
          expect(sent.url).toBe(expectedUrl);
          const received = new URL(sent.url);
          expect(received.pathname).toBe(new URL(base).pathname.replace(/\/+$/, "") + client.pathname);
          expect(received.search).toBe(client.search);
          expect(received.searchParams.getAll("a")).toEqual(client.searchParams.getAll("a"));

          // Body: byte for byte (a BOM aside, which is dropped); its length is the runtime's to state, never the client's.
          expect(sent.body).toEqual(body);
          expect(sent.headers.has("content-length")).toBe(false);

          // Headers: the model's, plus the edge's own.
          const expected = expectedUpstream(request.headers);
          if (key !== undefined) expected.set("authorization", `Bearer ${key}`);
          const got = new Map<string, string>();
          for (const [name, value] of sent.headers) if (!SIGNATURE_NAMES.includes(name)) got.set(name, value.trim());
          expect(Object.fromEntries(got)).toEqual(Object.fromEntries(expected));
          for (const name of sent.headers.keys()) {
            if (name.startsWith("x-spillway-")) expect(SIGNATURE_NAMES).toContain(name);
          }
          if (secret === undefined) {
            for (const name of SIGNATURE_NAMES) expect(sent.headers.has(name), name).toBe(false);
          } else {
            const verdict = await verifyRequest(
              [secret],
              sent.headers,
              { method: "POST", path: received.pathname + received.search, body: sent.body },
              Date.now(),
              guard,
              30_000,
            );
            expect(verdict).toEqual({ ok: true, deployment: "m" });
          }
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The answer a client receives

const responseHeaderName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOP_BY_HOP, "proxy-authenticate", "proxy-connection") },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "retry-after",
      "retry-after-ms",
      "x-request-id",
      "x-a",
      "x-b",
      "cache-control",
      "openai-processing-ms",
      "vary",
    ),
  },
  { weight: 1, arbitrary: tokenName.filter((n) => !["set-cookie", "content-length", "content-type"].includes(n)) },
);
const sseContentType = fc
  .tuple(fc.constantFrom("text/event-stream", "text/event-stream; charset=utf-8"), fc.nat())
  .map(([type, mask]) => caseMix(type, mask));
const sseEvent = fc
  .oneof(fc.json({ maxDepth: 1 }), fc.constant("[DONE]"), fc.string({ unit: "grapheme", maxLength: 8 }))
  .map((data) => `data: ${data.replace(/[\r\n]/g, " ")}\n\n`);
const answer = fc.oneof(
  fc.record({
    sse: fc.constant(true as const),
    contentType: sseContentType,
    chunks: fc.array(sseEvent, { minLength: 2, maxLength: 5 }),
  }),
  fc.record({
    sse: fc.constant(false as const),
    contentType: fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain"),
    chunks: fc.array(fc.string({ unit: "grapheme", maxLength: 12 }), { maxLength: 4 }),
  }),
);

describe("relaying a replica's answer", () => {
  it("passes on status, headers (but hop-by-hop ones), Retry-After and body; streams SSE; releases the slot once", async () => {
    await fc.assert(
      fc.asyncProperty(
        answer,
        fc.constantFrom(200, 201, 203, 400, 404, 422, 429, 500, 502, 503, 504),
        fc.stringMatching(/^[A-Za-z ]{0,8}$/),
        fc.array(fc.tuple(responseHeaderName, fc.nat(), headerValue), { maxLength: 8 }),
        fc.option(fc.tuple(connectionValue, fc.nat()), { nil: undefined }),
        fc.boolean(),
        fc.array(headerValue, { maxLength: 2 }),
        async (ans, status, statusText, extra, connection, withLength, cookies) => {
          const bytes = ans.chunks.map((c) => encoder.encode(c));
          const total = concat(bytes);
          // The replica sends its first chunk, then the rest only once the client has read it (SSE): a relay that
          // buffers never answers.
          let openGate = () => {};
          const gate = new Promise<void>((resolve) => {
            openGate = resolve;
          });
          if (!ans.sse) openGate();
          const upstreamHeaders = new Headers({ "content-type": ans.contentType });
          for (const [name, mask, value] of extra) upstreamHeaders.append(caseMix(name, mask), value);
          if (connection !== undefined) upstreamHeaders.append(caseMix("connection", connection[1]), connection[0]);
          for (const cookie of cookies) upstreamHeaders.append("set-cookie", cookie);
          if (withLength) upstreamHeaders.set("content-length", String(total.byteLength));
          const backend: Backend = async () => {
            let i = 0;
            const stream = new ReadableStream<Uint8Array>({
              async pull(controller) {
                if (i > 0) await gate;
                const next = bytes[i++];
                if (next === undefined) controller.close();
                else controller.enqueue(next);
              },
            });
            return new Response(stream, { status, statusText, headers: upstreamHeaders });
          };
          const e = edge({ replicas: ["https://gpu.example"], backend });
          try {
            const res = await within(
              e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", ans.sse))),
              500,
              "response headers",
            );
            expect(res.status).toBe(status);
            expect(res.statusText).toBe(statusText);

            // Headers: the replica's, minus hop-by-hop ones; a Content-Length only as the body's length.
            const named = connectionNames(upstreamHeaders);
            // Values compare as HTTP normalizes them (a repeated empty value may lose its padding when copied).
            const expected: [string, string][] = [];
            for (const [name, value] of upstreamHeaders)
              if (!hopByHop(name, named) && name !== "content-length") expected.push([name, value.trim()]);
            const got = [...res.headers]
              .filter(([name]) => name !== "content-length")
              .map(([name, value]) => [name, value.trim()]);
            expect(got).toEqual(expected);
            expect(res.headers.getAll("set-cookie")).toEqual(upstreamHeaders.getAll("set-cookie"));
            // Normalized the same way: two empty Retry-After values read ", " at the replica and "," once copied
            // (VITE_SEED=99), as the Fetch standard trims a value appended.
            expect(res.headers.get("retry-after")?.trim()).toBe(upstreamHeaders.get("retry-after")?.trim());

            // Body: the replica's bytes; SSE chunk by chunk.
            let received: Uint8Array;
            if (ans.sse) {
              const reader = (res.body as ReadableStream<Uint8Array>).getReader();
              const first = await within(reader.read(), 500, "the first SSE event before the replica's next");
              expect(first.done).toBe(false);
              openGate();
              const rest: Uint8Array[] = [first.value as Uint8Array];
              for (;;) {
                const r = await reader.read();
                if (r.done) break;
                rest.push(r.value);
              }
              received = concat(rest);
            } else {
              received = await readAll(res.body);
            }
            expect(decoder.decode(received)).toBe(decoder.decode(total));
            const length = res.headers.get("content-length");
            if (length !== null) expect(Number(length)).toBe(received.byteLength);

            await e.settled();
            // A 503 is tried once more (connectAttempts 2, the same answer); a 502 marks the replica failed, a 503
            // or a 429 (the replica's own) full.
            expect(e.tickets).toHaveLength(status === 503 ? 2 : 1);
            const failed = status === 502 || ((status === 503 || status === 429) && "full");
            expect([...e.releases].sort()).toEqual(e.tickets.map(({ ticket }) => [ticket, failed]).sort());
          } finally {
            openGate();
          }
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Failures

type Attempt =
  | { kind: "refused" }
  | { kind: "hangs" }
  | { kind: "sse_hangs" }
  | { kind: "answers"; status: number }
  | { kind: "json_cut" }
  | { kind: "sse_cut"; before: string[] };

const attempt: fc.Arbitrary<Attempt> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "refused" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "hangs" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "sse_hangs" as const }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(200, 429, 500, 502, 503, 504).map((status) => ({ kind: "answers" as const, status })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "json_cut" as const }) },
  {
    weight: 1,
    arbitrary: fc.array(sseEvent, { maxLength: 3 }).map((before) => ({ kind: "sse_cut" as const, before })),
  },
);

const STREAM_ERROR = `data: ${JSON.stringify({
  error: { message: "the replica failed mid-stream", type: "server_error", param: null, code: "upstream_failed" },
})}\n\ndata: [DONE]\n\n`;

function cutStream(chunks: string[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[i++];
      if (next === undefined) controller.error(new TypeError("terminated"));
      else controller.enqueue(encoder.encode(next));
    },
  });
}

describe("a replica that fails", () => {
  it("refused connections and 503s move to the next replica up to connectAttempts (then 502, or the 503); a hang (a stream's included) is 504, a cut body 502 or an SSE error event; each failed replica is released as failed, its own answers passed on", async () => {
    const replicas = ["https://gpu-a.example", "https://gpu-b.example/x", "http://10.0.0.3:8000"];
    await fc.assert(
      fc.asyncProperty(
        fc.array(attempt, { minLength: 3, maxLength: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom("application/json", "text/event-stream"),
        async (script, connectAttempts, type) => {
          // Each unreachable attempt writes its spillway.replica_unreachable line, a hang its upstream_timeout line.
          const log = vi.spyOn(console, "log").mockImplementation(() => {});
          log.mockClear();
          const backend: Backend = async (sent, n) => {
            const step = script[n - 1] as Attempt;
            if (step.kind === "refused") throw new TypeError("fetch failed: connect ECONNREFUSED");
            if (step.kind === "hangs")
              return new Promise<Response>((_, reject) =>
                sent.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
              );
            if (step.kind === "sse_hangs")
              // Its headers at once (as vLLM, SGLang and spillway's engine send them), then no event at all.
              return new Response(
                new ReadableStream<Uint8Array>({
                  pull: (controller) =>
                    new Promise<void>((resolve) =>
                      sent.signal.addEventListener("abort", () => {
                        controller.error(new DOMException("aborted", "AbortError"));
                        resolve();
                      }),
                    ),
                }),
                { headers: { "content-type": "text/event-stream" } },
              );
            if (step.kind === "json_cut")
              return new Response(cutStream(['{"id":"x","cho']), { headers: { "content-type": "application/json" } });
            if (step.kind === "sse_cut") {
              // It promised more than it sent (the way a cut shows when a length was declared).
              const promised = encoder.encode(step.before.join("")).byteLength + 16;
              return new Response(cutStream(step.before), {
                headers: { "content-type": "text/event-stream", "content-length": String(promised) },
              });
            }
            // A stream's first chunk comes at once (the deadline covers it); the rest of it, and a JSON body, take
            // longer than the deadline, which no longer applies.
            let part = 0;
            const late = new ReadableStream<Uint8Array>({
              async pull(controller) {
                if (part++ === 0 && type === "text/event-stream") return controller.enqueue(encoder.encode("answer "));
                await new Promise((r) => setTimeout(r, 25));
                if (sent.signal.aborted) return controller.error(new DOMException("aborted", "AbortError"));
                controller.enqueue(
                  encoder.encode(type === "text/event-stream" ? `${step.status}` : `answer ${step.status}`),
                );
                controller.close();
              },
            });
            return new Response(late, {
              status: step.status,
              headers: { "content-type": type, "retry-after": "3" },
            });
          };
          const e = edge({ replicas, backend, connectAttempts, upstreamTimeoutS: 0.01 });
          const res = await within(
            e.fetch(clientRequest("http://edge/v1/completions", [], requestBody("hi", false))),
            2000,
            "an answer",
          );
          const text = await within(res.text(), 2000, "the body");
          await e.settled();
          const length = res.headers.get("content-length");
          if (length !== null) expect(Number(length), "Content-Length").toBe(encoder.encode(text).byteLength);

          // The model: attempts go on while the replica could not be reached, or answered 503, and attempts remain.
          const refusedAll = (s: Attempt) => s.kind === "refused" || (s.kind === "answers" && s.status === 503);
          let n = 0;
          let step: Attempt;
          do step = script[n++] as Attempt;
          while (refusedAll(step) && n < connectAttempts);
          expect(e.sent.map((s) => new URL(s.url).origin)).toEqual(replicas.slice(0, n).map((r) => new URL(r).origin));
          // How each attempt's slot is released: failed when nothing answered (or a gateway's 502), full on a 503
          // or the replica's own 429, not failed otherwise.
          const releasedAs = (a: Attempt) =>
            a.kind !== "answers" || a.status === 502 || ((a.status === 503 || a.status === 429) && "full");
          const expectedReleases = e.tickets.map(({ ticket }, i) => [ticket, releasedAs(script[i] as Attempt)]);
          expect(e.tickets).toHaveLength(n);
          expect([...e.releases].sort()).toEqual(expectedReleases.sort());

          const error = () => (JSON.parse(text) as { error: { code: string } }).error.code;
          if (step.kind === "refused") {
            expect(res.status).toBe(502);
            expect(error()).toBe("bad_gateway");
          } else if (step.kind === "hangs" || step.kind === "sse_hangs") {
            expect(res.status).toBe(504);
            expect(error()).toBe("upstream_timeout");
          } else if (step.kind === "json_cut") {
            expect(res.status).toBe(502);
            expect(error()).toBe("upstream_failed");
          } else if (step.kind === "sse_cut") {
            expect(res.status).toBe(200);
            expect(text).toBe(step.before.join("") + STREAM_ERROR);
          } else {
            expect(res.status).toBe(step.status);
            expect(res.headers.get("retry-after")).toBe("3");
            expect(text).toBe(`answer ${step.status}`);
          }
          const replica = replicas[n - 1] as string;
          expect(logged(log, "spillway.upstream_timeout"), "upstream_timeout lines").toEqual(
            step.kind === "hangs" || step.kind === "sse_hangs"
              ? [
                  {
                    event: "spillway.upstream_timeout",
                    deployment: "m",
                    replica,
                    path: "/v1/completions",
                    waitedFor: step.kind === "hangs" ? "headers" : "first_event",
                    timeoutS: 0.01,
                  },
                ]
              : [],
          );
        },
      ),
      { ...runs, numRuns: Math.ceil(runs.numRuns / 2) },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// A replica that goes silent after its headers

const IDLE_STREAM_ERROR = `data: ${JSON.stringify({
  error: { message: "the replica went silent mid-stream", type: "server_error", param: null, code: "upstream_timeout" },
})}\n\ndata: [DONE]\n\n`;

/** The edge's JSON log lines of `event`, from a console.log spy. */
function logged(spy: { mock: { calls: unknown[][] } }, event: string): Record<string, unknown>[] {
  return spy.mock.calls
    .map((args) => {
      try {
        return JSON.parse(String(args[0])) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((line) => line.event === event);
}

describe("a replica that goes silent after its headers (upstreamIdleTimeoutS)", () => {
  it("a stream silent after its first events: the client's stream ends with an upstream_timeout error event, the replica's body is cancelled, the slot released as failed, one line logged", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sseEvent, { minLength: 1, maxLength: 3 }), async (events) => {
        const log = vi.spyOn(console, "log").mockImplementation(() => {});
        let cancelled = false;
        const backend: Backend = async () =>
          new Response(
            stallingBody(events, () => {
              cancelled = true;
            }),
            { headers: { "content-type": "text/event-stream" } },
          );
        const e = edge({ replicas: ["https://gpu.example"], backend, upstreamIdleTimeoutS: 0.01 });
        const res = await within(
          e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", true))),
          2000,
          "response headers",
        );
        expect(res.status).toBe(200);
        // Before: no deadline after the first event, and the stream never ended.
        const text = await within(res.text(), 2000, "the end of the stream");
        expect(text).toBe(events.join("") + IDLE_STREAM_ERROR);
        await e.settled();
        expect(e.releases).toEqual([[e.tickets[0]?.ticket, true]]);
        expect(cancelled).toBe(true);
        expect(logged(log, "spillway.upstream_idle_timeout")).toEqual([
          {
            event: "spillway.upstream_idle_timeout",
            deployment: "m",
            replica: "https://gpu.example",
            path: "/v1/chat/completions",
            stream: true,
            idleTimeoutS: 0.01,
          },
        ]);
        log.mockRestore();
      }),
      { ...runs, numRuns: 20 },
    );
  });

  it("an answer not streamed, silent after its headers (and part of its body): 504 upstream_timeout, the replica's request aborted, the slot released as failed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('{"id":"x",', '"choices":[', ""), { maxLength: 2 }), async (parts) => {
        const log = vi.spyOn(console, "log").mockImplementation(() => {});
        let cancelled = false;
        // Read whole under one deadline, such a body is not cancelled by its reader but by aborting its fetch,
        // which closes the replica's connection (test/edge/faults.test.ts shows the engine's side).
        const backend: Backend = async (sent) => {
          sent.signal.addEventListener("abort", () => {
            cancelled = true;
          });
          return new Response(
            stallingBody(parts, () => {
              cancelled = true;
            }),
            { headers: { "content-type": "application/json" } },
          );
        };
        const e = edge({ replicas: ["https://gpu.example"], backend, upstreamIdleTimeoutS: 0.01 });
        // Before: the edge read the body to its end, which never came.
        const res = await within(
          e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false))),
          2000,
          "an answer",
        );
        expect(res.status).toBe(504);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_timeout");
        await e.settled();
        expect(e.releases).toEqual([[e.tickets[0]?.ticket, true]]);
        expect(cancelled).toBe(true);
        expect(logged(log, "spillway.upstream_idle_timeout")).toMatchObject([{ stream: false, idleTimeoutS: 0.01 }]);
        log.mockRestore();
      }),
      { ...runs, numRuns: 20 },
    );
  });

  it("a stream of many events arms a timer or two, not one a chunk (a timer a chunk cost the admitted path)", async () => {
    const events = Array.from({ length: 200 }, (_, i) => `data: {"i":${i}}\n\n`);
    const backend: Backend = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            const next = events.shift();
            if (next === undefined) controller.close();
            else controller.enqueue(encoder.encode(next));
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    const e = edge({ replicas: ["https://gpu.example"], backend, upstreamIdleTimeoutS: 60 });
    const timers = vi.spyOn(globalThis, "setTimeout");
    const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", true)));
    const text = await res.text();
    await e.settled();
    const armed = timers.mock.calls.filter(([, ms]) => ms === 60_000).length;
    timers.mockRestore();
    expect(text.split("\n\n").filter(Boolean)).toHaveLength(200);
    // The headers' deadline and the stream's (both 60 s here). Before: one more for each read after the first event.
    expect(armed).toBeLessThanOrEqual(2);
  });

  it("a client that leaves while an answer not streamed is read: the replica's request is aborted and the slot released, not failed", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    let aborted = false;
    const backend: Backend = async (sent) => {
      sent.signal.addEventListener("abort", () => {
        aborted = true;
      });
      return new Response(
        stallingBody(['{"id":"x",'], () => {}),
        { headers: { "content-type": "application/json" } },
      );
    };
    // A long idle deadline: only the client's leaving can end the read.
    const e = edge({ replicas: ["https://gpu.example"], backend, upstreamIdleTimeoutS: 60 });
    const client = new AbortController();
    const answer = e.fetch(
      clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false), client.signal),
    );
    for (let i = 0; i < 200 && e.tickets.length === 0; i++) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setTimeout(r, 20));
    client.abort();
    // Before: the abort listener was gone once the headers came, so the read waited for the idle deadline.
    await within(answer, 2000, "the request to end").catch(() => {});
    await within(e.settled(), 2000, "the slot's release");
    expect(aborted).toBe(true);
    expect(e.releases).toEqual([[e.tickets[0]?.ticket, false]]);
    expect(logged(log, "spillway.upstream_idle_timeout")).toEqual([]);
    log.mockRestore();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// A client that leaves

/** When the client leaves: before the call, as it returns (signing), after some microtasks, or after a timer. */
type Leave = { at: "before" | "sync" } | { at: "ticks"; n: number } | { at: "timer" };
const leave: fc.Arbitrary<Leave> = fc.oneof(
  fc.constantFrom<Leave>({ at: "before" }, { at: "sync" }, { at: "timer" }),
  fc.nat(40).map((n): Leave => ({ at: "ticks", n })),
);

describe("a client that leaves", () => {
  it("before the replica's headers: forwardToReplica ends as client_gone and the replica's request is aborted, whenever it leaves", async () => {
    await fc.assert(
      fc.asyncProperty(leave, signingSecret, async (when, secret) => {
        const calls: AbortSignal[] = [];
        vi.stubGlobal("fetch", (_url: string, init: RequestInit) => {
          const signal = init.signal as AbortSignal;
          calls.push(signal);
          // The replica answers nothing until the request is aborted.
          return new Promise<Response>((_, reject) => {
            if (signal.aborted) reject(new DOMException("aborted", "AbortError"));
            signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
          });
        });
        const client = new AbortController();
        if (when.at === "before") client.abort();
        const outcome: Promise<ForwardOutcome> = forwardToReplica({
          replica: "https://gpu.example",
          pathAndSearch: "/v1/chat/completions",
          headers: new Headers(),
          body: encoder.encode("{}"),
          deployment: "m",
          signingSecret: secret,
          // Deadlines far beyond the test's bound below: only the client's leaving can end it in time.
          headersTimeoutMs: 60_000,
          idleTimeoutMs: 60_000,
          clientSignal: client.signal,
        });
        if (when.at === "sync") client.abort();
        if (when.at === "ticks") {
          for (let i = 0; i < when.n; i++) await Promise.resolve();
          client.abort();
        }
        if (when.at === "timer") {
          await new Promise((r) => setTimeout(r, 1));
          client.abort();
        }
        // At the client's leaving, not at the headers deadline (a minute away). Before, this compared the elapsed
        // wall-clock time with 250 ms against a 300 ms deadline: a loaded machine could fail it.
        expect(await within(outcome, 10_000, "client_gone")).toEqual({ kind: "client_gone" });
        for (const signal of calls) expect(signal.aborted).toBe(true);
      }),
      runs,
    );
  });

  it("mid-stream: the replica's body is cancelled and the slot released once, not failed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sseEvent, { minLength: 1, maxLength: 3 }), async (events) => {
        let cancelled = false;
        const backend: Backend = async () => {
          let i = 0;
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              const next = events[i++];
              // After its events the replica keeps the stream open (a long generation).
              if (next !== undefined) controller.enqueue(encoder.encode(next));
              else return new Promise(() => {});
            },
            cancel() {
              cancelled = true;
            },
          });
          return new Response(stream, { headers: { "content-type": "text/event-stream" } });
        };
        const e = edge({ replicas: ["https://gpu.example"], backend });
        const client = new AbortController();
        const res = await within(
          e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", true), client.signal)),
          500,
          "response headers",
        );
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const first = await within(reader.read(), 500, "the first event");
        expect(decoder.decode(first.value)).toBe(events[0]);
        client.abort();
        await reader.cancel();
        await e.settled();
        for (let i = 0; i < 200 && !cancelled; i++) await new Promise((r) => setTimeout(r, 1));
        expect(cancelled).toBe(true);
        expect(e.releases).toEqual([[e.tickets[0]?.ticket, false]]);
      }),
      { ...runs, numRuns: 30 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Regressions: one example per bug the properties found

describe("regressions", () => {
  const ok: Backend = async () => new Response("{}", { headers: { "content-type": "application/json" } });

  it("the path reaches the replica as the client's URL has it: %5C, %2E and %0A are not decoded into a traversal or dropped", async () => {
    // Hono's `c.req.path` is percent-decoded: `%5C..%5C` became `\..\`, which the replica's URL read as `/../`,
    // escaping the replica's base path (`https://gpu.example/llama/v1/a\..\..\..\admin` is `https://gpu.example/admin`).
    const e = edge({ replicas: ["https://gpu.example/llama"], backend: ok });
    const res = await e.fetch(
      clientRequest("http://edge/v1/a%5C..%5C..%5C..%5Cadmin?x=%5C&x=1", [], requestBody("hi", false)),
    );
    expect(res.status).toBe(200);
    const e2 = edge({ replicas: ["https://gpu.example"], backend: ok });
    await e2.fetch(clientRequest("http://edge/v1/chat%2Ecomp%0Aletions%41", [], requestBody("hi", false)));
    expect([e.sent[0]?.url, e2.sent[0]?.url]).toEqual([
      "https://gpu.example/llama/v1/a%5C..%5C..%5C..%5Cadmin?x=%5C&x=1",
      "https://gpu.example/v1/chat%2Ecomp%0Aletions%41",
    ]);
  });

  it("a replica's hop-by-hop response headers, and those its Connection names, do not reach the client", async () => {
    const backend: Backend = async () =>
      new Response("{}", {
        status: 503,
        headers: {
          "content-type": "application/json",
          connection: "close, X-Trace",
          "x-trace": "t1",
          "keep-alive": "timeout=5",
          "transfer-encoding": "chunked",
          upgrade: "h2c",
          trailer: "x-checksum",
          "proxy-authenticate": "Basic",
          "retry-after": "7",
        },
      });
    const e = edge({ replicas: ["https://gpu.example"], backend });
    const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false)));
    expect(res.status).toBe(503);
    expect([...res.headers.keys()]).toEqual(["content-type", "retry-after"]);
    expect(res.headers.get("retry-after")).toBe("7");
  });

  it("an SSE answer whose Content-Type is not lower case streams (media types are case-insensitive)", async () => {
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const backend: Backend = async () => {
      let i = 0;
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (i++ === 0) return controller.enqueue(encoder.encode("data: 1\n\n"));
          await gate;
          controller.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "Text/Event-Stream; charset=UTF-8" } });
    };
    const e = edge({ replicas: ["https://gpu.example"], backend });
    try {
      const res = await within(
        e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", true))),
        1000,
        "response headers before the stream ends",
      );
      const first = await (res.body as ReadableStream<Uint8Array>).getReader().read();
      expect(decoder.decode(first.value)).toBe("data: 1\n\n");
    } finally {
      openGate();
    }
  });

  it("an SSE answer cut mid-stream carries no Content-Length of the replica's: its body ends with spillway's error event", async () => {
    const backend: Backend = async () =>
      new Response(cutStream(["data: 1\n\n"]), {
        headers: { "content-type": "text/event-stream", "content-length": "100" },
      });
    const e = edge({ replicas: ["https://gpu.example"], backend });
    const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", true)));
    expect(await res.text()).toBe(`data: 1\n\n${STREAM_ERROR}`);
    expect(res.headers.get("content-length")).toBeNull();
  });

  it("no Proxy-* request header reaches the replica", async () => {
    const e = edge({ replicas: ["https://gpu.example"], backend: ok });
    const headers: [string, string][] = [
      ["Proxy-Foo", "1"],
      ["proxy-status", "x"],
      ["x-kept", "yes"],
    ];
    await e.fetch(clientRequest("http://edge/v1/chat/completions", headers, requestBody("hi", false)));
    expect([...(e.sent[0] as Sent).headers.keys()].filter((n) => n.startsWith("proxy-") || n === "x-kept")).toEqual([
      "x-kept",
    ]);
  });

  it("a replica's redirect is not followed: the signed request and the upstream key stay with the configured replicas, the request tries the next one, the redirecting one is released as failed", async () => {
    const redirecting: Backend = async (sent) =>
      sent.url.startsWith("https://gpu-a.example")
        ? new Response(null, { status: 308, headers: { location: "https://elsewhere.example/v1/chat/completions" } })
        : ok(sent, 0);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const e = edge({
      replicas: ["https://gpu-a.example", "https://gpu-b.example"],
      backend: redirecting,
      apiKey: "upstream-key",
      secret: "s3cret",
    });
    const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false)));
    expect(res.status).toBe(200);
    expect(e.sent.map((s) => new URL(s.url).host)).toEqual(["gpu-a.example", "gpu-b.example"]);
    await e.settled();
    expect(e.releases).toContainEqual([e.tickets[0]?.ticket, true]);

    // The reason is logged by the Worker, not only by a probe (which a `load: "none"` replica never gets).
    expect(logged(log, "spillway.replica_unreachable")).toEqual([
      {
        event: "spillway.replica_unreachable",
        deployment: "m",
        replica: "https://gpu-a.example",
        attempt: 1,
        message:
          "the replica answered 308 (to https://elsewhere.example/v1/chat/completions): spillway follows no redirect; configure the replica's final URL",
      },
    ]);
    log.mockRestore();

    const only = edge({ replicas: ["https://gpu-a.example"], backend: redirecting, connectAttempts: 1 });
    const refused = await only.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false)));
    expect(refused.status).toBe(502);
    expect(only.sent.map((s) => new URL(s.url).host)).toEqual(["gpu-a.example"]);
  });

  // Before: the line carried the replica's URL and its redirect's Location as written, the gateway's key in both.
  it("a replica whose URL carries a gateway's key: the request goes with the key, its log line shows it redacted, the redirect's Location too", async () => {
    const keyed = "https://gpu-a.example/llama?key=sk-forward";
    const backend: Backend = async (sent) =>
      sent.url.startsWith("https://gpu-a.example")
        ? new Response(null, {
            status: 308,
            headers: { location: "https://gpu-a.example/llama/v1/chat/completions?key=sk-forward" },
          })
        : ok(sent, 0);
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const e = edge({ replicas: [keyed, "https://gpu-b.example"], backend });
    const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false)));
    expect(res.status).toBe(200);
    expect(e.sent[0]?.url).toBe("https://gpu-a.example/llama/v1/chat/completions?key=sk-forward");
    expect(logged(log, "spillway.replica_unreachable")).toEqual([
      expect.objectContaining({
        replica: "https://gpu-a.example/llama?key=redacted",
        message: expect.stringContaining("(to https://gpu-a.example/llama/v1/chat/completions?key=redacted)"),
      }),
    ]);
    expect(log.mock.calls.map((args) => String(args[0])).filter((line) => line.includes("sk-forward"))).toEqual([]);
    log.mockRestore();
  });

  it("a replica's 503 is released as full where a probe will read it, as failed where none will (load: none)", async () => {
    const backend: Backend = async (sent) =>
      sent.url.startsWith("https://gpu-a.example") ? new Response("{}", { status: 503 }) : ok(sent, 0);
    for (const load of ["spillway", "none"] as const) {
      const e = edge({ replicas: ["https://gpu-a.example", "https://gpu-b.example"], backend, load });
      const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", false)));
      expect(res.status).toBe(200);
      await e.settled();
      // Nothing would ever mark an unprobed replica down: a draining one would take every request for good.
      expect(e.releases).toContainEqual([e.tickets[0]?.ticket, load === "none" ? true : "full"]);
    }
  });

  it("a replica's 503 whose stream fails at once still moves the request to the next replica (its cancel rejects)", async () => {
    const backend: Backend = async (sent) =>
      sent.url.startsWith("https://gpu-a.example")
        ? new Response(new ReadableStream({ pull: (c) => c.error(new Error("reset")) }), {
            status: 503,
            headers: { "content-type": "text/event-stream" },
          })
        : ok(sent, 0);
    const e = edge({ replicas: ["https://gpu-a.example", "https://gpu-b.example"], backend });
    const res = await e.fetch(clientRequest("http://edge/v1/chat/completions", [], requestBody("hi", true)));
    expect(res.status).toBe(200);
    expect(e.sent.map((s) => new URL(s.url).host)).toEqual(["gpu-a.example", "gpu-b.example"]);
  });

  it("no client API key reaches the replica, in whichever header the client sent it (Authorization, api-key, x-api-key)", async () => {
    const e = edge({ replicas: ["https://gpu.example"], backend: ok });
    const headers: [string, string][] = [
      ["Authorization", "Bearer sk-client"],
      ["api-key", "sk-azure-style"],
      ["X-Api-Key", "sk-anthropic-style"],
      ["x-kept", "yes"],
    ];
    await e.fetch(clientRequest("http://edge/v1/chat/completions", headers, requestBody("hi", false)));
    const sent = (e.sent[0] as Sent).headers;
    expect([...sent.values()].filter((v) => v.includes("sk-"))).toEqual([]);
    expect(sent.get("x-kept")).toBe("yes");
  });

  it("a client that leaves while the request is being signed: client_gone, and the replica's request aborted", async () => {
    for (const [secret, leaveBefore] of [
      ["s3cret", false],
      ["s3cret", true],
      [undefined, true],
    ] as const) {
      const signals: AbortSignal[] = [];
      // The replica answers at once, unless the request was aborted before it went out (as fetch does).
      vi.stubGlobal("fetch", async (_url: string, init: RequestInit) => {
        signals.push(init.signal as AbortSignal);
        if (init.signal?.aborted) throw new DOMException("aborted", "AbortError");
        return new Response("{}");
      });
      const client = new AbortController();
      if (leaveBefore) client.abort();
      const outcome = forwardToReplica({
        replica: "https://gpu.example",
        pathAndSearch: "/v1/chat/completions",
        headers: new Headers(),
        body: encoder.encode("{}"),
        deployment: "m",
        signingSecret: secret,
        headersTimeoutMs: 60_000,
        idleTimeoutMs: 60_000,
        clientSignal: client.signal,
      });
      client.abort();
      expect(await outcome, `secret ${secret}, left before the call: ${leaveBefore}`).toEqual({ kind: "client_gone" });
      expect(signals.every((s) => s.aborted)).toBe(true);
      vi.unstubAllGlobals();
    }
  });
});
