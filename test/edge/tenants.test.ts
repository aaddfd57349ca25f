import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import readme from "../../README.md?raw";
import type { Env } from "../../src/edge/env";
import type { FleetOverview } from "../../src/edge/fleet-overview";
import { spillway } from "../../src/edge/middleware";
import worker from "../../src/edge/worker";
import { edgeTestConfig, TEST_ADMIN_TOKEN, TEST_KEYS } from "../support/edge-test-config";
import { releaseHold, replicaState, stats0, waitFor } from "./helpers";

function ask(key: string | undefined, content: string, extra: Record<string, unknown> = {}, headers = {}) {
  return SELF.fetch("http://spillway/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: JSON.stringify({ model: "tenants", messages: [{ role: "user", content }], ...extra }),
  });
}

/** One series' value in the Prometheus text of `/spillway/metrics` (0 when absent). */
/**
 * `app` (a user's Hono app, or the repository Worker) answering `request` inside workerd as a Worker does, with
 * `bindings` (the tests' own by default) and its `waitUntil` work finished.
 */
async function fetchIn(
  app: { fetch(request: Request, bindings: Env, ctx: ExecutionContext): Response | Promise<Response> },
  request: Request,
  bindings: Env = env,
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(request, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** A chat completion for the `tenants` deployment saying `content`, with `headers` beside its content type. */
function chatRequest(content: string, headers: Record<string, string> = {}): Request {
  return new Request("http://spillway/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "tenants", messages: [{ role: "user", content }] }),
  });
}

async function metric(series: string): Promise<number> {
  const res = await SELF.fetch("http://spillway/spillway/metrics", {
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
  });
  const line = (await res.text()).split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.split(" ")[1]);
}

async function errorOf(res: Response): Promise<{ type: string; code: string; message: string; param: string | null }> {
  return ((await res.json()) as { error: { type: string; code: string; message: string; param: string | null } }).error;
}

describe("tenants at the edge", () => {
  it("a request per minute quota: the 4th of 3 is a 429 of the tenant's own, with the exact wait and headers", async () => {
    const refusedBefore = await metric('spillway_tenant_quota_refused_total{tenant="small"}');
    for (let i = 0; i < 3; i++) {
      const res = await ask(TEST_KEYS.small, `ok${i}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit-requests")).toBe("3");
      expect(res.headers.get("x-ratelimit-remaining-requests")).toBe(String(2 - i));
      expect(res.headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+ms|\d+(\.\d+)?s)$/);
      expect(res.headers.get("ratelimit-policy")).toBe('"requests";q=3;w=60');
      expect(res.headers.get("ratelimit")).toMatch(new RegExp(`^"requests";r=${2 - i};t=\\d+$`));
      expect(res.headers.get("x-ratelimit-limit-tokens")).toBeNull();
      await res.arrayBuffer();
    }
    const refused = await ask(TEST_KEYS.small, "one too many");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const ms = Number(refused.headers.get("retry-after-ms"));
    // One request refills every 20 s; the three took a few ms.
    expect(ms).toBeGreaterThan(15_000);
    expect(ms).toBeLessThanOrEqual(20_000);
    expect(Number(refused.headers.get("retry-after"))).toBe(Math.ceil(ms / 1000));
    const reset = refused.headers.get("x-ratelimit-reset-requests") as string;
    const parts = /^(?:(\d+)m)?(\d+(?:\.\d+)?)s$/.exec(reset);
    expect(parts).not.toBeNull();
    // Retry-After is never later than the quota's reset.
    expect(Number(parts?.[1] ?? 0) * 60_000 + Number(parts?.[2]) * 1000).toBeGreaterThanOrEqual(ms);
    const error = await errorOf(refused);
    expect(error.code).toBe("tenant_quota_exceeded");
    expect(error.type).toBe("requests");
    expect(error.message).toContain("tenant small");
    expect(error.message).not.toContain(TEST_KEYS.small);
    // The refusal never reached the fleet; the tenant's quota counted it.
    expect((await replicaState("tenants")).served).not.toContain("one too many");
    expect(await metric('spillway_tenant_quota_refused_total{tenant="small"}')).toBe(refusedBefore + 1);
  });

  it("a large tenant is served from its isolate's quota lease through the real quota object", async () => {
    // 600 per minute: a lease of 10 requests a second, so 25 requests take a few leases (and return leftovers).
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await ask(TEST_KEYS.bulk, `bulk${i}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit-requests")).toBe("600");
      expect(res.headers.get("ratelimit-policy")).toBe('"requests";q=600;w=60, "tokens";q=6000000;w=60');
      remaining.push(res.headers.get("x-ratelimit-remaining-requests"));
      await res.arrayBuffer();
    }
    // The first is charged by the object and brings the lease: the quota minus itself.
    expect(remaining[0]).toBe("599");
    // Every answer says what is left, a whole number below the quota (an absent header is no 0).
    for (const [i, left] of remaining.entries()) {
      expect(left, `bulk${i}`).toMatch(/^\d+$/);
      expect(Number(left), `bulk${i}`).toBeLessThan(600);
    }
    // Every request was served by the fleet, none refused.
    const served = (await replicaState("tenants")).served;
    for (let i = 0; i < 25; i++) expect(served).toContain(`bulk${i}`);
  });

  it("tokens are charged as prompt estimate + max_tokens and corrected with the response's usage", async () => {
    const chargedTotal = () => metric('spillway_tenant_tokens_charged_total{tenant="tokens"}');
    const refundedTotal = () => metric('spillway_tenant_tokens_refunded_total{tenant="tokens"}');
    const [chargedBefore, refundedBefore] = [await chargedTotal(), await refundedTotal()];
    const first = await ask(TEST_KEYS.tokens, "usage:10", { max_tokens: 500 });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("1000");
    const charged = 1000 - Number(first.headers.get("x-ratelimit-remaining-tokens"));
    expect(charged).toBeGreaterThan(500);
    await first.arrayBuffer();
    // 500 + prompt would not fit twice; after the correction to 10 tokens it does.
    let second: Response | undefined;
    for (let i = 0; i < 50; i++) {
      second = await ask(TEST_KEYS.tokens, "usage:10", { max_tokens: 500, stream: true });
      if (second.status === 200) break;
      await second.arrayBuffer();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(second?.status).toBe(200);
    const remaining = Number(second?.headers.get("x-ratelimit-remaining-tokens"));
    expect(remaining).toBeLessThan(500);
    expect(remaining).toBeGreaterThan(1000 - 2 * charged);
    expect(await second?.text()).toContain('"total_tokens":10');
    // The metrics: charged - refunded is what the two answers used (10 tokens each), once both are corrected.
    await waitFor(
      async () => (await chargedTotal()) - chargedBefore - ((await refundedTotal()) - refundedBefore) === 20,
      "both charges corrected",
    );
    // A request larger than a minute's tokens can never fit: 400, not a 429 to retry.
    const tooLarge = await ask(TEST_KEYS.tokens, "big", { max_tokens: 5000 });
    expect(tooLarge.status).toBe(400);
    expect((await errorOf(tooLarge)).code).toBe("tokens_exceed_quota");
  });

  it("a request without max_tokens too large for the token quota is told the default was assumed", async () => {
    // The tenant's quota is 1000 tokens a minute; tenants.defaultMaxTokens (1024) alone is more.
    const res = await ask(TEST_KEYS.tokens, "no max_tokens");
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error).toMatchObject({ code: "tokens_exceed_quota", param: "max_tokens" });
    expect(error.message).toContain("The request sets no max_tokens, so 1024 are assumed");
    // A request that set max_tokens itself is told to lower it, as before.
    const explicit = await errorOf(await ask(TEST_KEYS.tokens, "big", { max_tokens: 5000 }));
    expect(explicit.message).toMatch(/Requested \d+\. Lower max_tokens or the prompt\.$/);
  });

  it("the token quota charges the completion budget the engine runs with, not a smaller one written beside it", async () => {
    // 5000 completion tokens never fit the tenant's 1000 a minute. A legacy completion runs with `max_tokens` (vLLM,
    // SGLang and spillway's engine ignore `max_completion_tokens` there), and vLLM and SGLang run a chat request whose
    // `max_completion_tokens` is 0 with its `max_tokens`: both were admitted, charged for 1 or 0 completion tokens.
    const legacy = await SELF.fetch("http://spillway/v1/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TEST_KEYS.tokens}` },
      body: JSON.stringify({ model: "tenants", prompt: "budget", max_tokens: 5000, max_completion_tokens: 1 }),
    });
    expect(legacy.status).toBe(400);
    expect(await errorOf(legacy)).toMatchObject({ code: "tokens_exceed_quota", param: "max_tokens" });
    const chat = await ask(TEST_KEYS.tokens, "budget", { max_tokens: 5000, max_completion_tokens: 0 });
    expect(chat.status).toBe(400);
    expect(await errorOf(chat)).toMatchObject({ code: "tokens_exceed_quota", param: "max_tokens" });
  });

  it("the token quota charges every completion a request asks for (n, or best_of), each with its budget", async () => {
    // 3 x 400 and 4 x 300 completion tokens never fit the tenant's 1000 a minute; each was charged as one completion
    // of 400 or 300 (admitted, 200), while the engine generates all of them.
    const chat = await ask(TEST_KEYS.tokens, "many", { max_tokens: 400, n: 3 });
    expect(chat.status).toBe(400);
    expect(await errorOf(chat)).toMatchObject({ code: "tokens_exceed_quota", param: "max_tokens" });
    const legacy = await SELF.fetch("http://spillway/v1/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TEST_KEYS.tokens}` },
      body: JSON.stringify({ model: "tenants", prompt: "many", max_tokens: 300, n: 1, best_of: 4 }),
    });
    expect(legacy.status).toBe(400);
    expect(await errorOf(legacy)).toMatchObject({ code: "tokens_exceed_quota", param: "max_tokens" });
    for (const [field, value] of [
      ["n", 0],
      ["best_of", -1],
      ["n", 1.5],
    ] as const) {
      const bad = await ask(TEST_KEYS.tokens, "bad", { max_tokens: 10, [field]: value });
      expect(bad.status).toBe(400);
      expect(await errorOf(bad)).toMatchObject({ param: field });
    }
  });

  it("service_tier: flex is accepted, priority only where the plan allows it, anything else is a clean 400", async () => {
    expect((await ask(undefined, "flex", { service_tier: "flex" })).status).toBe(200);
    expect((await ask(undefined, "auto", { service_tier: "auto" })).status).toBe(200);
    // OpenAI's reserved-capacity tier, which openai-node's types offer: the plan's class (before: a 400).
    expect((await ask(undefined, "scale", { service_tier: "scale" })).status).toBe(200);
    const denied = await ask(undefined, "prio", { service_tier: "priority" });
    expect(denied.status).toBe(400);
    expect(await errorOf(denied)).toMatchObject({ param: "service_tier", code: "invalid_service_tier" });
    expect((await ask(TEST_KEYS.priority, "prio", { service_tier: "priority" })).status).toBe(200);
    for (const bad of ["turbo", 1, {}, [], true, ""]) {
      const res = await ask(undefined, "bad", { service_tier: bad });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).param).toBe("service_tier");
    }
  });

  it("unknown and malformed keys are the anonymous tenant when keys are optional; no key reaches an engine", async () => {
    const before = (await replicaState("tenants")).withAuthorization;
    for (const authorization of ["Bearer sk-unknown", "Basic Zm9vOmJhcg==", "Bearer ", "Bearer a b", "x".repeat(600)]) {
      const res = await ask(undefined, "anon", {}, { authorization });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit-requests")).toBeNull();
      await res.arrayBuffer();
    }
    await (await ask(TEST_KEYS.priority, "keyed")).arrayBuffer();
    expect((await replicaState("tenants")).withAuthorization).toBe(before);
  });

  it("keys required: no key or an unknown one is a 401 in OpenAI's form; a known key is served", async () => {
    const config = { ...edgeTestConfig(inject("fakeEngineUrl")) };
    config.tenants = { ...config.tenants, requireKey: true };
    // The Worker reads this configuration (the routers keep the tests' own: same deployments).
    const strictEnv = { ...env, SPILLWAY_CONFIG: JSON.stringify(config) };
    const app = new Hono<{ Bindings: Env }>().post("/v1/chat/completions", spillway());
    const call = (authorization?: string) =>
      fetchIn(app, chatRequest("strict", authorization ? { authorization } : {}), strictEnv);
    for (const authorization of [undefined, "Bearer sk-nope", "Basic abc", "Bearer"]) {
      const res = await call(authorization);
      expect(res.status).toBe(401);
      const error = await errorOf(res);
      expect(error).toMatchObject({ type: "invalid_request_error", code: "invalid_api_key" });
      expect(error.message).not.toContain("sk-nope");
    }
    expect((await call(`Bearer ${TEST_KEYS.priority}`)).status).toBe(200);
  });

  it("keys required: the repository Worker's GET /v1/models stays open, as README's requireKey row says", async () => {
    const config = { ...edgeTestConfig(inject("fakeEngineUrl")) };
    config.tenants = { ...config.tenants, requireKey: true };
    const strictEnv = { ...env, SPILLWAY_CONFIG: JSON.stringify(config) };
    const call = (path: string) => fetchIn(worker, new Request(`http://spillway${path}`), strictEnv);
    const row = readme.split("\n").find((line) => line.startsWith("| `tenants.requireKey` |")) ?? "";
    expect(row).toContain("`GET /v1/models` and `GET /v1/models/{id}` stay open");
    // No key: the listing and one model are served, a completion is refused.
    expect((await call("/v1/models")).status).toBe(200);
    expect((await call("/v1/models/tenants")).status).toBe(200);
    const completion = await fetchIn(worker, chatRequest("strict"), strictEnv);
    expect(completion.status).toBe(401);
  });

  it("an operator's resolver names the tenant; an invalid plan from it is an internal error, not a crash", async () => {
    const app = new Hono<{ Bindings: Env }>().post(
      "/v1/chat/completions",
      spillway({
        tenantOf: (c) =>
          c.req.header("x-team") === "ops" ? { name: "ops", requestsPerMinute: 100 } : { name: "bad name!" },
      }),
    );
    app.onError(() => new Response("internal", { status: 500 }));
    const call = (team: string) => fetchIn(app, chatRequest("op", { "x-team": team }));
    const ok = await call("ops");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-limit-requests")).toBe("100");
    expect((await call("other")).status).toBe(500);
  });

  it("two callers whose plans have the same name are one tenant: they share its quota, as README's name row says", async () => {
    const row = readme.split("\n").find((line) => line.startsWith("| plan `.name` |")) ?? "";
    expect(row).toContain("Keys whose plans have the same name are one tenant: they share its quotas");
    // Two customers' keys, both given the name "shared" and 2 requests a minute each.
    const app = new Hono<{ Bindings: Env }>().post(
      "/v1/chat/completions",
      spillway({ tenantOf: () => ({ name: "shared", requestsPerMinute: 2 }) }),
    );
    const call = (who: string) => fetchIn(app, chatRequest(`shared ${who}`, { "x-customer": who }));
    expect((await call("a")).status).toBe(200);
    expect((await call("b")).status).toBe(200);
    // a has used one of its 2, but b's took the other: one bucket.
    const third = await call("a");
    expect(third.status).toBe(429);
    expect((await errorOf(third)).code).toBe("tenant_quota_exceeded");
  });

  it("a full queue refuses the flooding tenant's newest request, not the other tenant's", async () => {
    const fair = (key: string, content: string) => ask(key, content, { model: "fair" });
    const held = fair(TEST_KEYS.alpha, "hold:h");
    await waitFor(async () => (await replicaState("fair")).inflight === 1, "alpha's first at the engine");
    const shedAlpha = () =>
      metric('spillway_tenant_shed_total{deployment="fair",shard="0",tenant="alpha",reason="capacity"}');
    const shedBefore = await shedAlpha();
    // One at a time, so q2 is alpha's newest.
    const queued1 = fair(TEST_KEYS.alpha, "hold:q1");
    await waitFor(async () => (await stats0("fair")).queueDepth === 1, "q1 queued");
    const queued2 = fair(TEST_KEYS.alpha, "hold:q2");
    await waitFor(async () => (await stats0("fair")).queueDepth === 2, "alpha fills the queue");
    // alpha again: alpha is the tenant most over its share, so alpha's own arrival is refused.
    expect((await fair(TEST_KEYS.alpha, "more")).status).toBe(429);
    // beta: alpha's newest queued request is pushed out instead, and beta waits for the next slot.
    const beta = fair(TEST_KEYS.beta, "hold:b");
    const pushed = await queued2;
    expect(pushed.status).toBe(429);
    expect((await errorOf(pushed)).code).toBe("rate_limit_exceeded");
    for (const key of ["h", "q1", "b"]) await releaseHold("fair", key);
    expect((await held).status).toBe(200);
    expect((await queued1).status).toBe(200);
    expect((await beta).status).toBe(200);
    // alpha already had its turn (h): beta's request goes before alpha's next.
    expect((await replicaState("fair")).served).toEqual(["hold:h", "hold:b", "hold:q1"]);
    // Both of alpha's refusals are counted against alpha, none against beta.
    expect(await shedAlpha()).toBe(shedBefore + 2);
    expect(
      await metric('spillway_tenant_shed_total{deployment="fair",shard="0",tenant="beta",reason="capacity"}'),
    ).toBe(0);
    // The dashboard's overview: per tenant, summed over shards.
    const overview = (await (
      await SELF.fetch("http://spillway/spillway/overview?replicas=0", {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      })
    ).json()) as FleetOverview;
    expect(overview.deployments.find((d) => d.deployment === "fair")?.tenants).toEqual({
      alpha: { admitted: 2, shed: 2 },
      beta: { admitted: 1, shed: 0 },
    });
  });
});
