import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import readme from "../../README.md?raw";
import type { DeploymentRouter } from "../../src/edge/deployment-router";
import type { Env } from "../../src/edge/env";
import { spillway } from "../../src/edge/middleware";
import { edgeTestConfig, TEST_KEYS } from "../support/edge-test-config";
import { chat, releaseHold, replicaState, stats0, waitFor } from "./helpers";

/** One row of the README's "What a client is answered when spillway, not the engine, answers". */
interface AnswerRow {
  when: string;
  status: string;
  error: string;
  headers: string;
}

/** The two tables: the answers spillway gives itself, and those of the tenants' own refusals. */
const ANSWERS = "What a client is answered when spillway, not the engine, answers";
const TENANT_ANSWERS = "**What a client sees in each refusal:**";

/** The README's table that follows `marker`, row by row. */
function readmeAnswers(marker: string): AnswerRow[] {
  const lines = readme.split("\n");
  const from = lines.findIndex((l) => l.startsWith(marker));
  const head = lines.findIndex(
    (l, i) => i > from && l.startsWith("| when | status | `error.type` / `error.code` | headers |"),
  );
  if (from < 0 || head < 0) throw new Error(`README.md has no table after "${marker}"`);
  const rows: AnswerRow[] = [];
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith("|")) break;
    const [when, status, error, headers] = line.split(" | ").map((c) => c.replace(/^\| ?| ?\|$/g, ""));
    rows.push({ when: when as string, status: status as string, error: error as string, headers: headers as string });
  }
  return rows;
}

/** The row of the table after `marker` whose "when" starts with `start` (each case below names its row). */
function row(start: string, marker = ANSWERS): AnswerRow {
  const found = readmeAnswers(marker).find((r) => r.when.startsWith(start));
  if (!found) throw new Error(`README.md's table after "${marker}" has no row starting "${start}"`);
  return found;
}

/** The `type` and `code` a cell names (`type` / `code`): the first backticked word on each side, "null" a null code. */
function typeAndCode(cell: string): { type: string; code: string | null } {
  const [left, right] = cell.split(" / ");
  const first = (text: string | undefined) => /`([^`]+)`/.exec(text ?? "")?.[1];
  const type = first(left);
  const code = first(right);
  if (type === undefined || code === undefined) throw new Error(`no \`type\` / \`code\` in "${cell}"`);
  return { type, code: code === "null" ? null : code };
}

/** Checks a response against a row: status, the error body's type and code, and the Retry-After headers. */
async function expectAnswer(res: Response, expected: { status: number; type: string; code: string | null }) {
  expect(res.status).toBe(expected.status);
  const body = (await res.json()) as { error: { message: string; type: string; code: string | null } };
  expect(body.error).toMatchObject({ type: expected.type, code: expected.code });
  expect(typeof body.error.message).toBe("string");
}

/** Checks a response against a row whose status cell is one status code. */
async function expectRowAnswer(r: AnswerRow, res: Response) {
  expect(r.status).toMatch(/^\d{3}$/);
  await expectAnswer(res, { status: Number(r.status), ...typeAndCode(r.error) });
}

const post = (body: string) =>
  SELF.fetch("http://spillway/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });

/** A Worker built from the middleware, with `routers` or a configuration other than the test Worker's. */
async function callApp(options: {
  requireKey?: boolean;
  routers?: DurableObjectNamespace<DeploymentRouter>;
  /** `SPILLWAY_CONFIG` as given, in place of the test Worker's (a broken one). */
  rawConfig?: string;
}) {
  const config = { ...edgeTestConfig(inject("fakeEngineUrl")) };
  if (options.requireKey) config.tenants = { ...config.tenants, requireKey: true };
  const routers = options.routers;
  const app = new Hono<{ Bindings: Env }>().post(
    "/v1/chat/completions",
    spillway(routers ? { routers: () => routers } : {}),
  );
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request("http://spillway/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "misc", messages: [{ role: "user", content: "x" }] }),
    }),
    { ...env, SPILLWAY_CONFIG: options.rawConfig ?? JSON.stringify(config) },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

describe("README: what a client is answered when spillway, not the engine, answers", () => {
  it("has a row for each case tested here, and no other", () => {
    expect(readmeAnswers(ANSWERS).map((r) => r.when.slice(0, 24))).toEqual([
      "`SPILLWAY_CONFIG` is mis",
      "`tenants.requireKey` and",
      "the body is not JSON or ",
      "the body is larger than ",
      "the body's `model` is no",
      "the deployment's `upstre",
      "the router sheds it (que",
      "every replica is down (o",
      "the router cannot answer",
      "no replica could be reac",
      "the replica sent no resp",
      "the replica failed while",
      "the replica answered 401",
      "the replica sent nothing",
    ]);
  });

  it("a SPILLWAY_CONFIG that is not valid", async () => {
    await expectRowAnswer(row("`SPILLWAY_CONFIG` is missing or invalid"), await callApp({ rawConfig: "{oops" }));
  });

  it("a required key missing", async () => {
    await expectRowAnswer(row("`tenants.requireKey`"), await callApp({ requireKey: true }));
  });

  it.each([
    ["not JSON", "{oops"],
    ["not an object", "[1]"],
    ["without model", JSON.stringify({ messages: [{ role: "user", content: "x" }] })],
    ["with stream of the wrong type", JSON.stringify({ model: "misc", stream: "yes", messages: [] })],
  ])("a body %s", async (_name, body) => {
    await expectRowAnswer(row("the body is not JSON"), await post(body));
  });

  it.each([
    [
      "a body past maxBodyBytes",
      "the body is larger than `maxBodyBytes`",
      () => post(JSON.stringify({ model: "misc", messages: [{ role: "user", content: "x".repeat(70_000) }] })),
    ],
    ["a model that is no deployment", "the body's `model` is no deployment", () => chat("no-such-model", "x")],
    [
      "an upstream key secret that is not bound",
      "the deployment's `upstreamApiKeySecret` names no secret",
      () => chat("missing-key", "x"),
    ],
    [
      "a replica that sends no headers within upstreamTimeoutS",
      "the replica sent no response headers",
      () => chat("answers-hang", "hang"),
    ],
    [
      "a replica that fails while sending a non-streamed answer",
      "the replica failed while sending",
      () => chat("answers-kill", "jsonkill"),
    ],
    [
      "a replica that refuses the gateway's credentials (401)",
      "the replica answered 401",
      () => chat("answers-401", "x"),
    ],
    [
      "a replica that goes silent for upstreamIdleTimeoutS while sending a non-streamed answer",
      "the replica sent nothing for `upstreamIdleTimeoutS`",
      () => chat("answers-stall", "jsonstall"),
    ],
  ] as const)("%s", async (_name, start, send) => {
    await expectRowAnswer(row(start), await send());
  });

  it("shed by the router: 429, or 503 with backpressure.statusCode, with the hint's headers when it has one", async () => {
    const r = row("the router sheds it");
    expect(r.status).toBe("429, or 503 with `backpressure.statusCode`");
    const [shed429, shed503] = r.error.split(" (503: ").map(typeAndCode);
    for (const [deployment, status, error] of [
      ["answers-429", 429, shed429],
      ["answers-503", 503, shed503],
    ] as const) {
      const first = chat(deployment, "hold:1");
      await waitFor(async () => (await replicaState(deployment)).inflight === 1, "first request at the engine");
      const second = chat(deployment, "hold:2");
      await waitFor(async () => (await stats0(deployment)).queueDepth === 1, "second request queued");
      const third = await chat(deployment, "third");
      const headers = [third.headers.get("retry-after"), third.headers.get("retry-after-ms")];
      await expectAnswer(third, { status, ...(error as { type: string; code: string | null }) });
      // answers-503 has a static retryAfterS; answers-429's router is cold and has none, so its refusal has no hint.
      if (deployment === "answers-503") expect(headers.every((h) => h !== null)).toBe(true);
      else expect(headers).toEqual([null, null]);
      await releaseHold(deployment, "1");
      await releaseHold(deployment, "2");
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
    }
    expect(r.headers).toContain("`retry-after`, `retry-after-ms` when there is a hint (a router still cold sends none");
  });

  it("a router that cannot answer, with routerUnavailable shed (the default)", async () => {
    const r = row("the router cannot answer and `routerUnavailable` is `shed`");
    const fail = () => Object.assign(new Error("Durable Object is overloaded."), { overloaded: true });
    const stub = {
      acquire: async () => {
        throw fail();
      },
      release: async () => {},
      cancel: async () => {},
    };
    const routers = { getByName: () => stub } as unknown as DurableObjectNamespace<DeploymentRouter>;
    await expectRowAnswer(r, await callApp({ routers }));
  });

  it("no replica reachable, connectAttempts times; then every replica down", async () => {
    // Two replicas nobody probes: the first attempt fails at one, the second at the other (connectAttempts 2).
    await expectRowAnswer(row("no replica could be reached"), await chat("answers-dead", "x"));
    // Both are marked down now: the router refuses at once, with the deployment's static hint.
    const down = row("every replica is down");
    const res = await chat("answers-dead", "y");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(down.headers).toBe("the static `retryAfterS`, if set");
    await expectRowAnswer(down, res);
  });
});

/** The header groups a tenant's refusal may carry, as the table's headers cell names them. */
const HEADER_GROUPS: { cell: string; carried: (res: Response) => boolean }[] = [
  { cell: "`retry-after`", carried: (res) => res.headers.has("retry-after") },
  { cell: "`retry-after-ms`", carried: (res) => res.headers.has("retry-after-ms") },
  { cell: "`x-ratelimit-*`", carried: (res) => [...res.headers.keys()].some((h) => h.startsWith("x-ratelimit-")) },
  {
    cell: "`ratelimit*`",
    carried: (res) => res.headers.has("ratelimit") || res.headers.has("ratelimit-policy"),
  },
];

/** The header groups `res` carries that the row's headers cell does not name (a cell of "-" names none). */
function unnamedHeaders(r: AnswerRow, res: Response): string[] {
  return HEADER_GROUPS.filter((g) => g.carried(res) && !r.headers.includes(g.cell)).map((g) => g.cell);
}

/** A chat completion as a tenant (`key`), with `extra` fields in the body. */
function askAs(key: string | undefined, model: string, content: string, extra: Record<string, unknown> = {}) {
  return SELF.fetch("http://spillway/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ model, messages: [{ role: "user", content }], ...extra }),
  });
}

describe("README: what a tenant's client sees in each refusal", () => {
  it("has a row for each case tested here, and no other", () => {
    expect(readmeAnswers(TENANT_ANSWERS).map((r) => r.when.slice(0, 24))).toEqual([
      "keys required, none or u",
      "bad `service_tier`, or `",
      "the tenant's request or ",
      "one request needs more t",
      "the deployment is full (",
    ]);
  });

  it("keys required, none given", async () => {
    const r = row("keys required", TENANT_ANSWERS);
    const res = await callApp({ requireKey: true });
    expect(unnamedHeaders(r, res)).toEqual([]);
    await expectRowAnswer(r, res);
  });

  it("a service_tier the edge does not know, or priority outside the plan", async () => {
    const r = row("bad `service_tier`", TENANT_ANSWERS);
    for (const tier of ["turbo", "priority"])
      await expectRowAnswer(r, await askAs(undefined, "misc", "x", { service_tier: tier }));
    // A tenant with a quota: the tier is refused before any charge, so no rate-limit headers either.
    const quotaTenant = await askAs(TEST_KEYS.answersTokens, "misc", "x", { service_tier: "turbo" });
    expect(unnamedHeaders(r, quotaTenant)).toEqual([]);
    await expectRowAnswer(r, quotaTenant);
  });

  it("the tenant's request quota spent", async () => {
    const r = row("the tenant's request or token quota is spent", TENANT_ANSWERS);
    expect(r.status).toBe("429");
    const { code } = typeAndCode(r.error);
    expect(r.error.startsWith("`requests` or `tokens` /")).toBe(true);
    const first = await askAs(TEST_KEYS.answersQuota, "misc", "the one of the minute");
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const refused = await askAs(TEST_KEYS.answersQuota, "misc", "one too many");
    const headers = ["retry-after", "retry-after-ms", "x-ratelimit-limit-requests", "ratelimit"].map((h) =>
      refused.headers.get(h),
    );
    expect(unnamedHeaders(r, refused)).toEqual([]);
    await expectAnswer(refused, { status: 429, type: "requests", code });
    expect(headers.every((h) => h !== null)).toBe(true);
    expect(r.headers).toBe("`retry-after`, `retry-after-ms` (exact), `x-ratelimit-*`, `ratelimit*`");
  });

  it("one request larger than a minute's tokens", async () => {
    const r = row("one request needs more tokens than a minute's quota", TENANT_ANSWERS);
    const res = await askAs(TEST_KEYS.answersTokens, "misc", "big", { max_tokens: 5000 });
    const limit = res.headers.get("x-ratelimit-limit-tokens");
    expect(unnamedHeaders(r, res)).toEqual([]);
    await expectRowAnswer(r, res);
    expect(limit).toBe("100");
  });

  it("the deployment full for a tenant with a quota", async () => {
    const r = row("the deployment is full", TENANT_ANSWERS);
    expect(r.status).toBe("429 (or the configured 503)");
    const deployment = "answers-tenant";
    const first = askAs(TEST_KEYS.bulk, deployment, "hold:1");
    await waitFor(async () => (await replicaState(deployment)).inflight === 1, "first request at the engine");
    const second = askAs(TEST_KEYS.bulk, deployment, "hold:2");
    await waitFor(async () => (await stats0(deployment)).queueDepth === 1, "second request queued");
    const refused = await askAs(TEST_KEYS.bulk, deployment, "third");
    const headers = ["retry-after", "retry-after-ms", "x-ratelimit-limit-requests"].map((h) => refused.headers.get(h));
    expect(unnamedHeaders(r, refused)).toEqual([]);
    await expectAnswer(refused, { status: 429, ...typeAndCode(r.error) });
    // A cold router: the hint is the deployment's static retryAfterS.
    expect(headers.every((h) => h !== null)).toBe(true);
    expect(r.headers).toBe(
      "`retry-after`, `retry-after-ms` when there is a hint (computed; a router still cold sends the static `retryAfterS`, if set), `x-ratelimit-*`, `ratelimit*`",
    );
    await releaseHold(deployment, "1");
    await releaseHold(deployment, "2");
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
  });
});
