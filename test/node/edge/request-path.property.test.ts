import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ReplayGuard, SIGNATURE_HEADERS, verifyRequest } from "../../../src/core/request-signature";
import type { DeploymentConfig } from "../../../src/edge/config";
import { forwardToReplica, upstreamHeaders } from "../../../src/edge/forward";
import { openAIError } from "../../../src/edge/openai-error";
import { readRequestBody } from "../../../src/edge/request-body";
import { isRetry } from "../../../src/edge/retry-count";
import { priorityOf } from "../../../src/edge/service-tier";
import type { TenantPlan } from "../../../src/edge/tenant-config";
import { MissingUpstreamSecretError, upstreamApiKey } from "../../../src/edge/upstream-credential";
import { propertyRuns } from "../../support/property-runs";

/**
 * The edge's request path, from what a client sends to what a replica receives, under arbitrary input.
 *
 * - Body: whatever the chunking and whatever Content-Length says (right, too small, too large, garbage, absent), a
 *   body over `maxBodyBytes` is refused with 413 and a body within it is either accepted with exactly the bytes
 *   sent (a leading UTF-8 BOM aside) or refused with 400; a right or absent Content-Length never turns a body within
 *   the limit into a 413. Bytes that are not UTF-8 JSON, JSON that is not an object and fields the edge reads with
 *   the wrong type (README, "What a client is answered") give a 400 naming the field, never a throw; everything
 *   else is accepted with its `model`, its completion budget (`max_tokens` on `/completions`, else
 *   `max_completion_tokens || max_tokens`), its completions (`n`, or `best_of` when larger) and `service_tier`.
 * - Headers: the forwarded set is the client's minus hop-by-hop ones (and those its Connection names), Host,
 *   Content-Length, Authorization, `cf-*` and `x-spillway-*`; everything else unchanged. With an upstream
 *   credential the replica sees `Bearer <secret>` and never the client's key; a named secret that is missing
 *   throws `MissingUpstreamSecretError` rather than letting the client's key through. Signed requests carry headers
 *   the engine's verifier accepts, over exactly the body and path sent.
 * - `x-stainless-retry-count` and `service_tier` parse totally to a documented value.
 * - Every error body is JSON with `error.message`, `type`, `param`, `code` as given, whatever the message text.
 */

const runs = propertyRuns(200, 20261205);
const encoder = new TextEncoder();

// ---------------------------------------------------------------------------------------------------------------
// Bodies

const field = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 53, 2 ** 53 - 1, 1e308, "", "x", true, null, [], {}),
  fc.string({ unit: "binary", maxLength: 8 }),
);
const message = fc.oneof(
  fc.record({ role: fc.constantFrom("user", "system"), content: fc.string({ maxLength: 6 }) }),
  fc.record({ role: field, content: field }, { requiredKeys: [] }),
  field,
);
const requestObject = fc.record(
  {
    model: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("m", "llama", 'é"\n') }, { weight: 1, arbitrary: field }),
    messages: fc.oneof(
      { weight: 3, arbitrary: fc.array(message, { minLength: 1, maxLength: 2 }) },
      { weight: 1, arbitrary: field },
    ),
    prompt: fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.array(fc.integer(), { maxLength: 2 })), {
        maxLength: 2,
      }),
      field,
    ),
    stream: fc.oneof(fc.boolean(), field),
    max_tokens: fc.oneof(fc.nat(4096), field),
    max_completion_tokens: fc.oneof(fc.nat(4096), field),
    n: fc.oneof(fc.integer({ min: 1, max: 8 }), field),
    best_of: fc.oneof(fc.integer({ min: 1, max: 8 }), field),
    service_tier: fc.oneof(fc.constantFrom("auto", "flex", "priority", "scale"), field),
    temperature: field,
  },
  { requiredKeys: [] },
);
/** Body bytes: request-shaped JSON (sometimes with a BOM or spaces), any JSON, any bytes, any text. */
const bodyBytes = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(requestObject, fc.boolean(), fc.nat(8))
      .map(([o, bom, pad]) => encoder.encode(`${bom ? "\uFEFF" : ""}${JSON.stringify(o)}${" ".repeat(pad)}`)),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => encoder.encode(JSON.stringify(v))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 32 }).map((s) => encoder.encode(s)) },
);
type LengthClaim = "right" | "absent" | "smaller" | "larger" | "garbage";
const lengthClaim = fc.constantFrom<LengthClaim>("right", "absent", "smaller", "larger", "garbage");
const garbageLength = fc.oneof(
  fc.constantFrom("", " ", "abc", "-1", "1e3", "0x10", "Infinity", "NaN", "12abc", "007"),
  fc.string({ unit: "grapheme-ascii", maxLength: 6 }).map((s) => s.replace(/[\r\n\0]/g, "")),
);

/** A stream giving `bytes` in the chunks `cuts` make (empty chunks included). */
function chunked(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.byteLength]) {
    chunks.push(bytes.slice(from, Math.max(from, p)));
    from = Math.max(from, p);
  }
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

/** The model of UTF-8 validity: decoding then encoding gives the bytes back (Buffer replaces what it cannot read). */
function utf8(bytes: Uint8Array): string | undefined {
  const text = Buffer.from(bytes).toString("utf8");
  return Buffer.from(text, "utf8").equals(Buffer.from(bytes)) ? text : undefined;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The fields the edge reads that are wrong in `o` for `path` (README's 400 row). */
function badFields(o: Record<string, unknown>, path: string): string[] {
  const bad: string[] = [];
  if (typeof o.model !== "string" || o.model === "") bad.push("model");
  // `null` is absent, as in OpenAI's API ("integer or null").
  if (o.stream != null && typeof o.stream !== "boolean") bad.push("stream");
  if (o.max_tokens != null && !isCount(o.max_tokens)) bad.push("max_tokens");
  if (o.max_completion_tokens != null && !isCount(o.max_completion_tokens)) bad.push("max_completion_tokens");
  if (o.n != null && !(isCount(o.n) && (o.n as number) >= 1)) bad.push("n");
  if (o.best_of != null && !(isCount(o.best_of) && (o.best_of as number) >= 1)) bad.push("best_of");
  if (path.endsWith("/chat/completions")) {
    const m = o.messages;
    if (!Array.isArray(m) || m.length === 0 || !m.every((x) => isPlainObject(x) && typeof x.role === "string"))
      bad.push("messages");
  } else if (path.endsWith("/completions")) {
    const p = o.prompt;
    const part = (x: unknown) =>
      typeof x === "string" || typeof x === "number" || (Array.isArray(x) && x.every((n) => typeof n === "number"));
    if (!(typeof p === "string" || (Array.isArray(p) && p.every(part)))) bad.push("prompt");
  }
  return bad;
}

describe("request bodies, under any size, chunking and Content-Length", () => {
  it("refuses over the limit with 413, reads within it exactly, and refuses malformed requests with a clean 400", async () => {
    await fc.assert(
      fc.asyncProperty(
        bodyBytes,
        fc.integer({ min: 0, max: 160 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        lengthClaim,
        garbageLength,
        fc.nat(40),
        fc.constantFrom("/v1/chat/completions", "/v1/completions", "/v1/embeddings"),
        fc.boolean(),
        async (bytes, maxBytes, cuts, claim, garbage, off, path, asStream) => {
          const size = bytes.byteLength;
          const contentLength =
            claim === "right"
              ? String(size)
              : claim === "smaller"
                ? String(Math.max(0, size - 1 - off))
                : claim === "larger"
                  ? String(size + 1 + off)
                  : claim === "garbage"
                    ? garbage
                    : undefined;
          const headers = new Headers({ "content-type": "application/json" });
          if (contentLength !== undefined) headers.set("content-length", contentLength);
          const request = new Request(`http://edge${path}`, {
            method: "POST",
            headers,
            body: asStream ? chunked(bytes, cuts) : bytes,
            duplex: "half",
          } as RequestInit);
          const result = await readRequestBody(request, path, maxBytes);

          if (size > maxBytes) {
            expect(result).toEqual({ status: 413, message: `request body exceeds ${maxBytes} bytes`, param: null });
            return;
          }
          if (claim === "right" || claim === "absent") expect("status" in result && result.status === 413).toBe(false);
          if ("status" in result && result.status === 413) return; // a claim over the limit, refused as claimed
          const raw = utf8(bytes);
          const text = raw?.startsWith("\uFEFF") ? raw.slice(1) : raw;
          let parsed: unknown;
          let json = text !== undefined;
          try {
            parsed = JSON.parse(text ?? "");
          } catch {
            json = false;
          }
          if (!json) {
            expect(result).toEqual({ status: 400, message: "request body is not valid JSON", param: null });
          } else if (!isPlainObject(parsed)) {
            expect(result).toEqual({ status: 400, message: "request body must be a JSON object", param: null });
          } else {
            const bad = badFields(parsed, path);
            if (bad.length > 0) {
              expect("status" in result, JSON.stringify(result)).toBe(true);
              if (!("status" in result)) return;
              expect(result.status).toBe(400);
              expect(typeof result.message).toBe("string");
              expect(result.message.length).toBeGreaterThan(0);
              expect(bad).toContain(String(result.param).split(".")[0]);
            } else {
              // The budget the engine runs with: `max_tokens` alone on a legacy completion; elsewhere
              // `max_completion_tokens or max_tokens`, as vLLM and SGLang read them (a 0 gives way).
              const maxTokens =
                (path === "/v1/completions" ? parsed.max_tokens : parsed.max_completion_tokens || parsed.max_tokens) ??
                undefined;
              // The bytes as sent, less a leading BOM (as the text lost it): no re-encoding can change them.
              const sentBytes = raw?.startsWith("\uFEFF") ? bytes.slice(3) : bytes;
              expect(result).toEqual({
                bytes: sentBytes,
                textLength: (text as string).length,
                model: parsed.model,
                ...(maxTokens !== undefined ? { maxTokens } : {}),
                // Each of `n` completions (`best_of` when larger) is generated in full.
                completions: Math.max((parsed.n as number | null) ?? 1, (parsed.best_of as number | null) ?? 1),
                serviceTier: parsed.service_tier,
              });
            }
          }
          // Whatever was refused is answered as a well-formed OpenAI error.
          if ("status" in result) {
            const res = openAIError(result.status, result.message, "invalid_request_error", null, {}, result.param);
            expect(res.status).toBe(400);
            expect(JSON.parse(await res.text())).toEqual({
              error: { message: result.message, type: "invalid_request_error", param: result.param, code: null },
            });
          }
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Headers

const HOP_BY_HOP = ["connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer"];
const tokenName = fc.stringMatching(/^[a-z0-9!#$%&'*+.^_`|~-]{1,10}$/);
const headerName = fc.oneof(
  fc.constantFrom(
    ...HOP_BY_HOP,
    "proxy-authorization",
    "proxy-authenticate",
    "host",
    "content-length",
    "expect",
    "authorization",
    "cf-ray",
    "cf-connecting-ip",
    "x-spillway-signature",
    "x-spillway-deployment",
    "accept",
    "content-type",
    "user-agent",
    "x-stainless-retry-count",
    "openai-organization",
    "x-request-id",
  ),
  tokenName,
);
const caseMix = (name: string, mask: number) =>
  [...name].map((ch, i) => ((mask >> (i % 30)) & 1 ? ch.toUpperCase() : ch)).join("");
const headerValue = fc.string({ unit: "grapheme-ascii", maxLength: 16 }).map((s) => s.replace(/[\r\n\0]/g, "").trim());
const clientHeaders = fc
  .array(fc.tuple(headerName, fc.nat(), headerValue), { maxLength: 12 })
  .map((pairs) => pairs.map(([name, mask, value]) => [caseMix(name, mask), value] as [string, string]));

/** Whether the edge must keep this header (RFC 9110 7.6.1, README, "Trust between the edge and the engines"). */
function forwardable(name: string, connectionNames: Set<string>): boolean {
  const lower = name.toLowerCase();
  if (HOP_BY_HOP.includes(lower) || lower.startsWith("proxy-") || connectionNames.has(lower)) return false;
  if (["host", "content-length", "expect", "authorization"].includes(lower)) return false;
  return !lower.startsWith("cf-") && !lower.startsWith("x-spillway-");
}

function headersOf(pairs: [string, string][]): Headers {
  const headers = new Headers();
  for (const [name, value] of pairs) headers.append(name, value);
  return headers;
}

/** What the middleware does: the client's headers, filtered, with the deployment's own key in place of the client's. */
function forwardedHeaders(incoming: Headers, apiKey: string | undefined): Headers {
  const headers = upstreamHeaders(incoming);
  if (apiKey !== undefined) headers.set("authorization", `Bearer ${apiKey}`);
  return headers;
}

const apiKey = fc.option(fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,24}$/), { nil: undefined });

describe("headers forwarded to a replica", () => {
  it("drops hop-by-hop, platform, internal and credential headers, keeps everything else unchanged, and sends the upstream key", () => {
    fc.assert(
      fc.property(clientHeaders, apiKey, (pairs, key) => {
        const incoming = headersOf(pairs);
        const out = forwardedHeaders(incoming, key);
        const outNames = new Set([...out.keys()]);
        for (const name of outNames) expect(incoming.has(name) || name === "authorization").toBe(true);
        const listed = new Set((incoming.get("connection") ?? "").split(",").map((s) => s.trim().toLowerCase()));
        for (const [name] of pairs) {
          const lower = name.toLowerCase();
          // Names a Connection header lists, and other Proxy-* headers, are the next property's.
          if (lower === "authorization" || listed.has(lower)) continue;
          if (lower.startsWith("proxy-") && lower !== "proxy-authorization" && lower !== "proxy-authenticate") continue;
          // Header values compare as HTTP normalizes them (repeated empty values may lose their padding).
          if (forwardable(name, new Set())) expect(out.get(name)?.trim(), name).toBe(incoming.get(name)?.trim());
          else expect(out.has(name), name).toBe(false);
        }
        expect(out.get("authorization")).toBe(key === undefined ? null : `Bearer ${key}`);
      }),
      runs,
    );
  });

  it("drops the headers the client's Connection names, and any Proxy-* header", () => {
    fc.assert(
      fc.property(
        clientHeaders,
        fc.array(fc.oneof(headerName, fc.constantFrom("proxy-connection")), { minLength: 1, maxLength: 3 }),
        (pairs, listed) => {
          const all: [string, string][] = [
            ["Connection", listed.join(", ")],
            ...listed.map((name): [string, string] => [name, "v"]),
            ...pairs,
          ];
          const incoming = headersOf(all);
          const connectionNames = new Set(
            (incoming.get("connection") ?? "")
              .split(",")
              .map((s) => s.trim().toLowerCase())
              .filter(Boolean),
          );
          const out = upstreamHeaders(incoming);
          for (const [name] of all) {
            if (forwardable(name, connectionNames))
              expect(out.get(name)?.trim(), name).toBe(incoming.get(name)?.trim());
            else expect(out.has(name), name).toBe(false);
          }
        },
      ),
      runs,
    );
  });

  it("a named upstream secret is the secret's value, or a refusal, never absent", () => {
    const secretName = fc.oneof(
      fc.constantFrom("VLLM_API_KEY", "__proto__", "toString", "constructor", "hasOwnProperty"),
      fc.string({ maxLength: 8 }),
    );
    const secretValue = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(undefined, null, 0, {}, "") as fc.Arbitrary<unknown>,
    );
    fc.assert(
      fc.property(secretName, fc.option(secretValue, { nil: "unbound" }), fc.boolean(), (name, value, required) => {
        const plainEnv: Record<string, unknown> = { OTHER: "other-secret" };
        if (value !== "unbound") Object.defineProperty(plainEnv, name, { value, enumerable: true });
        const deployment = { upstreamApiKeySecret: name } as DeploymentConfig;
        const usable = value !== "unbound" && typeof value === "string" && value !== "";
        if (usable) expect(upstreamApiKey(plainEnv, deployment, required)).toBe(value);
        else if (required)
          expect(() => upstreamApiKey(plainEnv, deployment, required)).toThrow(MissingUpstreamSecretError);
        else expect(upstreamApiKey(plainEnv, deployment, required)).toBeUndefined();
        expect(upstreamApiKey(plainEnv, {} as DeploymentConfig)).toBeUndefined();
      }),
      runs,
    );
  });
});

describe("one forwarding attempt", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("sends the given headers unchanged, adds a signature the engine accepts, and POSTs the body's bytes as they are", async () => {
    const guard = new ReplayGuard(60_000);
    await fc.assert(
      fc.asyncProperty(
        clientHeaders,
        apiKey,
        fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
        fc.string({ unit: "binary", maxLength: 40 }).map((text) => encoder.encode(text)),
        fc.constantFrom("https://gpu.example", "https://gpu.example/llama/", "http://10.0.0.1:8000//"),
        fc.constantFrom("/v1/chat/completions", "/v1/completions?x=1&y=%20"),
        // Deployment names are model ids (header-safe; Headers would trim or refuse others).
        fc.stringMatching(/^[A-Za-z0-9._:/-]{0,16}$/),
        async (pairs, key, secret, body, replica, pathAndSearch, deployment) => {
          const headers = forwardedHeaders(headersOf(pairs), key);
          let sent: { url: string; init: RequestInit } | undefined;
          vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
            sent = { url, init };
            return new Response("ok");
          });
          const outcome = await forwardToReplica({
            replica,
            pathAndSearch,
            headers,
            body,
            deployment,
            signingSecret: secret,
            headersTimeoutMs: 60_000,
            idleTimeoutMs: 60_000,
            clientSignal: new AbortController().signal,
          });
          vi.unstubAllGlobals();
          expect(outcome.kind).toBe("response");
          if (sent === undefined) throw new Error("nothing was sent");
          expect(sent.url).toBe(replica.replace(/\/+$/, "") + pathAndSearch);
          expect(sent.init.method).toBe("POST");
          expect(sent.init.body).toBe(body);
          const got = new Headers(sent.init.headers);
          for (const [name, value] of headers) expect(got.get(name)).toBe(value);
          const signatureNames = Object.values(SIGNATURE_HEADERS) as string[];
          for (const name of got.keys()) expect(headers.has(name) || signatureNames.includes(name)).toBe(true);
          expect(got.get("authorization")).toBe(key === undefined ? null : `Bearer ${key}`);
          if (secret === undefined) {
            for (const name of signatureNames) expect(got.has(name)).toBe(false);
          } else {
            const path = new URL(sent.url).pathname + new URL(sent.url).search;
            const verdict = await verifyRequest(
              [secret],
              got,
              { method: "POST", path, body },
              Date.now(),
              guard,
              30_000,
            );
            expect(verdict).toEqual({ ok: true, deployment });
          }
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Header and field parsing, error bodies

describe("parsing what the client says", () => {
  it("null optional fields are absent, as in OpenAI's API: `max_tokens`, `max_completion_tokens` and `stream`", async () => {
    // LangChain and hand-written clients send `"max_tokens": null`; OpenAI and the engine accept it, so must the edge.
    const body = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: null, stream: null };
    for (const extra of [{}, { max_completion_tokens: null }, { max_completion_tokens: null, max_tokens: 7 }]) {
      const text = JSON.stringify({ ...body, ...extra });
      const request = new Request("http://edge/v1/chat/completions", { method: "POST", body: text });
      const result = await readRequestBody(request, "/v1/chat/completions", 1 << 20);
      const maxTokens = "max_tokens" in extra ? { maxTokens: 7 } : {};
      expect(result).toEqual({
        bytes: encoder.encode(text),
        textLength: text.length,
        model: "m",
        ...maxTokens,
        completions: 1,
        serviceTier: undefined,
      });
    }
  });

  it("the completion budget is the one the engine runs with, never a smaller one written beside it", async () => {
    // A legacy completion runs with `max_tokens` (no engine reads `max_completion_tokens` there); vLLM and SGLang run
    // a chat request with `max_completion_tokens or max_tokens`, so a 0 there gives way to `max_tokens`. Read as
    // `max_completion_tokens ?? max_tokens`, each of these was charged 1 or 0 completion tokens.
    const cases: [string, Record<string, unknown>, number | undefined][] = [
      ["/v1/completions", { prompt: "hi", max_tokens: 5000, max_completion_tokens: 1 }, 5000],
      ["/v1/completions", { prompt: "hi", max_completion_tokens: 1 }, undefined],
      ["/v1/chat/completions", { messages: [{ role: "user" }], max_tokens: 5000, max_completion_tokens: 0 }, 5000],
      ["/v1/chat/completions", { messages: [{ role: "user" }], max_completion_tokens: 0 }, undefined],
      ["/v1/chat/completions", { messages: [{ role: "user" }], max_tokens: 5000, max_completion_tokens: 9 }, 9],
      ["/v1/chat/completions", { messages: [{ role: "user" }], max_tokens: 0 }, 0],
    ];
    for (const [path, fields, expected] of cases) {
      const request = new Request(`http://edge${path}`, {
        method: "POST",
        body: JSON.stringify({ model: "m", ...fields }),
      });
      const result = await readRequestBody(request, path, 1 << 20);
      expect("status" in result, JSON.stringify(result)).toBe(false);
      expect((result as { maxTokens?: number }).maxTokens, `${path} ${JSON.stringify(fields)}`).toBe(expected);
    }
  });

  it("x-stainless-retry-count: a retry exactly when it is a whole number of at least 1, for any text", () => {
    const retryHeader = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 8 }),
      fc
        .tuple(
          fc.constantFrom("", " ", "\t", "\u00a0", "\ufeff", "\n"),
          fc.stringMatching(/^[0-9]{1,25}$/),
          fc.constantFrom("", " ", "\t", "\u2003"),
        )
        .map(([a, digits, b]) => a + digits + b),
      fc.constantFrom("1.0", "1e3", "+1", "-1", "0x1", "١", "１", "Infinity", "0", "00", "01"),
    );
    fc.assert(
      fc.property(fc.option(retryHeader, { nil: undefined }), (header) => {
        const trimmed = header?.trim();
        const expected = trimmed !== undefined && /^[0-9]+$/.test(trimmed) && /[1-9]/.test(trimmed);
        expect(isRetry(header)).toBe(expected);
      }),
      runs,
    );
  });

  it("service_tier: the plan's class, batch, interactive where allowed, or a 400 message; for any value", () => {
    fc.assert(
      fc.property(
        fc.record({
          priority: fc.constantFrom("interactive" as const, "batch" as const),
          allowPriorityTier: fc.boolean(),
        }),
        fc.oneof(
          fc.constantFrom("auto", "default", "flex", "priority", "scale", "Flex", " auto", null, undefined),
          fc.anything(),
        ),
        (planFields, tier) => {
          const plan = planFields as TenantPlan;
          const got = priorityOf(plan, tier);
          if (tier === undefined || tier === null || tier === "auto" || tier === "default" || tier === "scale")
            expect(got).toBe(plan.priority);
          else if (tier === "flex") expect(got).toBe("batch");
          else if (tier === "priority" && plan.allowPriorityTier) expect(got).toBe("interactive");
          else {
            expect(typeof got).toBe("object");
            expect(typeof (got as { message: unknown }).message).toBe("string");
          }
        },
      ),
      runs,
    );
  });

  it("error bodies are JSON carrying exactly the message, type, param and code, whatever their text", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 400, max: 599 }),
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.constantFrom("invalid_request_error", "server_error", "requests"),
        fc.option(fc.string({ unit: "grapheme", maxLength: 12 }), { nil: null }),
        fc.option(fc.string({ unit: "grapheme", maxLength: 12 }), { nil: null }),
        async (status, message, type, code, param) => {
          const res = openAIError(status, message, type, code, { "retry-after": "1" }, param);
          expect(res.status).toBe(status);
          expect(res.headers.get("content-type")).toBe("application/json");
          expect(res.headers.get("retry-after")).toBe("1");
          const parsed = JSON.parse(await res.text()) as unknown;
          expect(parsed).toEqual({ error: { message, type, param, code } });
        },
      ),
      runs,
    );
  });
});
