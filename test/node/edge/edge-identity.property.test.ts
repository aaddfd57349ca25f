import { createHash, timingSafeEqual as nodeTimingSafeEqual } from "node:crypto";
import fc from "fast-check";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { adminBearerAuth, secretsEqual } from "../../../src/edge/admin-auth";
import { readRequestBody } from "../../../src/edge/request-body";
import { priorityOf } from "../../../src/edge/service-tier";
import {
  type TenantPlan,
  type TenantPlanInput,
  tenantPlanSchema,
  tenantsSchema,
} from "../../../src/edge/tenant-config";
import {
  bearerKey,
  hashApiKey,
  PlanCache,
  type PlanStore,
  resolvedPlan,
  resolveTenant,
} from "../../../src/edge/tenant-resolver";
import { propertyRuns } from "../../support/property-runs";

/**
 * Who the edge lets in and as whom, under arbitrary headers and values, each held against a small model written
 * from the modules' JSDoc and the README ("Tenants", the admin token under "Secrets"):
 *
 * - admin-auth.ts. `secretsEqual(a, b)` is `a === b` for any two strings (near misses: a character off, case, a
 *   prefix or suffix, whitespace, non-ASCII, lone surrogates, very long), decided for well-formed ones by one
 *   `timingSafeEqual` over two 32-byte digests. `adminBearerAuth` passes a request iff a token is configured (not empty), it is an RFC 6750 token, and
 *   the Authorization header (as the Fetch API normalises it: outer whitespace trimmed, several values joined by
 *   ", ") is `Bearer` in any case, a space (then any whitespace, as Hono reads it), and exactly that token. Anything
 *   else (no header, an empty one, another or misspelt scheme, a prefix, suffix, case change, inner whitespace,
 *   non-ASCII, a very long value, several Authorization values, no token configured) is the same 401, body and
 *   headers alike, and never a 500. The token is read on every request (rotation takes effect on the next one).
 *   Under Node the Workers-only `crypto.subtle.timingSafeEqual` is stood in for by node:crypto's, with the
 *   Workers semantics (a TypeError on unequal lengths); test/edge/request-identity.property.test.ts runs the
 *   module in workerd.
 * - tenant-resolver.ts. `hashApiKey` is the `sha256sum` hex digest of the key's UTF-8. `bearerKey` is a scanner
 *   written from its JSDoc: `undefined` without a header; the key of `Bearer` (any case), one or more spaces, 1 to
 *   512 printable ASCII characters and trailing spaces; `null` for anything else. `resolveTenant`, over a sequence
 *   of requests against a model of configuration keys, a KV store whose records change (revocation, new keys,
 *   malformed records), a clock and a bounded plan cache: the plan is the configured one for the key's hash, else
 *   the KV record's if valid (a key in the configuration is never looked up in KV), else `anonymous`, or a 401 when
 *   `requireKey` (the "didn't provide" message exactly when there is no header); KV is read only by hash, only on
 *   a cache miss or after `kvCacheTtlS` (unknown keys remembered too), and the cache holds plans and unknown keys
 *   apart, each bounded, dropping from the full one the entry loaded longest ago. Nothing returned, read from KV
 *   or logged contains the raw key.
 *   `resolvedPlan`: `undefined` is anonymous or a 401, a valid plan its parsed self, an invalid one an Error.
 * - service-tier.ts. For any value (any JSON value, as a body carries it through `readRequestBody`, and anything
 *   else): absent, `null`, `auto` and `default` keep the plan's class, `flex` is `batch`, `priority` is
 *   `interactive` only where the plan allows it; everything else (case or whitespace variants included) is a
 *   `{ message }` naming `service_tier`, never a throw.
 */

// admin-auth.ts calls Workers' `crypto.subtle.timingSafeEqual`, which Node's types (and Node 20) lack.
declare module "crypto" {
  namespace webcrypto {
    interface SubtleCrypto {
      timingSafeEqual(a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView): boolean;
    }
  }
}

const runs = propertyRuns(200, 20261205);

// ---------------------------------------------------------------------------------------------------------------
// Workers' crypto.subtle.timingSafeEqual under Node

type Bytes = ArrayBuffer | ArrayBufferView;
type WorkersSubtle = { timingSafeEqual?: (a: Bytes, b: Bytes) => boolean };
const subtle = crypto.subtle as unknown as WorkersSubtle;
let shimmed = false;
const view = (b: Bytes) =>
  b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

beforeAll(() => {
  if (subtle.timingSafeEqual) return;
  shimmed = true;
  subtle.timingSafeEqual = (a, b) => {
    const [x, y] = [view(a), view(b)];
    if (x.byteLength !== y.byteLength) throw new TypeError("timingSafeEqual: inputs differ in length");
    return nodeTimingSafeEqual(x, y);
  };
});
afterAll(() => {
  if (shimmed) delete subtle.timingSafeEqual;
});
afterEach(() => vi.restoreAllMocks());

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

// ---------------------------------------------------------------------------------------------------------------
// Admin bearer auth

/** RFC 6750's token68: what the README says an admin token is made of. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
const token68 = fc
  .tuple(
    fc.string({ unit: fc.constantFrom(..."aAzZ09-._~+/"), minLength: 1, maxLength: 20 }),
    fc.constantFrom("", "", "=", "=="),
  )
  .map(([t, pad]) => t + pad);
/** Characters a header value may hold (a ByteString without NUL, CR, LF). */
const headerChar = fc.oneof(
  fc.constantFrom("\t", " ", "\u000b", "\u00a0", "\u00e9", "\u00ff", "\u0085", ",", "=", '"'),
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
);
const headerText = (maxLength: number) => fc.string({ unit: headerChar, maxLength });

/** A configured admin token: none, empty, a valid one, a very long one, or one no header can carry. */
const configuredArb = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(undefined, "") },
  { weight: 6, arbitrary: token68 },
  { weight: 1, arbitrary: token68.map((t) => t.replace(/=+$/, "").repeat(300)) },
  { weight: 1, arbitrary: fc.constantFrom("tok en", "tok\u00e9n", "tok!", " tok", "tok\t", "a=b", "=") },
);

/** A presented token near `t`. */
const near = (t: string) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(t) },
    {
      weight: 6,
      arbitrary: fc.constantFrom(t.toUpperCase(), t.toLowerCase(), `${t}=`, `${t}a`, `a${t}`, `${t}\u00e9`),
    },
    { weight: 2, arbitrary: fc.nat(t.length).map((n) => t.slice(0, n)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.nat(Math.max(0, t.length - 1)), fc.constantFrom("a", "B", "9", "-", " ", "\t", "\u00e9"))
        .map(([i, c]) => `${t.slice(0, i)}${c}${t.slice(i + 1)}`),
    },
    {
      weight: 1,
      arbitrary: fc.nat(t.length).map((i) => `${t.slice(0, i)} ${t.slice(i)}`),
    },
    { weight: 1, arbitrary: fc.constant(t.repeat(50)) },
    { weight: 2, arbitrary: token68 },
    { weight: 1, arbitrary: headerText(24) },
  );

type HeaderSpec =
  | { kind: "none" }
  | { kind: "values"; values: string[] }
  | { kind: "structured"; lead: string; scheme: string; sep: string; token: string; trail: string };

const headerSpec = (configured: string | undefined): fc.Arbitrary<HeaderSpec> => {
  const presented = configured ? near(configured) : token68;
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<HeaderSpec>({ kind: "none" }) },
    {
      weight: 10,
      arbitrary: fc.record({
        kind: fc.constant("structured" as const),
        lead: fc.constantFrom("", "", " ", "\t"),
        scheme: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom("Bearer", "bearer", "BEARER", "bEaReR") },
          {
            weight: 2,
            arbitrary: fc.constantFrom("Basic", "Token", "Bear", "Bearerx", "Bearer:", "Bearer,", "B\u00e9arer", ""),
          },
        ),
        sep: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(" ", "  ", "   ", " \t", " \u00a0") },
          { weight: 1, arbitrary: fc.constantFrom("\t", "", "=", ":", "\u00a0") },
        ),
        token: presented,
        trail: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom("", " ", "\t", " \t ") },
          { weight: 1, arbitrary: fc.constantFrom(",", ", ", "=", "\u00a0") },
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: fc
        .array(
          fc.oneof(
            presented.map((t) => `Bearer ${t}`),
            fc.constantFrom("", "Bearer", "Bearer ", "Basic dXNlcg=="),
            headerText(16),
          ),
          { minLength: 1, maxLength: 3 },
        )
        .map((values): HeaderSpec => ({ kind: "values", values })),
    },
  );
};

/** The Authorization values a spec sends; the value the Fetch API then hands the Worker (or undefined). */
function headersOf(spec: HeaderSpec): { headers: Headers; value: string | undefined } {
  const headers = new Headers();
  if (spec.kind === "structured")
    headers.append("authorization", `${spec.lead}${spec.scheme}${spec.sep}${spec.token}${spec.trail}`);
  if (spec.kind === "values") for (const v of spec.values) headers.append("authorization", v);
  return { headers, value: headers.get("authorization") ?? undefined };
}

/** The documented rule, on the value as received: `Bearer` (any case), a space, any whitespace, the token. */
function adminPasses(configured: string | undefined, value: string | undefined): boolean {
  if (configured === undefined || configured === "" || !TOKEN68.test(configured)) return false;
  if (value === undefined || value.slice(0, 6).toLowerCase() !== "bearer" || value[6] !== " ") return false;
  let i = 7;
  while (i < value.length && /\s/.test(value[i] as string)) i++;
  return value.slice(i) === configured;
}

function adminApp(tokenOf: () => string | undefined) {
  const failures: unknown[] = [];
  const app = new Hono();
  app.use("/spillway/*", adminBearerAuth(tokenOf));
  app.get("/spillway/stats", (c) => c.text("stats"));
  app.onError((error) => {
    if (error instanceof HTTPException) return error.getResponse();
    failures.push(error);
    return new Response("internal error", { status: 500 });
  });
  return { app, failures };
}

async function snapshot(res: Response) {
  return {
    status: res.status,
    body: await res.text(),
    headers: [...res.headers].filter(([name]) => name !== "content-length"),
  };
}

describe("admin bearer auth", () => {
  it("secretsEqual is string equality, by one timingSafeEqual of two digests for well-formed strings", async () => {
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const pair = fc.oneof(
      fc.tuple(text, text),
      text.chain((a) => fc.tuple(fc.constant(a), near(a))),
      fc.tuple(text, text).map(([a, b]): [string, string] => [a + b, a]),
      text.map((a): [string, string] => [a.repeat(200), a.repeat(200)]),
    );
    await fc.assert(
      fc.asyncProperty(pair, async ([a, b]) => {
        const spy = vi.spyOn(subtle as Required<WorkersSubtle>, "timingSafeEqual");
        try {
          for (const [x, y] of [
            [a, b],
            [b, a],
            [a, a],
          ] as const) {
            spy.mockClear();
            expect(await secretsEqual(x, y)).toBe(x === y);
            // A string with a lone surrogate is compared as it is (no header carries one): no digest to compare.
            const wellFormed = [x, y].every((t) => (t as string & { isWellFormed(): boolean }).isWellFormed());
            expect(spy).toHaveBeenCalledTimes(wellFormed ? 1 : 0);
            if (!wellFormed) continue;
            const [dx, dy] = spy.mock.calls[0] as [Bytes, Bytes];
            expect([view(dx).byteLength, view(dy).byteLength]).toEqual([32, 32]);
          }
        } finally {
          spy.mockRestore();
        }
      }),
      runs,
    );
  });

  it("secretsEqual tells strings with lone surrogates apart (TextEncoder would make both U+FFFD)", async () => {
    expect(await secretsEqual("\uD800", "\uFFFD")).toBe(false);
    expect(await secretsEqual("tok\uDC00", "tok\uD83D")).toBe(false);
    expect(await secretsEqual("tok\uDC00", "tok\uDC00")).toBe(true);
  });

  it("passes exactly `Bearer <configured token>`; every other header is the same 401, never a 500", async () => {
    const caseArb = configuredArb.chain((configured) =>
      fc.record({ configured: fc.constant(configured), spec: headerSpec(configured) }),
    );
    const seen = { passed: 0, refused: 0, nearMiss: 0 };
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ configured, spec }) => {
        const { app, failures } = adminApp(() => configured);
        const { headers, value } = headersOf(spec);
        const res = await app.request("http://edge.test/spillway/stats", { headers });
        expect(failures).toEqual([]);
        if (adminPasses(configured, value)) {
          seen.passed++;
          expect([res.status, await res.text()]).toEqual([200, "stats"]);
          return;
        }
        seen.refused++;
        if (configured && value?.toLowerCase().startsWith("bearer ") && value.includes(configured)) seen.nearMiss++;
        const got = await snapshot(res);
        const reference = await snapshot(await app.request("http://edge.test/spillway/stats"));
        expect(got.status).toBe(401);
        expect(got).toEqual(reference);
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="spillway"');
        expect(JSON.parse(got.body)).toMatchObject({ error: { code: "unauthorized" } });
      }),
      runs,
    );
    // The generator reaches both sides, and refusals of headers that hold the right token among other things.
    if (runs.numRuns >= 100) for (const n of Object.values(seen)) expect(n).toBeGreaterThan(runs.numRuns / 40);
  });

  it("reads the token on every request: after a rotation only the new token passes", async () => {
    const pool = fc.uniqueArray(token68, { minLength: 2, maxLength: 4 });
    const steps = (n: number) =>
      fc.array(
        fc.oneof(
          fc.record({ rotate: fc.option(fc.nat(n - 1), { nil: undefined }) }),
          fc.record({ present: fc.nat(n - 1) }),
        ),
        { minLength: 1, maxLength: 12 },
      );
    await fc.assert(
      fc.asyncProperty(
        pool.chain((p) => fc.tuple(fc.constant(p), steps(p.length))),
        async ([tokens, script]) => {
          let configured: string | undefined;
          const { app, failures } = adminApp(() => configured);
          for (const step of script) {
            if ("rotate" in step) {
              configured = step.rotate === undefined ? undefined : tokens[step.rotate];
              continue;
            }
            const presented = tokens[step.present] as string;
            const res = await app.request("http://edge.test/spillway/stats", {
              headers: { authorization: `Bearer ${presented}` },
            });
            expect(res.status).toBe(configured === presented ? 200 : 401);
          }
          expect(failures).toEqual([]);
        },
      ),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Tenant resolution

const MAX_KEY = 512;

/** bearerKey's JSDoc, as a scanner (not a regular expression). */
function modelBearerKey(header: string | undefined): string | undefined | null {
  if (header === undefined) return undefined;
  if (header.slice(0, 6).toLowerCase() !== "bearer" || header[6] !== " ") return null;
  let i = 6;
  while (header[i] === " ") i++;
  let j = i;
  while (j < header.length && header.charCodeAt(j) >= 0x21 && header.charCodeAt(j) <= 0x7e) j++;
  for (let k = j; k < header.length; k++) if (header[k] !== " ") return null;
  const key = header.slice(i, j);
  return key.length >= 1 && key.length <= MAX_KEY ? key : null;
}

const printable = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
/** API keys: printable ASCII after `sk-` (so no plan name or message contains one), at most 512 in all. */
const apiKey = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: printable, minLength: 1, maxLength: 30 }).map((s) => `sk-${s}`) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: printable, minLength: 1, maxLength: 4 })
      .map((s) => `sk-${s.repeat(Math.ceil(MAX_KEY / s.length))}`.slice(0, MAX_KEY)),
  },
);

/** Authorization headers around a key, well-formed or not. */
const keyHeader = (key: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(`Bearer ${key}`, `bearer ${key}`, `BEARER  ${key}`, `Bearer ${key}  `) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `Bearer\t${key}`,
        `Bearer ${key}\t`,
        `Bearer${key}`,
        `Basic ${key}`,
        ` Bearer ${key}`,
        `Bearer ${key} x`,
        `Bearer ${key}\u00e9`,
        `Bearer ${key}x`.padEnd(MAX_KEY + 8, "x"),
        `Bearer ${key}, Bearer ${key}`,
        `Bearer ${key.toUpperCase()}`,
        `Bearer ${key.slice(0, -1)}`,
      ),
    },
  );
const anyHeader = fc.oneof(
  fc.constantFrom(undefined, "", "Bearer", "Bearer ", "Bearer  ", "bearer\u00a0sk-1", "Bearer \u0000", "Bearer \u007f"),
  fc.string({ unit: "binary", maxLength: 24 }),
  fc
    .tuple(fc.constantFrom("Bearer ", "bearer  ", "Bearer"), fc.string({ unit: "binary", maxLength: 12 }))
    .map(([s, t]) => s + t),
  fc.string({ unit: fc.constantFrom(..."Bearer \tx~\u00e9\u007f!"), maxLength: 14 }),
);

const NAMES = ["acme", "beta", "nightly", "t.1", "T_2", "kv-plan", "x"] as const;
const planInput: fc.Arbitrary<TenantPlanInput> = fc.record(
  {
    name: fc.constantFrom(...NAMES),
    weight: fc.constantFrom(0.5, 1, 2, 1000),
    priority: fc.constantFrom("interactive" as const, "batch" as const),
    requestsPerMinute: fc.integer({ min: 1, max: 1000 }),
    allowPriorityTier: fc.boolean(),
  },
  { requiredKeys: ["name"] },
);
/** A KV record: a valid plan, or something the docs say is an unknown key. */
const kvRecord = fc.oneof(
  { weight: 3, arbitrary: planInput.map((p) => JSON.stringify(p)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "{not json",
      "null",
      "[]",
      '"acme"',
      '{"name":"bad name"}',
      '{"name":"acme","weight":0}',
      '{"name":"acme","extra":1}',
      "",
    ),
  },
);

function parsedRecord(raw: string | null): TenantPlan | undefined {
  if (raw === null) return undefined;
  try {
    const result = tenantPlanSchema.safeParse(JSON.parse(raw));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

const NO_KEY = "You didn't provide an API key. Provide it in the Authorization header (Bearer auth).";
const BAD_KEY = "Incorrect API key provided.";

describe("tenant resolution", () => {
  it("hashApiKey is the sha256sum hex digest of the key's UTF-8", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(apiKey, fc.string({ unit: "binary", maxLength: 64 })), async (key) => {
        expect(await hashApiKey(key)).toBe(sha256(key));
      }),
      runs,
    );
  });

  it("bearerKey: undefined without a header, the key of `Bearer <key>`, null for anything else", () => {
    const header = fc.oneof(apiKey.chain(keyHeader), anyHeader);
    fc.assert(
      fc.property(header, (h) => {
        expect(bearerKey(h)).toBe(modelBearerKey(h));
      }),
      runs,
    );
    // The model's corners, pinned so a drift of the model itself shows.
    expect(modelBearerKey(`Bearer ${"k".repeat(MAX_KEY)}`)).toBe("k".repeat(MAX_KEY));
    expect(modelBearerKey(`Bearer ${"k".repeat(MAX_KEY + 1)}`)).toBeNull();
    expect(modelBearerKey("bEaReR   sk-1   ")).toBe("sk-1");
  });

  it("resolveTenant over a session: configured keys, then KV (cached, bounded), else anonymous or 401", async () => {
    const world = fc
      .record({
        keys: fc.uniqueArray(apiKey, { minLength: 1, maxLength: 5 }),
        requireKey: fc.boolean(),
        anonymous: fc.option(planInput, { nil: undefined }),
        kvCacheTtlS: fc.constantFrom(0, 1, 30, 30),
        withStore: fc.constantFrom(true, true, false),
        cacheSize: fc.integer({ min: 1, max: 4 }),
        unknownCacheSize: fc.integer({ min: 1, max: 4 }),
      })
      .chain((w) => {
        const n = w.keys.length;
        const which = fc.oneof(
          { weight: 6, arbitrary: fc.nat(n - 1).chain((i) => keyHeader(w.keys[i] as string)) },
          { weight: 1, arbitrary: apiKey.map((k) => `Bearer ${k}~stranger`) },
          { weight: 1, arbitrary: anyHeader },
        );
        return fc.record({
          world: fc.constant(w),
          configured: fc.array(
            fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: planInput }),
            { minLength: n, maxLength: n },
          ),
          kv: fc.array(fc.option(kvRecord, { nil: null, freq: 2 }), { minLength: n, maxLength: n }),
          steps: fc.array(
            fc.record({
              header: which,
              advanceMs: fc.constantFrom(0, 0, 0, 1, 999, 1000, 1001, 29_999, 30_000, 30_001),
              rewrite: fc.option(fc.tuple(fc.nat(n - 1), fc.option(kvRecord, { nil: null })), { freq: 3 }),
            }),
            { minLength: 1, maxLength: 10 },
          ),
        });
      });

    const seen = { configured: 0, kv: 0, cached: 0, anonymous: 0, unauthorized: 0, evicted: 0 };
    await fc.assert(
      fc.asyncProperty(world, async ({ world: w, configured, kv, steps }) => {
        const printed: string[] = [];
        for (const level of ["log", "error", "warn", "info", "debug"] as const)
          vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
            printed.push(args.map(String).join(" "));
          });
        const keysConfig: Record<string, TenantPlanInput> = {};
        w.keys.forEach((k, i) => {
          const plan = configured[i];
          if (plan) keysConfig[sha256(k)] = plan;
        });
        const tenants = tenantsSchema.parse({
          requireKey: w.requireKey,
          keys: keysConfig,
          kvCacheTtlS: w.kvCacheTtlS,
          ...(w.anonymous ? { anonymous: w.anonymous } : {}),
        });
        const records = new Map<string, string>();
        w.keys.forEach((k, i) => {
          const r = kv[i];
          if (r !== null && r !== undefined) records.set(sha256(k), r);
        });
        const reads: string[] = [];
        const store: PlanStore = {
          async get(hash) {
            reads.push(hash);
            return records.get(hash) ?? null;
          },
        };
        const cache = new PlanCache(w.cacheSize, w.unknownCacheSize);
        // The model of the cache: hash -> plan and expiry, in the order the entries were loaded from KV; plans
        // and unknown keys (plan undefined) apart, each with its own bound.
        const model = new Map<string, { plan: TenantPlan | undefined; expiresAtMs: number }>();
        const unknownModel = new Map<string, { plan: undefined; expiresAtMs: number }>();
        const ttlMs = w.kvCacheTtlS * 1000;
        let now = 1_000_000;
        const expectedInvalid: Array<{ hashPrefix: string; key: string }> = [];

        for (const step of steps) {
          now += step.advanceMs;
          if (step.rewrite) {
            const [i, record] = step.rewrite;
            const hash = sha256(w.keys[i] as string);
            if (record === null) records.delete(hash);
            else records.set(hash, record);
          }
          const expectedReads: string[] = [];
          const key = modelBearerKey(step.header);
          let plan: TenantPlan | undefined;
          if (typeof key === "string") {
            const hash = sha256(key);
            plan = Object.hasOwn(tenants.keys, hash) ? tenants.keys[hash] : undefined;
            if (plan) seen.configured++;
            else if (w.withStore) {
              const cached = model.get(hash) ?? unknownModel.get(hash);
              if (cached && cached.expiresAtMs > now) {
                plan = cached.plan;
                seen.cached++;
              } else {
                expectedReads.push(hash);
                const raw = records.get(hash) ?? null;
                plan = parsedRecord(raw);
                // A record there that is no plan is told to the operator, by the hash's first 8 digits (150f6b9).
                if (raw !== null && !plan) expectedInvalid.push({ hashPrefix: hash.slice(0, 8), key });
                if (plan) seen.kv++;
                model.delete(hash);
                unknownModel.delete(hash);
                if (plan) model.set(hash, { plan, expiresAtMs: now + ttlMs });
                else unknownModel.set(hash, { plan, expiresAtMs: now + ttlMs });
                const [full, size] = plan ? [model, w.cacheSize] : [unknownModel, w.unknownCacheSize];
                if (full.size > size) {
                  full.delete(full.keys().next().value as string);
                  seen.evicted++;
                }
              }
            }
          }
          const expected = plan
            ? { kind: "tenant", plan }
            : !tenants.requireKey
              ? { kind: "tenant", plan: tenants.anonymous }
              : { kind: "unauthorized", message: key === undefined ? NO_KEY : BAD_KEY };
          if (!plan) seen[tenants.requireKey ? "unauthorized" : "anonymous"]++;

          reads.length = 0;
          const got = await resolveTenant(step.header, tenants, w.withStore ? store : undefined, now, cache);
          expect(got).toEqual(expected);
          expect(reads).toEqual(expectedReads);
          // Secrecy: nothing returned or logged holds the raw key (keys start with `sk-`; no name or message does).
          // A drawn header's key of a few characters is in any message ("Bearer c": SEED=21), as the header's is.
          const shown = JSON.stringify(got);
          if (typeof key === "string" && key.length > 3) expect(shown).not.toContain(key);
          if (step.header && step.header.length > 3) expect(shown).not.toContain(step.header);
        }
        // Nothing printed but one line per read of a malformed record, naming no key and no whole hash.
        const lines = printed.map((line) => JSON.parse(line) as { event: string; keyHashPrefix: string });
        expect(lines.map((l) => [l.event, l.keyHashPrefix])).toEqual(
          expectedInvalid.map((r) => ["spillway.tenant_record_invalid", r.hashPrefix]),
        );
        printed.forEach((line, i) => {
          const { key: rawKey } = expectedInvalid[i] as { key: string };
          expect(line).not.toContain(rawKey);
          expect(line).not.toContain(sha256(rawKey));
        });
      }),
      runs,
    );
    if (runs.numRuns >= 100) for (const n of Object.values(seen)) expect(n).toBeGreaterThan(runs.numRuns / 40);
  });

  it("resolvedPlan: an invalid plan from tenantOf is named by the option and each bad field, on one line", () => {
    // It said "the tenant resolver returned an invalid plan: [" and then zod's issues as 20 lines of JSON.
    expect(() => resolvedPlan({ name: "bad name", weight: 0 }, tenantsSchema.parse({}))).toThrow(
      "spillway(): tenantOf returned an invalid plan: name: tenant names use letters, digits, '.', '_' and '-'; " +
        "weight: Too small: expected number to be >0",
    );
  });

  it("resolvedPlan: undefined is anonymous or 401; a valid plan is its parsed self; an invalid one throws", () => {
    const invalid = fc.constantFrom<unknown>(
      { name: "" },
      { name: "bad name" },
      { name: "acme", weight: 0 },
      { name: "acme", priority: "urgent" },
      { name: "acme", extra: true },
      { weight: 1 },
      null,
      "acme",
    );
    fc.assert(
      fc.property(fc.boolean(), fc.oneof(fc.constant(undefined), planInput, invalid), (requireKey, plan) => {
        const tenants = tenantsSchema.parse({ requireKey });
        const valid = plan === undefined ? undefined : tenantPlanSchema.safeParse(plan);
        if (valid && !valid.success) {
          expect(() => resolvedPlan(plan as TenantPlanInput, tenants)).toThrow(
            /^spillway\(\): tenantOf returned an invalid plan: \S[^\n]*$/,
          );
          return;
        }
        const got = resolvedPlan(plan as TenantPlanInput | undefined, tenants);
        if (valid) expect(got).toEqual({ kind: "tenant", plan: valid.data });
        else if (requireKey) expect(got).toMatchObject({ kind: "unauthorized", message: expect.any(String) });
        else expect(got).toEqual({ kind: "tenant", plan: tenants.anonymous });
      }),
      runs,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// service_tier

const tierValue = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom<unknown>(
      "auto",
      "default",
      "flex",
      "priority",
      null,
      undefined,
      "Auto",
      "FLEX",
      "Priority",
      " flex",
      "flex ",
      "priority\u0000",
      "scale",
      "",
      0,
      false,
      true,
      [],
      ["flex"],
      {},
      { toString: () => "flex" },
    ),
  },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.anything() },
);
const planArb = fc
  .record({ priority: fc.constantFrom("interactive" as const, "batch" as const), allowPriorityTier: fc.boolean() })
  .map((p) => tenantPlanSchema.parse({ name: "acme", ...p }));

function expectedTier(plan: TenantPlan, tier: unknown): "interactive" | "batch" | "problem" {
  if (tier === undefined || tier === null || tier === "auto" || tier === "default" || tier === "scale")
    return plan.priority;
  if (tier === "flex") return "batch";
  if (tier === "priority" && plan.allowPriorityTier) return "interactive";
  return "problem";
}

function expectTier(plan: TenantPlan, tier: unknown, got: ReturnType<typeof priorityOf>) {
  const want = expectedTier(plan, tier);
  if (want !== "problem") {
    expect(got).toBe(want);
    return;
  }
  expect(typeof got).toBe("object");
  expect(Object.keys(got as object)).toEqual(["message"]);
  const { message } = got as { message: unknown };
  expect(typeof message).toBe("string");
  expect(message).toContain("service_tier");
}

describe("service_tier", () => {
  it("any value: the plan's class, batch, interactive where allowed, or a problem naming service_tier", () => {
    fc.assert(
      fc.property(planArb, tierValue, (plan, tier) => {
        const before = structuredClone(plan);
        expectTier(plan, tier, priorityOf(plan, tier));
        expect(plan).toEqual(before);
      }),
      runs,
    );
  });

  it("any JSON value in a request body reaches the check unchanged and gets the documented outcome", async () => {
    await fc.assert(
      fc.asyncProperty(
        planArb,
        fc.oneof(
          fc.constantFrom<unknown>("auto", "default", "flex", "priority", null, "Flex"),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        fc.boolean(),
        async (plan, tier, present) => {
          const body = {
            model: "m",
            messages: [{ role: "user", content: "hi" }],
            ...(present ? { service_tier: tier } : {}),
          };
          const request = new Request("http://edge.test/v1/chat/completions", {
            method: "POST",
            body: JSON.stringify(body),
          });
          const read = await readRequestBody(request, "/v1/chat/completions", 1 << 20);
          expect("status" in read).toBe(false);
          if ("status" in read) return;
          const sent = present ? JSON.parse(JSON.stringify(tier)) : undefined;
          expect(read.serviceTier).toEqual(sent);
          expectTier(plan, sent, priorityOf(plan, read.serviceTier));
        },
      ),
      runs,
    );
  });
});
