import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, inject, it, vi } from "vitest";
import { CONFIG_INVALID } from "../../src/edge/config-invalid";
import type { Env } from "../../src/edge/env";
import { spillway } from "../../src/edge/middleware";
import { spillwayModels } from "../../src/edge/models-routes";
import { edgeTestConfig, TEST_ADMIN_TOKEN } from "../support/edge-test-config";
import { chat, expectConfigInvalid, replicaState, stats0, waitFor } from "./helpers";

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  SELF.fetch(`http://spillway${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });

describe("the ready Worker's API", () => {
  it("lists the configured deployments as OpenAI models", async () => {
    const res = await SELF.fetch("http://spillway/v1/models");
    const body = (await res.json()) as { object: string; data: { id: string; object: string }[] };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toContain("ray-default");
    expect(body.data.every((m) => m.object === "model")).toBe(true);
  });

  it("retrieves a configured deployment as the list names it, and answers any other id with OpenAI's 404", async () => {
    // What openai-node's `models.retrieve(id)` asks (its id percent-encoded as one path segment).
    const list = (await (await SELF.fetch("http://spillway/v1/models")).json()) as { data: { id: string }[] };
    const listed = list.data.find((m) => m.id === "ray-default");
    const res = await SELF.fetch("http://spillway/v1/models/ray-default");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(listed);
    for (const id of ["no-such-model", "org%2Fno-such-model"]) {
      const missing = await SELF.fetch(`http://spillway/v1/models/${id}`);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: unknown }).error).toEqual({
        message: `The model \`${decodeURIComponent(id)}\` does not exist`,
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      });
    }
  });

  it("spillwayModels() on a user's app (bindings of its own) answers the models routes as the ready Worker does", async () => {
    // The package's export: a Worker built on it gets the same answers, from the same code, as this repository's.
    type UserEnv = { Bindings: Env & { VLLM_API_KEY: string }; Variables: { requestId: string } };
    const app = new Hono<UserEnv>().route("/", spillwayModels<UserEnv>());
    for (const [path, status] of [
      ["/v1/models", 200],
      ["/v1/models/ray-default", 200],
      ["/v1/models/org%2Fno-such-model", 404],
    ] as const) {
      const ctx = createExecutionContext();
      const mine = await app.fetch(new Request(`http://spillway${path}`), { ...env, VLLM_API_KEY: "k" }, ctx);
      await waitOnExecutionContext(ctx);
      const ready = await SELF.fetch(`http://spillway${path}`);
      expect(mine.status, path).toBe(status);
      expect(ready.status, path).toBe(status);
      expect(mine.headers.get("content-type")).toBe(ready.headers.get("content-type"));
      expect(await mine.text()).toBe(await ready.text());
    }
  });

  it("spillwayModels() under an invalid SPILLWAY_CONFIG answers the middleware's 500 config_invalid and logs why", async () => {
    // Before, the ConfigError escaped to Hono: a Worker built on the package answered a plain-text "Internal Server
    // Error" on /v1/models while its chat route answered config_invalid.
    const app = new Hono<{ Bindings: Env }>().route("/", spillwayModels());
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const path of ["/v1/models", "/v1/models/ray-default"]) {
        errors.mockClear();
        const ctx = createExecutionContext();
        const res = await app.fetch(new Request(`http://spillway${path}`), { ...env, SPILLWAY_CONFIG: "{oops" }, ctx);
        await waitOnExecutionContext(ctx);
        await expectConfigInvalid(res, errors.mock.calls, CONFIG_INVALID, /^SPILLWAY_CONFIG is not valid JSON/);
      }
    } finally {
      errors.mockRestore();
    }
  });

  it("answers a URL it has no route for as OpenAI and spillway's engine do: 404, code unknown_url", async () => {
    // Before: code `not_found`, where the engine (and OpenAI) say `unknown_url` for the same mistake.
    for (const [method, path] of [
      ["GET", "/v1/nothing/here"],
      ["POST", "/v1/x%0Ay"],
    ] as const) {
      const res = await SELF.fetch(`http://spillway${path}`, { method, body: method === "POST" ? "{}" : undefined });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: unknown }).error).toEqual({
        message: `Invalid URL (${method} ${path})`,
        type: "invalid_request_error",
        param: null,
        code: "unknown_url",
      });
    }
  });

  it("answers 404 for an unknown model, naming nothing internal", async () => {
    const res = await chat("no-such-model", "x");
    expect(res.status).toBe(404);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe("model_not_found");
    expect(text).not.toContain("127.0.0.1");
  });

  it.each([
    ["not JSON", "{oops", "not valid JSON"],
    ["an array", "[1]", "JSON object"],
    ["no model", JSON.stringify({ messages: [{ role: "user", content: "x" }] }), "model"],
    ["empty messages", JSON.stringify({ model: "misc", messages: [] }), "messages"],
    ["wrong-typed stream", JSON.stringify({ model: "misc", stream: "yes", messages: [{ role: "user" }] }), "stream"],
    [
      "negative max_tokens",
      JSON.stringify({ model: "misc", max_tokens: -1, messages: [{ role: "user" }] }),
      "`max_tokens` must be a non-negative integer",
    ],
    [
      "negative max_completion_tokens",
      JSON.stringify({ model: "misc", max_completion_tokens: -1, messages: [{ role: "user" }] }),
      "`max_completion_tokens` must be a non-negative integer",
    ],
  ])("refuses %s with a 400 before it takes a queue place", async (_name, body, mention) => {
    const res = await post("/v1/chat/completions", body);
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { message: string; type: string } }).error;
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toContain(mention);
  });

  it("refuses a completion without a prompt", async () => {
    expect((await post("/v1/completions", JSON.stringify({ model: "misc" }))).status).toBe(400);
  });

  it("refuses an oversized body with 413", async () => {
    const big = JSON.stringify({ model: "misc", messages: [{ role: "user", content: "x".repeat(70_000) }] });
    expect((await post("/v1/chat/completions", big)).status).toBe(413);
  });

  describe("under the default maxBodyBytes (the test Worker sets 64 KiB; a new operator sets nothing)", () => {
    const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
    /** A chat request in OpenAI's vision format: a question and an image of 2.25 MB as a 3 MB base64 data URL. */
    const visionRequest = JSON.stringify({
      model: "misc",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this image?" },
            // The PNG signature's first six bytes in base64 ("iVBORw0K"), over and over: 3,000,000 characters.
            { type: "image_url", image_url: { url: `data:image/png;base64,${"iVBORw0K".repeat(375_000)}` } },
          ],
        },
      ],
    });

    /** `body` posted to a Worker built from the middleware, with the test configuration less its `maxBodyBytes`. */
    async function postWithDefaultLimit(body: string) {
      const config = { ...edgeTestConfig(inject("fakeEngineUrl")), maxBodyBytes: undefined };
      const app = new Hono<{ Bindings: Env }>().post("/v1/chat/completions", spillway());
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request("http://spillway/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        }),
        { ...env, SPILLWAY_CONFIG: JSON.stringify(config) },
        ctx,
      );
      const text = await res.text();
      await waitOnExecutionContext(ctx);
      return { status: res.status, text };
    }

    it("serves a chat request with a 3 MB base64 image (the 1 MiB default refused it with 413)", async () => {
      expect(visionRequest.length).toBeGreaterThan(3_000_000);
      const res = await postWithDefaultLimit(visionRequest);
      expect(res.status, res.text).toBe(200);
    });

    it("serves a body of exactly 16 MiB and refuses one byte more with 413", async () => {
      const over = await postWithDefaultLimit(visionRequest.padEnd(DEFAULT_MAX_BODY_BYTES + 1, " "));
      expect(over.status).toBe(413);
      expect(JSON.parse(over.text).error).toMatchObject({
        type: "invalid_request_error",
        message: `request body exceeds ${DEFAULT_MAX_BODY_BYTES} bytes`,
      });
      // JSON allows trailing whitespace: the same request, padded to the limit, is forwarded and served.
      const at = await postWithDefaultLimit(visionRequest.padEnd(DEFAULT_MAX_BODY_BYTES, " "));
      expect(at.status, at.text.slice(0, 200)).toBe(200);
    });
  });

  it("leaves the router's counters unchanged by refused requests", async () => {
    expect((await chat("misc", "ok")).status).toBe(200);
    await waitFor(async () => (await stats0("misc")).activeLeases === 0, "the lease released");
    const before = await stats0("misc");
    await post("/v1/chat/completions", JSON.stringify({ model: "misc", messages: [] }));
    await post("/v1/chat/completions", "{");
    const after = await stats0("misc");
    // The drain-rate estimate moves with the clock, not with requests: an interval that closes between the two
    // reads warms it (null -> a rate) or moves it, whatever the requests did (seen in CI after a slow test before).
    expect({ ...after, replicas: null, recentObservations: null, drainRate: null }).toEqual({
      ...before,
      replicas: null,
      recentObservations: null,
      drainRate: null,
    });
  });

  it("strips internal headers a client sends", async () => {
    const res = await post(
      "/v1/chat/completions",
      JSON.stringify({ model: "misc", messages: [{ role: "user", content: "strip-internal" }] }),
      { "x-spillway-deployment": "forged", "x-spillway-forged": "1" },
    );
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const state = await replicaState("misc");
    const seen = state.internalHeaders[state.served.lastIndexOf("strip-internal")];
    // What reaches the replica is the edge's own: its signature names the real deployment; nothing forged goes on.
    expect(seen).toBeDefined();
    expect(seen?.["x-spillway-deployment"]).toBe("misc");
    expect(Object.keys(seen ?? {}).sort()).toEqual([
      "x-spillway-deployment",
      "x-spillway-nonce",
      "x-spillway-signature",
      "x-spillway-timestamp",
    ]);
  });

  it("guards the stats endpoint with the admin token and reveals nothing without it", async () => {
    // Missing, wrong, malformed (Hono's bearerAuth would say 400 there): every refusal is the same 401.
    for (const authorization of [undefined, "Bearer wrong", `Basic ${TEST_ADMIN_TOKEN}`, "Bearer", "Bearer a!b"]) {
      const res = await SELF.fetch("http://spillway/spillway/stats/misc", {
        headers: authorization ? { authorization } : {},
      });
      expect(res.status, `authorization: ${authorization}`).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="spillway"');
      const text = await res.text();
      expect(text).not.toContain("queueDepth");
      expect(JSON.parse(text)).toMatchObject({ error: { code: "unauthorized" } });
    }
    const ok = await SELF.fetch("http://spillway/spillway/stats/misc", {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(ok.status).toBe(200);
  });

  it("answers JSON 404 for unknown routes", async () => {
    const res = await SELF.fetch("http://spillway/v1/embeddings", { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
  });
});
