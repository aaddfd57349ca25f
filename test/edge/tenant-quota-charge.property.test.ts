import fc from "fast-check";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QuotaLedger, type QuotaLimits, type QuotaVerdict } from "../../src/core/tenant-quota";
import { spillway } from "../../src/edge/middleware";
import { estimateTokens } from "../../src/edge/tenant-quota-charge";
import { propertyRuns } from "../support/property-runs";

/**
 * What a tenant's quota is charged for a request, end to end through the real `spillway()` middleware (inside
 * workerd: a fake router namespace, a fake quota namespace driving the real QuotaLedger on a test clock, and a fake
 * `fetch` for the backend), against a model of the documented contract (README "Tenants", the JSDoc of
 * `chargeQuota`/`QuotaCharge`, `estimateTokens`, `tapEventStreamUsage`):
 *
 * - reserved at admission: one request and `ceil(body.length / 4) + (max_tokens ?? defaultMaxTokens)` tokens, if
 *   both fit (else a 429 `tenant_quota_exceeded`, or a 400 `tokens_exceed_quota` when the reservation exceeds the
 *   token quota itself), with `x-ratelimit-remaining-*` the bucket's whole units after the charge;
 * - given back entirely (request and tokens) when not served: refused for capacity, the router's own code threw,
 *   every replica unreachable or answering 503 (it took nothing), a replica's own 429 (passed on, not retried: it
 *   did no work either), or the client left before it was forwarded;
 * - otherwise charged `usage.total_tokens` of the answer (JSON, or an SSE stream read to its end) when it is a
 *   finite number >= 0, and the reservation when it has none (absent, garbled, negative, not JSON, the client left
 *   while waiting or mid-stream, the body cut, a 5xx without usage); a huge usage is charged as it is (a debt).
 *
 * Checked after every batch of 1 to 3 concurrent requests (of one or two tenants): the ledger's net charge per
 * tenant and quota equals the model's sum exactly (nothing charged twice, nothing lost, refunds exact); at most one
 * correction per admitted request; each bucket's level equals the model's; for a lone request its status and rate
 * limit headers are the model's. Leases are off (`quotaLeaseMs: 0`: tenant-quota-lease.property.test.ts covers
 * them), the clock moves in whole seconds (integral refills for limits that are multiples of 60). Fixed seed.
 */

const runs = propertyRuns(60, 20260314);
const DEFAULT_MAX_TOKENS = 200;

interface Plan {
  name: string;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
}
const PLANS: Plan[] = [
  { name: "both", requestsPerMinute: 120, tokensPerMinute: 6000 },
  { name: "tokens", tokensPerMinute: 3000 },
  { name: "requests", requestsPerMinute: 60 },
];

type UsageValue =
  | { kind: "valid"; n: number }
  | { kind: "absent" }
  | { kind: "string" }
  | { kind: "negative" }
  | { kind: "huge" }
  | { kind: "null" };
type Answer =
  | { kind: "json"; status: 200 | 429 | 500 | 503; usage: UsageValue; notJson: boolean }
  | { kind: "jsonCut" }
  | { kind: "noBody" }
  | { kind: "sse"; usage: UsageValue; cut: "none" | "beforeUsage" | "afterUsage"; clientLeaves: boolean };
type Attempt = { kind: "unreachable" } | { kind: "clientGone" } | { kind: "answer"; answer: Answer };
interface Req {
  tenant: number;
  content: string;
  maxTokens: number | undefined;
  /** `throws`: the router's own code throws (a bug, or a call it refuses: a remote error). */
  router: "admit" | "reject" | "clientLeft" | "throws";
  attempts: [Attempt, Attempt];
}

const usageArb: fc.Arbitrary<UsageValue> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("valid" as const), n: fc.integer({ min: 0, max: 3000 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "absent" as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: "string" as const }, { kind: "negative" as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: "huge" as const }, { kind: "null" as const }) },
);
const answerArb: fc.Arbitrary<Answer> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("json" as const),
      status: fc.constantFrom(200 as const, 200 as const, 429 as const, 500 as const, 503 as const),
      usage: usageArb,
      notJson: fc.constantFrom(false, false, false, true),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom({ kind: "jsonCut" as const }, { kind: "noBody" as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("sse" as const),
      usage: usageArb,
      cut: fc.constantFrom("none" as const, "none" as const, "beforeUsage" as const, "afterUsage" as const),
      clientLeaves: fc.boolean(),
    }),
  },
);
const attemptArb: fc.Arbitrary<Attempt> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("answer" as const), answer: answerArb }) },
  { weight: 2, arbitrary: fc.constant({ kind: "unreachable" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "clientGone" as const }) },
);
const reqArb: fc.Arbitrary<Req> = fc.record({
  tenant: fc.integer({ min: 0, max: 2 }),
  content: fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: "grapheme", maxLength: 200 })),
  maxTokens: fc.option(fc.integer({ min: 0, max: 4000 }), { nil: undefined }),
  router: fc.constantFrom(
    "admit" as const,
    "admit" as const,
    "admit" as const,
    "reject" as const,
    "clientLeft" as const,
    "throws" as const,
  ),
  attempts: fc.tuple(attemptArb, attemptArb),
});
const stepArb = fc.record({
  waitS: fc.constantFrom(0, 0, 1, 5, 30),
  batch: fc.array(reqArb, { minLength: 1, maxLength: 3 }),
});

// ---------------------------------------------------------------------------------------------------------------
// The edge

const encoder = new TextEncoder();

function usageJson(usage: UsageValue): string {
  switch (usage.kind) {
    case "valid":
      return `,"usage":{"prompt_tokens":1,"total_tokens":${usage.n}}`;
    case "absent":
      return "";
    case "string":
      return `,"usage":{"total_tokens":"12"}`;
    case "negative":
      return `,"usage":{"total_tokens":-5}`;
    case "huge":
      return `,"usage":{"total_tokens":1e12}`;
    case "null":
      return `,"usage":null`;
  }
}
/** The documented usage of an answer carrying `usage`: a finite number >= 0, else none. */
function usageOf(usage: UsageValue): number | undefined {
  if (usage.kind === "valid") return usage.n;
  if (usage.kind === "huge") return 1e12;
  return undefined;
}

function streamOf(chunks: string[], failAtEnd: boolean): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[i++];
      if (next !== undefined) controller.enqueue(encoder.encode(next));
      else if (failAtEnd) controller.error(new TypeError("terminated"));
      else controller.close();
    },
  });
}

function backendAnswer(answer: Answer): Response {
  switch (answer.kind) {
    case "json": {
      const body = answer.notJson ? "not json" : `{"id":"x","choices":[]${usageJson(answer.usage)}}`;
      return new Response(body, { status: answer.status, headers: { "content-type": "application/json" } });
    }
    case "jsonCut":
      return new Response(streamOf(['{"id":"x","usage":{"total_tokens":3}'], true), {
        headers: { "content-type": "application/json" },
      });
    case "noBody":
      return new Response(null, { status: 204 });
    case "sse": {
      const events = ['data: {"choices":[{"delta":{"content":"a"}}]}\n\n', 'data: {"choices":[]}\n\n'];
      const usage = `data: {"choices":[]${usageJson(answer.usage)}}\n\n`;
      const chunks =
        answer.cut === "beforeUsage"
          ? events
          : answer.cut === "afterUsage"
            ? [...events, usage]
            : [...events, usage, "data: [DONE]\n\n"];
      // A client leaving a stream that also fails is left out: workerd reports the cut as an unhandled rejection.
      return new Response(streamOf(chunks, answer.cut !== "none" && !answer.clientLeaves), {
        headers: { "content-type": "text/event-stream" },
      });
    }
  }
}

interface Wire {
  tenant: string;
  kind: "admit" | "adjust";
  requests: number;
  tokens: number;
  admitted?: boolean;
}

function edge(now: () => number) {
  const ledgers = new Map<string, QuotaLedger>();
  const ledgerOf = (name: string) => {
    const ledger = ledgers.get(name) ?? new QuotaLedger();
    ledgers.set(name, ledger);
    return ledger;
  };
  const wire: Wire[] = [];
  const quotas = {
    getByName(tenant: string) {
      const ledger = ledgerOf(tenant);
      return {
        async admit(limits: QuotaLimits, tokens: number, lease?: unknown) {
          expect(lease).toBeUndefined();
          const verdict = ledger.admit(limits, tokens, now());
          wire.push({ tenant, kind: "admit", requests: 1, tokens, admitted: verdict.admitted });
          return verdict;
        },
        async adjust(limits: QuotaLimits, requests: number, tokens: number) {
          wire.push({ tenant, kind: "adjust", requests, tokens });
          return ledger.adjust(limits, requests, tokens, now());
        },
        async returnLease() {
          throw new Error("no leases here");
        },
      };
    },
  };
  const scripts = new Map<string, { req: Req; controller: AbortController; attempt: number }>();
  const routerFor = (id: string) => ({
    acquire: async (_d: string, _s: number, _ticket: string) => {
      const script = scripts.get(id) as { req: Req; controller: AbortController };
      if (script.req.router === "reject")
        return { kind: "rejected", status: 429, message: "full", retryAfterS: 1, retryAfterMs: 1000 };
      if (script.req.router === "clientLeft") script.controller.abort();
      if (script.req.router === "throws") throw Object.assign(new Error("router bug"), { remote: true });
      return { kind: "admitted", replica: "https://gpu.example" };
    },
    cancel: async () => undefined,
    releaseAll: async () => undefined,
  });
  const app = new Hono();
  app.post(
    "/*",
    spillway({
      routers: (c) => ({ getByName: () => routerFor(c.req.header("x-test-id") as string) }) as never,
      quotas: () => quotas as never,
      tenantOf: (c) => PLANS[Number(c.req.header("x-test-tenant"))] as Plan,
      connectAttempts: 2,
    }) as never,
  );
  // A router that throws fails the request, as the ready Worker's error handler answers it (without its log line).
  app.onError(() => new Response("internal error", { status: 500 }));
  const env = {
    SPILLWAY_CONFIG: JSON.stringify({
      logRejections: false,
      deployments: { m: { replicas: ["https://gpu.example"] } },
      tenants: { quotaLeaseMs: 0, defaultMaxTokens: DEFAULT_MAX_TOKENS },
    }),
  };
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {}, props: {} };
  vi.stubGlobal("fetch", async (_url: string, init: RequestInit) => {
    const id = new Headers(init.headers).get("x-test-id") as string;
    const script = scripts.get(id) as { req: Req; controller: AbortController; attempt: number };
    const attempt = script.req.attempts[script.attempt++] as Attempt;
    if (attempt.kind === "unreachable") throw new TypeError("connection refused");
    if (attempt.kind === "clientGone") {
      const signal = init.signal as AbortSignal;
      return new Promise<Response>((_, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        script.controller.abort();
      });
    }
    return backendAnswer(attempt.answer);
  });
  let ids = 0;
  return {
    wire,
    ledgerOf,
    async send(req: Req): Promise<{ status: number; headers: Headers; body: string }> {
      const id = `r${ids++}`;
      const controller = new AbortController();
      scripts.set(id, { req, controller, attempt: 0 });
      const body = JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: req.content }],
        ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
      });
      const request = new Request("https://edge.example/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", "x-test-id": id, "x-test-tenant": String(req.tenant) },
        body,
        signal: controller.signal,
      });
      const res = (await app.fetch(request, env, ctx as never)) as Response;
      // The attempt that answers the client: not one that cannot be reached, nor a replica's 503 (tried elsewhere).
      const answer = req.attempts.find(
        (a) =>
          a.kind !== "unreachable" && !(a.kind === "answer" && a.answer.kind === "json" && a.answer.status === 503),
      );
      const leaves = answer?.kind === "answer" && answer.answer.kind === "sse" && answer.answer.clientLeaves;
      let text = "";
      if (res.body && leaves && res.headers.get("content-type") === "text/event-stream") {
        const reader = res.body.getReader();
        await reader.read();
        controller.abort();
        await reader.cancel();
      } else text = await res.text();
      return { status: res.status, headers: res.headers, body: text };
    },
    async settled() {
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 1));
      for (let i = 0; i < pending.length; i++) await pending[i];
    },
    /** The body's text length (UTF-16 code units, not bytes: non-ASCII content tells them apart). */
    bodyLength(req: Req) {
      return JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: req.content }],
        ...(req.maxTokens !== undefined ? { max_tokens: req.maxTokens } : {}),
      }).length;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The model

/** The documented final charge of an admitted request: [requests, tokens]. */
function documentedCharge(req: Req, reserved: number): [number, number] {
  if (req.router !== "admit") return [0, 0];
  for (const attempt of req.attempts) {
    if (attempt.kind === "unreachable") continue;
    if (attempt.kind === "clientGone") return [1, reserved];
    const answer = attempt.answer;
    // A replica's 503 took nothing: the next replica is tried, as for one that cannot be reached.
    if (answer.kind === "json" && answer.status === 503) continue;
    // A replica's own 429 is passed on, not retried; it did no work: refunded.
    if (answer.kind === "json" && answer.status === 429) return [0, 0];
    if (answer.kind === "json") {
      const used = answer.notJson ? undefined : usageOf(answer.usage);
      return [1, used ?? reserved];
    }
    if (answer.kind !== "sse" || answer.clientLeaves || answer.cut === "beforeUsage") return [1, reserved];
    // A stream cut after its usage event: the relay ends it with an error event, and the usage read counts.
    return [1, usageOf(answer.usage) ?? reserved];
  }
  return [0, 0]; // every replica unreachable or answering 503: refunded
}

interface Bucket {
  limit: number;
  level: number;
}

function refill(bucket: Bucket | undefined, ms: number) {
  if (bucket) bucket.level = Math.min(bucket.limit, bucket.level + (ms * bucket.limit) / 60_000);
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("a tenant's quota charge for a request, end to end", () => {
  it("charges exactly the documented amount (reservation, usage, refunds), once; the buckets and headers match the model", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 12 }), async (steps) => {
        let clock = 1_000_000;
        const e = edge(() => clock);
        const buckets = PLANS.map((p) => ({
          requests:
            p.requestsPerMinute === undefined ? undefined : { limit: p.requestsPerMinute, level: p.requestsPerMinute },
          tokens: p.tokensPerMinute === undefined ? undefined : { limit: p.tokensPerMinute, level: p.tokensPerMinute },
        }));
        for (const step of steps) {
          clock += step.waitS * 1000;
          for (const b of buckets) {
            refill(b.requests, step.waitS * 1000);
            refill(b.tokens, step.waitS * 1000);
          }
          const wireBefore = e.wire.length;
          const answers = await Promise.all(step.batch.map((req) => e.send(req)));
          await e.settled();
          const lone = step.batch.length === 1;
          const admitted = e.wire.slice(wireBefore).filter((w) => w.kind === "admit" && w.admitted);
          // Each request's outcome, by the model.
          const expected = new Map<string, [number, number]>();
          step.batch.forEach((req, i) => {
            const plan = PLANS[req.tenant] as Plan;
            const reserved = estimateTokens(e.bodyLength(req), req.maxTokens, DEFAULT_MAX_TOKENS);
            const b = buckets[req.tenant] as { requests?: Bucket; tokens?: Bucket };
            const answer = answers[i] as { status: number; headers: Headers; body: string };
            const wasAdmitted = answer.status !== 429 || !answer.body.includes("tenant_quota_exceeded");
            const neverFits = b.tokens !== undefined && reserved > b.tokens.limit;
            if (neverFits) {
              expect(answer.status).toBe(400);
              expect(answer.body).toContain("tokens_exceed_quota");
              return;
            }
            const fits = (b.requests?.level ?? 1) >= 1 && (b.tokens?.level ?? reserved) >= reserved;
            if (lone) expect(wasAdmitted && answer.status !== 400).toBe(fits);
            if (!(wasAdmitted && answer.status !== 400)) return;
            // A 499 (the client left) is read by nobody, and a router that throws fails the request (the app's
            // error handler answers): neither carries quota headers.
            if (lone && answer.status !== 499 && req.router !== "throws") {
              const remainingAfter = (bucket: Bucket | undefined, take: number) =>
                bucket === undefined ? null : String(Math.max(0, Math.floor(bucket.level - take + 1e-6)));
              expect(answer.headers.get("x-ratelimit-remaining-requests")).toBe(remainingAfter(b.requests, 1));
              expect(answer.headers.get("x-ratelimit-remaining-tokens")).toBe(remainingAfter(b.tokens, reserved));
            }
            const [requests, tokens] = documentedCharge(req, reserved);
            const sum = expected.get(plan.name) ?? [0, 0];
            expected.set(plan.name, [sum[0] + requests, sum[1] + tokens]);
          });
          // Nothing charged twice, nothing lost: the ledger's net per tenant is the model's.
          const corrections = e.wire.slice(wireBefore).filter((w) => w.kind === "adjust");
          expect(corrections.length).toBeLessThanOrEqual(admitted.length);
          for (const [t, plan] of PLANS.entries()) {
            const b = buckets[t] as { requests?: Bucket; tokens?: Bucket };
            const [requests, tokens] = expected.get(plan.name) ?? [0, 0];
            const mine = e.wire.slice(wireBefore).filter((w) => w.tenant === plan.name);
            const net = (unit: "requests" | "tokens") =>
              mine.reduce((s, w) => s + (w.kind === "admit" ? (w.admitted ? w[unit] : 0) : -w[unit]), 0);
            expect({ tenant: plan.name, requests: net("requests"), tokens: net("tokens") }).toEqual({
              tenant: plan.name,
              requests,
              tokens,
            });
            if (b.requests) b.requests.level -= requests;
            if (b.tokens) b.tokens.level -= tokens;
            // A ledger no request reached has no buckets yet (full, as the model's).
            if (!e.wire.some((w) => w.tenant === plan.name)) continue;
            const state: QuotaVerdict = e.ledgerOf(plan.name).adjust(plan, 0, 0, clock);
            if (b.requests) expect(state.requests?.remaining).toBe(Math.max(0, Math.floor(b.requests.level + 1e-6)));
            if (b.tokens) expect(state.tokens?.remaining).toBe(Math.max(0, Math.floor(b.tokens.level + 1e-6)));
          }
        }
      }),
      runs,
    );
  });
});
