import fc from "fast-check";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { requestFingerprint } from "../../src/core/request-fingerprint";
import { spillway } from "../../src/edge/middleware";
import { propertyRuns } from "../support/property-runs";

/**
 * The fingerprint the edge gives a request (what `spillway()` sends its router with `acquire`) is the one it gave
 * before it kept the body as bytes: `requestFingerprint` over the body's text as the edge decoded it (strict UTF-8, a
 * leading BOM dropped). A router holding promises keyed by the old fingerprints must know the same retries after a
 * deploy. Driven through the real middleware inside workerd (a fake router namespace that records each `acquire` and
 * admits it, a fake `fetch` for the replica), for any request-shaped JSON: non-ASCII text (astral characters
 * included), raw or `\u`-escaped, any indentation and trailing whitespace, with and without a BOM, read whole
 * (Content-Length) or chunk by chunk (a stream), with and without a credential. Two fingerprints computed by the
 * edge before the change are pinned as well.
 */

const runs = propertyRuns(150, 20261206);
const encoder = new TextEncoder();

/** Fields the edge reads: extra fields must not make the request one it refuses. */
const READ = new Set(["model", "messages", "stream", "max_tokens", "max_completion_tokens", "service_tier"]);
const text = fc.oneof(fc.string({ unit: "grapheme", maxLength: 24 }), fc.string({ unit: "binary", maxLength: 12 }));
const extra = fc.dictionary(
  text.filter((key) => !READ.has(key) && key !== "__proto__"),
  fc.jsonValue({ maxDepth: 2, stringUnit: "grapheme" }),
  { maxKeys: 3 },
);
const requestJson = fc
  .record({
    extra,
    content: text,
    indent: fc.constantFrom<undefined | number | string>(undefined, 1, "\t"),
    escaped: fc.boolean(),
  })
  .map(({ extra, content, indent, escaped }) => {
    const json = JSON.stringify({ ...extra, model: "m", messages: [{ role: "user", content }] }, null, indent);
    // JSON.stringify writes non-ASCII only inside strings: escaping each UTF-16 unit there is the same JSON.
    return escaped
      ? json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      : json;
  });
const bodyBytes = fc
  .tuple(requestJson, fc.boolean(), fc.constantFrom("", " ", "\n", "\r\n\t "))
  .map(([json, bom, pad]) => encoder.encode(`${bom ? "\uFEFF" : ""}${json}${pad}`));
const authorization = fc.option(fc.stringMatching(/^Bearer [A-Za-z0-9._~+/-]{1,24}$/), { nil: undefined });

/** The edge with a router that records what it is asked and admits everything, and a replica that answers 200. */
function edge(options: Parameters<typeof spillway>[0] = {}) {
  const fingerprints: string[] = [];
  const stub = {
    acquire: async (_deployment: string, _shard: number, _ticket: string, submit: { fingerprint: string }) => {
      fingerprints.push(submit.fingerprint);
      return { kind: "admitted", replica: "https://gpu.example" };
    },
    cancel: async () => undefined,
    releaseAll: async () => undefined,
  };
  const app = new Hono();
  app.post("/*", spillway({ ...options, routers: () => ({ getByName: () => stub }) as never }) as never);
  const env = {
    SPILLWAY_CONFIG: JSON.stringify({
      logRejections: false,
      deployments: { m: { replicas: ["https://gpu.example"] } },
    }),
  };
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  vi.stubGlobal("fetch", async () => new Response('{"ok":true}', { headers: { "content-type": "application/json" } }));
  return {
    fingerprints,
    /** The response, read to its end, once every `waitUntil` the request left has settled. */
    send: async (request: Request) => {
      const res = (await app.fetch(request, env, ctx as never)) as Response;
      const body = await res.text();
      for (let i = 0; i < pending.length; i++) await pending[i];
      return { status: res.status, body };
    },
  };
}

/** `bytes` as a stream of chunks cut at `cuts` (no Content-Length: the edge reads it chunk by chunk). */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.byteLength]) {
    chunks.push(bytes.slice(from, p));
    from = p;
  }
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

function post(path: string, bytes: Uint8Array, auth: string | undefined, stream?: number[]): Request {
  const headers = new Headers({ "content-type": "application/json" });
  if (auth !== undefined) headers.set("authorization", auth);
  return new Request(`http://edge.example${path}`, {
    method: "POST",
    headers,
    body: stream === undefined ? bytes : chunked(bytes, stream),
  });
}

/** One chat request, the same bytes from every client of the tests below. */
const SAME_QUESTION = encoder.encode('{"model":"m","messages":[{"role":"user","content":"the same question"}]}');

/** The fingerprint the edge (with `options`) gives {@link SAME_QUESTION} sent with `headers`. */
async function fingerprintOfSameQuestion(
  headers: Record<string, string>,
  options: Parameters<typeof spillway>[0] = {},
): Promise<string> {
  const e = edge(options);
  const request = new Request("http://edge.example/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: SAME_QUESTION,
  });
  expect((await e.send(request)).status).toBe(200);
  return e.fingerprints[0] as string;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the request fingerprint", () => {
  it("is requestFingerprint over the text the edge decoded, for any JSON body (non-ASCII, with or without a BOM)", async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyBytes,
        authorization,
        fc.constantFrom("/v1/chat/completions", "/v1/chat/completions?x=%C3%A9&y"),
        fc.option(fc.array(fc.nat(), { maxLength: 4 }), { nil: undefined }),
        async (bytes, auth, path, stream) => {
          const e = edge();
          const res = await e.send(post(path, bytes, auth, stream));
          expect(res.status, res.body).toBe(200);
          // The text as the edge read it before it kept bytes: strict UTF-8, a leading BOM dropped.
          const oldText = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
          const old = await requestFingerprint({ authorization: auth, method: "POST", path, body: oldText });
          expect(e.fingerprints).toEqual([old]);
        },
      ),
      runs,
    );
  });

  it("is the fingerprint the edge gave before it kept bytes (pinned)", async () => {
    const ascii = '{"model":"m","messages":[{"role":"user","content":"hi"}]}';
    const wide = '{"model":"m","messages":[{"role":"user","content":"héllo, 世界 😀"}]}';
    const cases: [string, string | undefined, string][] = [
      [ascii, undefined, "f50fb1f526a0d2fabd1820fd1da62787900ef6b23adbc848f46e59dc9a6cb8a7"],
      [`\uFEFF${ascii}`, "Bearer sk-1", "d6f577dea41abc69ec9bf01b79161ea51c1c6ea01f28d6f9adf964e6b67b2b67"],
      [wide, undefined, "f36e2ce9cb8b7713581a3174329cfde9cccc4f4cce3e396c98c4d7221581aac9"],
      [`\uFEFF${wide}`, "Bearer sk-1", "ab9b913e3ab9d2c6884d4a33f8dcc6ad721f07f1c1f6257bffd4df5d2de7fd94"],
    ];
    for (const [body, auth, fingerprint] of cases) {
      const e = edge();
      const res = await e.send(post("/v1/chat/completions", encoder.encode(body), auth));
      expect(res.status, res.body).toBe(200);
      expect(e.fingerprints).toEqual([fingerprint]);
    }
  });

  it("covers the key of a client that sends it in api-key or x-api-key, so two such clients never share one", async () => {
    const body = SAME_QUESTION;
    const fingerprintOf = (headers: Record<string, string>) => fingerprintOfSameQuestion(headers);
    // Before: both keys were no credential at all, so the two clients had one fingerprint (one shard, and each the
    // key to the other's booked retry).
    const azureA = await fingerprintOf({ "api-key": "key-a" });
    const azureB = await fingerprintOf({ "api-key": "key-b" });
    expect(azureA).not.toBe(azureB);
    expect(await fingerprintOf({ "api-key": "key-a" })).toBe(azureA);
    const anthropicA = await fingerprintOf({ "x-api-key": "key-a" });
    expect(anthropicA).not.toBe(await fingerprintOf({ "x-api-key": "key-b" }));
    // The header is named: the same key in the other header, or with none, is another credential.
    expect(new Set([azureA, anthropicA, await fingerprintOf({})]).size).toBe(3);
    // With `Authorization` the fingerprint is the one it always was, whatever else the client sends.
    const bearer = await requestFingerprint({
      authorization: "Bearer sk-1",
      method: "POST",
      path: "/v1/chat/completions",
      body,
    });
    expect(await fingerprintOf({ authorization: "Bearer sk-1", "api-key": "key-a" })).toBe(bearer);
  });

  it("with the operator's tenantOf, covers the tenant it names, so two tenants never share one", async () => {
    // The operator's auth reads a header of its own, which the fingerprint does not know of.
    const tenantOf = (c: { req: { header(name: string): string | undefined } }) => {
      const customer = c.req.header("x-customer");
      return customer === undefined ? undefined : { name: `customer-${customer}` };
    };
    const fingerprintOf = (headers: Record<string, string>) =>
      fingerprintOfSameQuestion(headers, { tenantOf: tenantOf as never });
    // Before: neither request had a credential the fingerprint reads, so both tenants had one fingerprint.
    const a = await fingerprintOf({ "x-customer": "a" });
    expect(a).not.toBe(await fingerprintOf({ "x-customer": "b" }));
    expect(await fingerprintOf({ "x-customer": "a" })).toBe(a);
    // Tenants behind one shared bearer key (a gateway in front) are told apart the same way.
    const shared = { authorization: "Bearer gateway" };
    const sharedA = await fingerprintOf({ ...shared, "x-customer": "a" });
    expect(sharedA).not.toBe(await fingerprintOf({ ...shared, "x-customer": "b" }));
    expect(sharedA).not.toBe(a);
  });
});
