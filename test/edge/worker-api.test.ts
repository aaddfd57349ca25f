import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/edge-test-config";
import { chat, stats0, waitFor } from "./helpers";

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
    ["negative max_tokens", JSON.stringify({ model: "misc", max_tokens: -1, messages: [{ role: "user" }] }), ""],
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

  it("leaves the router's counters unchanged by refused requests", async () => {
    expect((await chat("misc", "ok")).status).toBe(200);
    await waitFor(async () => (await stats0("misc")).activeLeases === 0, "the lease released");
    const before = await stats0("misc");
    await post("/v1/chat/completions", JSON.stringify({ model: "misc", messages: [] }));
    await post("/v1/chat/completions", "{");
    const after = await stats0("misc");
    expect({ ...after, replicas: null, recentObservations: null }).toEqual({
      ...before,
      replicas: null,
      recentObservations: null,
    });
  });

  it("strips internal headers a client sends", async () => {
    const res = await post(
      "/v1/chat/completions",
      JSON.stringify({ model: "misc", messages: [{ role: "user", content: "h" }] }),
      { "x-spillway-deployment": "forged" },
    );
    expect(res.status).toBe(200);
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
