import fc from "fast-check";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { requestFingerprint, shardForFingerprint } from "../../../src/core/request-fingerprint";
import {
  ReplayGuard,
  SIGNATURE_HEADERS,
  type SignedParts,
  signRequest,
  verifyRequest,
} from "../../../src/core/request-signature";
import { signedGet } from "../../../src/edge/signed-get";
import { requireEdgeSignature } from "../../../src/engine/edge-signature";
import type { Logger } from "../../../src/engine/log-line";
import { propertyRuns } from "../../support/property-runs";

/**
 * The request identity code under arbitrary requests, keys and clocks: the edge's signature
 * (`src/core/request-signature.ts`), the engine's check of it (`src/engine/edge-signature.ts`), the probes' signed
 * GET (`src/edge/signed-get.ts`) and the request fingerprint (`src/core/request-fingerprint.ts`). Held:
 *
 * - a signature verifies for exactly the request it was made for: move any text between, or change, the method
 *   (up to case), the path and query, the body bytes, the deployment, the timestamp (up to its numeric value), the
 *   nonce, and it is refused as `invalid`: the string to sign is unambiguous over everything HTTP can carry (no
 *   field holds a line feed); `/é` and `/%C3%A9` are different paths; a string body signs as its UTF-8 bytes;
 * - the key: any of the accepted secrets verifies, any other secret is refused, no secret accepts nothing; the
 *   decision is `crypto.subtle.verify`'s (constant-time), one call per secret tried, current first;
 * - the window is exact to the millisecond: |now - timestamp| <= window is fresh, one more millisecond either way
 *   is `expired`;
 * - replays, with a clock that does not go back: a request is served iff its signature is valid, fresh and its
 *   nonce was never taken by a valid signature (a forged one takes none); the guard then holds exactly the nonces
 *   taken within twice the window;
 * - a missing header is `missing`; any header text at all is refused with a documented reason, never by throwing;
 * - the engine's middleware serves what the edge signs (path and query as the URL parser spells them, on both
 *   sides), once; every refusal is the same bare 401 with one warning line; `/health` and `/v1/models` are open,
 *   `/load` and `/metrics` are guarded iff asked; `signedGet`'s probe verifies at the engine for any path;
 * - the fingerprint is the same for every retry (method in any case, body as text or its bytes, no credential or
 *   an empty one) and differs whenever the credential (case and whitespace included), the upper-cased method, the
 *   path or the body bytes differ, including when text moves between them: for any text, line feeds and digits
 *   followed by `:` included, as its length prefixes promise; its shard is its first 32 bits modulo the shard count.
 *
 * Found: `verifyRequest` throws (`atob`) on a signature header of 4k+1 base64url characters instead of refusing it
 * as `malformed`, so the engine answers 500 and logs a stack, not the bare 401 the README promises; the three tests
 * that say so fail until `fromBase64Url` refuses such lengths.
 *
 * No real time (clocks are numbers; `signedGet` reads a faked `Date`), no network (`fetch` is stubbed; the engine is
 * a Hono app called in-process).
 */

const runs = propertyRuns(200, 20261205);
const encoder = new TextEncoder();

const bytesOf = (body: string | Uint8Array): Uint8Array => (typeof body === "string" ? encoder.encode(body) : body);
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
const headersOf = (record: Record<string, string>) => ({ get: (name: string) => record[name] ?? null });

/** Pieces of text that collide under careless joining: delimiters, digits, escapes, multi-byte characters. */
const piece = fc.constantFrom(
  "a",
  "B",
  "0",
  "7",
  "/",
  "?",
  "=",
  "&",
  "%",
  "%2F",
  "%C3%A9",
  "é",
  "🎉",
  ":",
  "3:",
  " ",
  "-",
  ".",
  "\t",
  "spillway-v1",
);
/** Text HTTP can carry in a header, a method or a URL: anything but a line feed (and no lone surrogate). */
const text = (maxPieces: number, minPieces = 0) =>
  fc.array(piece, { minLength: minPieces, maxLength: maxPieces }).map((p) => p.join(""));
const methodArb = fc.constantFrom("POST", "post", "GET", "PUT", "Post", "DELETE", "P", "OST");
const timestampArb = fc.integer({ min: 0, max: 2 ** 42 });
const bodyArb = fc.oneof(text(12), fc.uint8Array({ maxLength: 24 }));
const partsArb: fc.Arbitrary<SignedParts> = fc.record({
  method: methodArb,
  path: text(8).map((p) => `/${p}`),
  body: bodyArb,
  deployment: text(4),
  timestampMs: timestampArb,
  nonce: text(6, 1),
});
const secretArb = fc.string({ unit: fc.constantFrom(..."abcXYZ0129-_"), minLength: 1, maxLength: 12 });

/** The signed fields in the order they are joined; the timestamp as its header text, the body as text. */
type Fields = [method: string, path: string, deployment: string, timestamp: string, nonce: string, body: string];

/** Moves `k` code points from the end of field `i` to the start of field `j` (`i < j`), or back the other way. */
type Change =
  | { kind: "shift"; i: number; j: number; k: number; backward: boolean }
  | { kind: "replace"; field: number; value: string };
const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc
    .record({
      i: fc.integer({ min: 0, max: 5 }),
      j: fc.integer({ min: 0, max: 5 }),
      k: fc.integer({ min: 1, max: 6 }),
      backward: fc.boolean(),
    })
    .filter(({ i, j }) => i !== j)
    .map(({ i, j, k, backward }) => ({ kind: "shift" as const, i: Math.min(i, j), j: Math.max(i, j), k, backward })),
  fc
    .oneof(
      methodArb.map((value) => ({ field: 0, value })),
      text(8).map((value) => ({ field: 1, value: `/${value}` })),
      text(4).map((value) => ({ field: 2, value })),
      fc.oneof(timestampArb.map(String), fc.constantFrom("0", "00", "1e3", "")).map((value) => ({ field: 3, value })),
      text(6).map((value) => ({ field: 4, value })),
      text(12).map((value) => ({ field: 5, value })),
    )
    .map((r) => ({ kind: "replace" as const, ...r })),
);

function applyChange(fields: Fields, change: Change): Fields {
  const out = [...fields] as Fields;
  if (change.kind === "replace") {
    out[change.field] = change.value;
    return out;
  }
  const from = Array.from(out[change.i] ?? "");
  const to = Array.from(out[change.j] ?? "");
  if (change.backward) {
    const moved = to.splice(0, change.k);
    from.push(...moved);
  } else {
    const moved = from.splice(Math.max(0, from.length - change.k));
    to.unshift(...moved);
  }
  out[change.i] = from.join("");
  out[change.j] = to.join("");
  return out;
}

const wellFormedTimestamp = (t: string) => /^\d{1,16}$/.test(t);

describe("request signatures: a signature verifies for exactly its request", () => {
  it("refuses every request that differs in a signed part, including text moved between parts", async () => {
    await fc.assert(
      fc.asyncProperty(partsArb, changeArb, async (p, change) => {
        const headers = await signRequest("secret", p);
        // The body as text: a byte body keeps its bytes when only another field changes.
        const bodyText = typeof p.body === "string" ? p.body : undefined;
        const fields: Fields = [p.method, p.path, p.deployment, String(p.timestampMs), p.nonce, bodyText ?? ""];
        const q = applyChange(fields, change);
        const qBody = bodyText === undefined && q[5] === "" ? p.body : q[5];
        // The verifier's clock sits on the changed timestamp: only the MAC may refuse.
        const now = wellFormedTimestamp(q[3]) ? Number(q[3]) : p.timestampMs;
        const result = await verifyRequest(
          ["secret"],
          headersOf({
            ...headers,
            [SIGNATURE_HEADERS.deployment]: q[2],
            [SIGNATURE_HEADERS.timestamp]: q[3],
            [SIGNATURE_HEADERS.nonce]: q[4],
          }),
          { method: q[0], path: q[1], body: qBody },
          now,
          new ReplayGuard(1_000),
          1_000,
        );
        const same =
          q[0].toUpperCase() === p.method.toUpperCase() &&
          q[1] === p.path &&
          q[2] === p.deployment &&
          wellFormedTimestamp(q[3]) &&
          Number(q[3]) === p.timestampMs &&
          q[4] === p.nonce &&
          sameBytes(bytesOf(qBody), bytesOf(p.body));
        if (same) expect(result).toEqual({ ok: true, deployment: p.deployment });
        else if (wellFormedTimestamp(q[3]) && q[4] !== "" && q[4].length <= 128)
          expect(result).toEqual({ ok: false, failure: "invalid" });
        else expect(result.ok).toBe(false);
      }),
      runs,
    );
  });

  it("refuses other body bytes, other query text and a percent-encoded spelling of the same path", async () => {
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.uint8Array({ maxLength: 24 }),
        fc.constantFrom("é", "日", "🎉", " ", "?", "&"),
        text(4),
        async (p, otherBody, char, query) => {
          const headers = await signRequest("secret", p);
          const check = (request: { method: string; path: string; body: string | Uint8Array }) =>
            verifyRequest(["secret"], headersOf(headers), request, p.timestampMs, new ReplayGuard(1_000), 1_000);
          const request = { method: p.method, path: p.path, body: p.body };
          if (!sameBytes(otherBody, bytesOf(p.body)))
            expect(await check({ ...request, body: otherBody })).toEqual({ ok: false, failure: "invalid" });
          // A string body and its UTF-8 bytes are the same body.
          expect(await check({ ...request, body: bytesOf(p.body) })).toEqual({ ok: true, deployment: p.deployment });
          const spelled = `${p.path}${char}`;
          const escaped = `${p.path}${encodeURIComponent(char)}`;
          const signed = await signRequest("secret", { ...p, path: spelled });
          const checkSigned = (path: string) =>
            verifyRequest(
              ["secret"],
              headersOf(signed),
              { ...request, path },
              p.timestampMs,
              new ReplayGuard(1_000),
              1_000,
            );
          expect(await checkSigned(escaped)).toEqual({ ok: false, failure: "invalid" });
          expect(await checkSigned(`${spelled}?${query}x`)).toEqual({ ok: false, failure: "invalid" });
          expect(await checkSigned(spelled)).toEqual({ ok: true, deployment: p.deployment });
        },
      ),
      runs,
    );
  });

  it("accepts any of the accepted secrets, current first, by crypto.subtle.verify alone; refuses any other", async () => {
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.uniqueArray(secretArb, { minLength: 0, maxLength: 3 }),
        secretArb,
        fc.nat(),
        fc.boolean(),
        async (p, secrets, stranger, pick, signWithAccepted) => {
          const signer = signWithAccepted && secrets.length > 0 ? (secrets[pick % secrets.length] as string) : stranger;
          const accepted = secrets.includes(signer);
          const headers = await signRequest(signer, p);
          const verify = vi.spyOn(crypto.subtle, "verify");
          const sign = vi.spyOn(crypto.subtle, "sign");
          try {
            const result = await verifyRequest(
              secrets,
              headersOf(headers),
              { method: p.method, path: p.path, body: p.body },
              p.timestampMs,
              new ReplayGuard(1_000),
              1_000,
            );
            expect(result).toEqual(
              accepted ? { ok: true, deployment: p.deployment } : { ok: false, failure: "invalid" },
            );
            // The constant-time primitive decides: one call per secret tried, in order, until one verifies.
            const tried = accepted ? secrets.indexOf(signer) + 1 : secrets.length;
            expect(verify).toHaveBeenCalledTimes(tried);
            for (const call of verify.mock.calls)
              expect([call[0], (call[2] as Uint8Array).byteLength]).toEqual(["HMAC", 32]);
            expect(sign).not.toHaveBeenCalled();
          } finally {
            verify.mockRestore();
            sign.mockRestore();
          }
        },
      ),
      runs,
    );
  });
});

describe("request signatures: time, replays and malformed headers", () => {
  it("is fresh exactly while |now - timestamp| <= window, to the millisecond", async () => {
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.integer({ min: -4_000_000, max: 4_000_000 }),
        async (p, windowMs, drawn) => {
          const headers = await signRequest("secret", p);
          const request = { method: p.method, path: p.path, body: p.body };
          for (const delta of [drawn, windowMs, -windowMs, windowMs + 1, -windowMs - 1, 0]) {
            const result = await verifyRequest(
              ["secret"],
              headersOf(headers),
              request,
              p.timestampMs + delta,
              new ReplayGuard(windowMs),
              windowMs,
            );
            expect(result).toEqual(
              Math.abs(delta) <= windowMs ? { ok: true, deployment: p.deployment } : { ok: false, failure: "expired" },
            );
          }
        },
      ),
      runs,
    );
  });

  type Step =
    | { kind: "wait"; ms: number }
    | { kind: "send"; skewMs: number }
    | { kind: "replay"; pick: number }
    | { kind: "forge"; skewMs: number };

  it("serves each signature once while fresh, never a replay; a forgery takes no nonce; the guard stays bounded", async () => {
    const windowMs = 1_000;
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("wait" as const), ms: fc.oneof(fc.integer({ min: 0, max: 700 }), fc.nat(5_000)) }),
      fc.record({ kind: fc.constant("send" as const), skewMs: fc.integer({ min: -1_300, max: 1_300 }) }),
      fc.record({ kind: fc.constant("replay" as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant("forge" as const), skewMs: fc.integer({ min: -1_300, max: 1_300 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40, size: "max" }), async (steps) => {
        let now = 50_000;
        let nextNonce = 0;
        const guard = new ReplayGuard(windowMs);
        const sent: { headers: Record<string, string>; timestampMs: number }[] = [];
        /** Nonce -> the engine time it was taken. */
        const taken = new Map<string, number>();
        const request = { method: "POST", path: "/v1/chat/completions", body: '{"model":"m"}' };
        const parts = (timestampMs: number, nonce: string): SignedParts => ({
          ...request,
          deployment: "m",
          timestampMs,
          nonce,
        });
        const deliver = (headers: Record<string, string>) =>
          verifyRequest(["secret"], headersOf(headers), request, now, guard, windowMs);
        for (const s of steps) {
          if (s.kind === "wait") now += s.ms;
          else if (s.kind === "forge") {
            // Signed with a wrong key, with the nonce the next genuine request will carry.
            const timestampMs = now + s.skewMs;
            const result = await deliver(await signRequest("guess", parts(timestampMs, `n${nextNonce}`)));
            expect(result).toEqual({
              ok: false,
              failure: Math.abs(s.skewMs) <= windowMs ? "invalid" : "expired",
            });
          } else {
            const captured =
              s.kind === "send"
                ? {
                    headers: await signRequest("secret", parts(now + s.skewMs, `n${nextNonce++}`)),
                    timestampMs: now + s.skewMs,
                  }
                : sent[s.pick % Math.max(1, sent.length)];
            if (captured === undefined) continue;
            if (s.kind === "send") sent.push(captured);
            const nonce = captured.headers[SIGNATURE_HEADERS.nonce] as string;
            const result = await deliver(captured.headers);
            if (Math.abs(now - captured.timestampMs) > windowMs)
              expect(result).toEqual({ ok: false, failure: "expired" });
            else if (taken.has(nonce)) expect(result).toEqual({ ok: false, failure: "replayed" });
            else {
              expect(result).toEqual({ ok: true, deployment: "m" });
              taken.set(nonce, now);
            }
            if (result.ok || result.failure === "replayed") {
              // Right after the guard ran: exactly the nonces taken within twice the window.
              const recent = [...taken.values()].filter((at) => now - at <= 2 * windowMs).length;
              expect(guard.size).toBe(recent);
            }
          }
        }
      }),
      runs,
    );
  });

  it("names a missing header `missing`, and refuses any header text with a documented reason, never by throwing", async () => {
    const base64url = fc.string({ unit: fc.constantFrom(..."AZaz09-_"), minLength: 1, maxLength: 60 });
    const anyText = fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: "binary", maxLength: 20 }));
    await fc.assert(
      fc.asyncProperty(
        partsArb,
        fc.subarray(Object.values(SIGNATURE_HEADERS), { minLength: 1 }),
        fc.record({
          timestamp: fc.oneof(anyText, timestampArb.map(String)),
          nonce: fc.oneof(anyText, fc.string({ minLength: 120, maxLength: 140 })),
          deployment: anyText,
          signature: fc.oneof(anyText, base64url),
        }),
        async (p, dropped, garbage) => {
          const headers = await signRequest("secret", p);
          const request = { method: p.method, path: p.path, body: p.body };
          const check = (record: Record<string, string>) =>
            verifyRequest(["secret"], headersOf(record), request, p.timestampMs, new ReplayGuard(1_000), 1_000);
          const without = Object.fromEntries(
            Object.entries(headers).filter(([name]) => !(dropped as string[]).includes(name)),
          );
          expect(await check(without)).toEqual({ ok: false, failure: "missing" });
          const forged = {
            [SIGNATURE_HEADERS.timestamp]: garbage.timestamp,
            [SIGNATURE_HEADERS.nonce]: garbage.nonce,
            [SIGNATURE_HEADERS.deployment]: garbage.deployment,
            [SIGNATURE_HEADERS.signature]: garbage.signature,
          };
          const result = await check(forged).catch((error: unknown) => ({ threw: String(error) }));
          expect(result).toMatchObject({ ok: false });
          expect(["missing", "malformed", "expired", "invalid"]).toContain((result as { failure?: string }).failure);
        },
      ),
      runs,
    );
  });

  // The property's minimal counterexample: `atob` throws on 4k+1 base64 characters, so verifyRequest rejects
  // (the engine answers 500 and logs a stack) instead of returning `malformed` (a bare 401).
  it("refuses a signature header of 4k+1 base64url characters as malformed, without throwing", async () => {
    const headers = await signRequest("secret", {
      method: "POST",
      path: "/",
      body: "",
      deployment: "",
      timestampMs: 0,
      nonce: "n",
    });
    const result = await verifyRequest(
      ["secret"],
      headersOf({ ...headers, [SIGNATURE_HEADERS.signature]: "A" }),
      { method: "POST", path: "/", body: "" },
      0,
      new ReplayGuard(1_000),
      1_000,
    ).catch((error: unknown) => ({ threw: String(error) }));
    expect(result).toEqual({ ok: false, failure: "malformed" });
  });
});

/** The engine's middleware in a Hono app called in-process, with its clock a number. */
function engine(secrets: readonly string[], windowMs: number, protectLoadAndMetrics: boolean) {
  const clock = { now: 0 };
  const warnings: string[] = [];
  const ignore = () => {};
  const logger: Logger = {
    debug: ignore,
    info: ignore,
    warning: (l) => warnings.push(l),
    error: (l) => warnings.push(l),
  };
  const app = new Hono();
  app.use(requireEdgeSignature({ secrets, windowMs, protectLoadAndMetrics, logger, now: () => clock.now }));
  app.all("*", async (c) => c.json({ served: await c.req.text() }));
  return { app, clock, warnings };
}

/** Header text a real request can carry: visible ASCII and inner spaces, trimmed. */
const headerText = fc.string({ unit: fc.constantFrom(..."azAZ09-_=+/ .:%"), maxLength: 50 }).map((t) => t.trim());

describe("the engine's middleware: serves what the edge signs, once", () => {
  it("serves a request the edge signed for any path and query, once; refuses replays and tampering alike", async () => {
    const rawPath = fc
      .array(
        fc.constantFrom("a", "/", "é", "日", "%", "%2F", "%41", " ", "..", ".", "?", "=", "&", "#", "\\", "+", "~"),
        { maxLength: 12 },
      )
      .map((p) => `/v1/${p.join("")}`);
    const tamper = fc.constantFrom("body", "path", "deployment", "timestamp", "nonce", "method");
    await fc.assert(
      fc.asyncProperty(
        rawPath,
        text(10),
        headerText,
        fc.integer({ min: -30_000, max: 30_000 }),
        tamper,
        async (pathAndSearch, body, deployment, skewMs, change) => {
          const { app, clock, warnings } = engine(["current", "previous"], 30_000, true);
          clock.now = 1_700_000_000_000;
          // As forward.ts: the URL it fetches, signed over that URL's own path and query.
          const url = `http://engine.test${pathAndSearch}`;
          const { pathname, search } = new URL(url);
          const headers = await signRequest("current", {
            method: "POST",
            path: pathname + search,
            body,
            deployment,
            timestampMs: clock.now + skewMs,
            nonce: crypto.randomUUID(),
          });
          const send = (h: Record<string, string>, init: { url?: string; body?: string; method?: string } = {}) =>
            app.request(init.url ?? url, {
              method: init.method ?? "POST",
              headers: h,
              ...((init.method ?? "POST") === "GET" ? {} : { body: init.body ?? body }),
            });
          const otherPath = new URL(url);
          otherPath.pathname = `${otherPath.pathname}x`;
          const tampered = {
            body: () => send(headers, { body: `${body}x` }),
            path: () => send(headers, { url: otherPath.href }),
            deployment: () => send({ ...headers, [SIGNATURE_HEADERS.deployment]: `${deployment}x` }),
            timestamp: () => send({ ...headers, [SIGNATURE_HEADERS.timestamp]: String(clock.now + skewMs + 1) }),
            nonce: () => send({ ...headers, [SIGNATURE_HEADERS.nonce]: crypto.randomUUID() }),
            method: () => send(headers, { method: "PUT" }),
          }[change];
          // The tampered request first: had it been served, it would also have taken the nonce.
          const refusals: Response[] = [await tampered()];
          const first = await send(headers);
          expect(first.status).toBe(200);
          expect(await first.json()).toEqual({ served: body });
          refusals.push(await send(headers), await send({}));
          const bodies = await Promise.all(refusals.map(async (r) => [r.status, await r.text()]));
          for (const b of bodies) expect(b).toEqual(bodies[0]);
          expect(bodies[0]?.[0]).toBe(401);
          expect(warnings).toHaveLength(refusals.length);
        },
      ),
      runs,
    );
  });

  it("answers any unsigned or garbage-signed request with the same bare 401, and keeps the open paths open", async () => {
    const base64url = fc.string({ unit: fc.constantFrom(..."AZaz09-_"), minLength: 1, maxLength: 60 });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/v1/chat/completions", "/v1/completions", "/load", "/metrics", "/health", "/v1/models"),
        fc.boolean(),
        fc.record(
          {
            timestamp: fc.oneof(headerText, timestampArb.map(String)),
            nonce: headerText,
            deployment: headerText,
            signature: fc.oneof(headerText, base64url),
          },
          { requiredKeys: [] },
        ),
        async (path, protect, garbage) => {
          const { app, clock } = engine(["secret"], 30_000, protect);
          clock.now = 1_000_000;
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(garbage))
            headers[SIGNATURE_HEADERS[name as keyof typeof SIGNATURE_HEADERS]] = value;
          const method = path === "/load" || path === "/metrics" || path === "/v1/models" ? "GET" : "POST";
          const res = await app.request(`http://engine.test${path}`, {
            method,
            headers,
            ...(method === "POST" ? { body: "{}" } : {}),
          });
          const open =
            path === "/health" || path === "/v1/models" || (!protect && (path === "/load" || path === "/metrics"));
          if (open) expect(res.status).toBe(200);
          else {
            const unsigned = await app.request(`http://engine.test${path}`, { method });
            expect(unsigned.status).toBe(401);
            expect([res.status, await res.text()]).toEqual([401, await unsigned.text()]);
          }
        },
      ),
      runs,
    );
  });
});

describe("signedGet: the probes' signature verifies at the engine", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it("signs a GET the engine serves, for any path and query, within the window; sends no signature without a secret", async () => {
    const rawPath = fc
      .array(fc.constantFrom("load", "metrics", "/", "é", "%", "%2F", " ", "..", "#", "a", "?", "=", "&"), {
        maxLength: 8,
      })
      .map((p) => `/${p.join("")}`);
    await fc.assert(
      fc.asyncProperty(
        rawPath,
        fc.constantFrom<string | undefined>("secret", undefined, ""),
        fc.integer({ min: 0, max: 2 ** 42 }),
        fc.integer({ min: -30_000, max: 30_000 }),
        async (path, secret, edgeNow, skewMs) => {
          vi.useFakeTimers({ toFake: ["Date"] });
          vi.setSystemTime(edgeNow);
          const sent: Request[] = [];
          vi.stubGlobal("fetch", async (input: string, init?: RequestInit) => {
            sent.push(new Request(input, init));
            return new Response("{}");
          });
          await signedGet(`http://replica.test${path}`, secret, new AbortController().signal, {
            authorization: "Bearer up",
          });
          vi.unstubAllGlobals();
          vi.useRealTimers();
          expect(sent).toHaveLength(1);
          const request = sent[0] as Request;
          expect(request.headers.get("authorization")).toBe("Bearer up");
          if (!secret) {
            for (const name of Object.values(SIGNATURE_HEADERS)) expect(request.headers.has(name)).toBe(false);
            return;
          }
          const { app, clock } = engine([secret], 30_000, true);
          clock.now = edgeNow + skewMs;
          const res = await app.request(request.url, { method: "GET", headers: request.headers });
          expect(res.status).toBe(200);
        },
      ),
      runs,
    );
  });
});

describe("request fingerprints", () => {
  interface Fp {
    authorization: string | undefined;
    method: string;
    path: string;
    body: string | Uint8Array;
  }
  /** The fingerprint promises its parts cannot be shifted for any text at all: line feeds included. */
  const anyText = (maxPieces: number) =>
    fc.array(fc.oneof(piece, fc.constantFrom("\n", "\n3:", "\r\n")), { maxLength: maxPieces }).map((p) => p.join(""));
  const credential = fc.oneof(
    fc.constant(undefined),
    anyText(6),
    fc.constantFrom("Bearer sk-a", "Bearer sk-A", "bearer sk-a", "Bearer  sk-a", "Bearer sk-a ", " Bearer sk-a"),
  );
  const fpArb: fc.Arbitrary<Fp> = fc.record({
    authorization: credential,
    method: methodArb,
    path: anyText(8).map((p) => `/${p}`),
    body: fc.oneof(anyText(12), fc.uint8Array({ maxLength: 24 })),
  });
  const key = (p: Fp) => [p.authorization ?? "", p.method.toUpperCase(), p.path] as const;
  const same = (a: Fp, b: Fp) => key(a).every((v, i) => v === key(b)[i]) && sameBytes(bytesOf(a.body), bytesOf(b.body));

  /** Moves text between two of the four parts, or changes one (a credential by case or whitespace too). */
  type FpChange =
    | { i: number; j: number; k: number; backward: boolean }
    | { field: number; value: string }
    | { tweak: "upper" | "lower" | "lead" | "trail" | "inner" };
  const fpChange: fc.Arbitrary<FpChange> = fc.oneof(
    fc
      .record({
        i: fc.integer({ min: 0, max: 3 }),
        j: fc.integer({ min: 0, max: 3 }),
        k: fc.integer({ min: 1, max: 6 }),
        backward: fc.boolean(),
      })
      .filter(({ i, j }) => i !== j),
    fc.record({ field: fc.integer({ min: 0, max: 3 }), value: anyText(8) }),
    fc.record({ tweak: fc.constantFrom("upper", "lower", "lead", "trail", "inner") }),
  );

  function changeFp(p: Fp, c: FpChange): Fp {
    const fields = [p.authorization ?? "", p.method, p.path, typeof p.body === "string" ? p.body : ""];
    const bodyKept = typeof p.body !== "string";
    if ("tweak" in c) {
      const a = p.authorization ?? "";
      const tweaked = {
        upper: a.toUpperCase(),
        lower: a.toLowerCase(),
        lead: ` ${a}`,
        trail: `${a} `,
        inner: a.replace(" ", "  "),
      }[c.tweak];
      return { ...p, authorization: tweaked };
    }
    if ("field" in c) {
      fields[c.field] = c.value;
    } else {
      const i = Math.min(c.i, c.j);
      const j = Math.max(c.i, c.j);
      const from = Array.from(fields[i] as string);
      const to = Array.from(fields[j] as string);
      if (c.backward) from.push(...to.splice(0, c.k));
      else to.unshift(...from.splice(Math.max(0, from.length - c.k)));
      fields[i] = from.join("");
      fields[j] = to.join("");
    }
    const [authorization, method, path, body] = fields as [string, string, string, string];
    return {
      authorization: authorization === "" && p.authorization === undefined ? undefined : authorization,
      method,
      path,
      body: bodyKept && body === "" ? p.body : body,
    };
  }

  it("is the same for every retry of a request: method in any case, body as text or bytes, no credential or ''", async () => {
    await fc.assert(
      fc.asyncProperty(fpArb, fc.boolean(), async (p, flipCase) => {
        const a = await requestFingerprint(p);
        expect(a).toMatch(/^[0-9a-f]{64}$/);
        const noCredential = p.authorization === undefined || p.authorization === "";
        const retry: Fp = {
          authorization: noCredential ? (flipCase ? "" : undefined) : p.authorization,
          method: flipCase ? p.method.toLowerCase() : p.method.toUpperCase(),
          path: p.path,
          body: typeof p.body === "string" ? encoder.encode(p.body) : p.body.slice(),
        };
        expect(await requestFingerprint(retry)).toBe(a);
      }),
      runs,
    );
  });

  it("differs whenever the credential, the method, the path or the body differ, text moved between them included", async () => {
    await fc.assert(
      fc.asyncProperty(fpArb, fpChange, async (p, change) => {
        const q = changeFp(p, change);
        const [a, b] = await Promise.all([requestFingerprint(p), requestFingerprint(q)]);
        expect(a === b).toBe(same(p, q));
      }),
      runs,
    );
  });

  it("picks the shard from its first 32 bits, always within the shard count", async () => {
    await fc.assert(
      fc.asyncProperty(fpArb, fc.integer({ min: -1, max: 64 }), async (p, shards) => {
        const fp = await requestFingerprint(p);
        const shard = shardForFingerprint(fp, shards);
        expect(shard).toBe(shards <= 1 ? 0 : Number.parseInt(fp.slice(0, 8), 16) % shards);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(Math.max(1, shards));
        expect(shardForFingerprint(await requestFingerprint({ ...p, method: p.method.toLowerCase() }), shards)).toBe(
          shard,
        );
      }),
      runs,
    );
  });
});
