import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import type { BackendState } from "../../src/bench/fake-backend-state";
import type { FleetOverview } from "../../src/edge/fleet-overview";
import { spillway } from "../../src/edge/middleware";
import { TEST_ADMIN_TOKEN, TEST_UPSTREAM_KEY } from "../support/edge-test-config";
import { chat, stats0, waitFor } from "./helpers";

const backend = async (kind: string, id: string): Promise<BackendState> =>
  (await (await fetch(`${inject("fakeEngineUrl")}/b/${kind}/${id}/__state`)).json()) as BackendState;

/** A user's app, with the secret the Worker would have from `wrangler secret put`. */
function appWith(bindings: Record<string, unknown>) {
  const app = new Hono();
  app.post("/v1/chat/completions", spillway());
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  return (model: string, authorization?: string) =>
    app.fetch(
      new Request("http://spillway/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      }),
      { ...env, ...bindings },
      ctx,
    );
}

describe("vLLM, SGLang and TGI replicas (probed by /metrics, no /load)", () => {
  it("under overload each stays at maxOngoingRequests and the rest is shed with computed hints", async () => {
    // Warm the estimator with waves that keep a queue for a while (3 replicas x 3 slots, 12 queue places).
    const warmup: Response[] = [];
    for (let wave = 0; wave < 40 && !(await stats0("openai-backends")).estimatorWarm; wave++) {
      warmup.push(...(await Promise.all(Array.from({ length: 18 }, () => chat("openai-backends", "sleep:60")))));
    }
    expect((await stats0("openai-backends")).estimatorWarm).toBe(true);
    const flood = Array.from({ length: 80 }, () => chat("openai-backends", "sleep:80"));
    const responses = await Promise.all([...warmup, ...flood]);
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // The router is warm for the flood: each of its refusals carries the computed hint, both headers (an absent one
    // is no 0). A warm-up refusal may come before the estimator is warm, with no hint; one that has one is whole.
    const flooded = responses.slice(warmup.length).filter((r) => r.status === 429);
    expect(flooded.length).toBeGreaterThan(0);
    for (const res of refused) {
      const [ms, seconds] = [res.headers.get("retry-after-ms"), res.headers.get("retry-after")];
      if (flooded.includes(res) || ms !== null || seconds !== null) {
        expect(ms).toMatch(/^\d+$/);
        expect(seconds).toBe(String(Math.ceil(Number(ms) / 1000)));
      }
    }
    const served = responses.filter((r) => r.status === 200);
    const answeredBy = new Set(
      await Promise.all(served.map(async (r) => ((await r.json()) as { backend: string }).backend)),
    );
    expect([...answeredBy].sort()).toEqual(["sglang", "tgi", "vllm"]);
    await Promise.all(refused.map((r) => r.arrayBuffer()));
    for (const kind of ["vllm", "sglang", "tgi"]) {
      const state = await backend(kind, "ob");
      expect(state.peakInflight, kind).toBeLessThanOrEqual(3);
      expect(state.metricsReads, kind).toBeGreaterThan(0);
    }
    const s = await stats0("openai-backends");
    expect(s.rejections.computed).toBeGreaterThan(0);
    await waitFor(async () => (await stats0("openai-backends")).activeLeases === 0, "leases released");
  });

  it("load: none never probes; the router's own count holds the replica at maxOngoingRequests", async () => {
    const responses = await Promise.all(Array.from({ length: 30 }, () => chat("counted-only", "sleep:60")));
    expect(responses.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(responses.some((r) => r.status === 429)).toBe(true);
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    const state = await backend("vllm", "co");
    expect(state.metricsReads).toBe(0);
    expect(state.peakInflight).toBeLessThanOrEqual(2);
    expect(state.served).toBe(responses.filter((r) => r.status === 200).length);
  });

  it("the overview reads their load from /metrics (and says a load: none replica is not probed)", async () => {
    const res = await SELF.fetch("http://spillway/spillway/overview", {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const overview = (await res.json()) as FleetOverview;
    const probed = overview.deployments.find((d) => d.deployment === "openai-backends");
    expect(probed?.replicas.map((r) => [r.ok, r.queueLength])).toEqual([
      [true, 0],
      [true, 0],
      [true, 0],
    ]);
    expect(probed?.replicas[0]?.tokenUsage).toBe(0);
    const counted = overview.deployments.find((d) => d.deployment === "counted-only");
    expect(counted?.replicas[0]).toMatchObject({ ok: false, queueLength: null, error: 'load "none": never probed' });
  });

  it("the upstream credential replaces the client's Authorization on the way to the backend", async () => {
    const send = appWith({ TEST_UPSTREAM_KEY });
    const res = await send("upstream-key", "Bearer the-clients-own-key");
    expect(res.status).toBe(200);
    expect((await backend("vllm", "key-uk")).lastAuthorization).toBe(`Bearer ${TEST_UPSTREAM_KEY}`);
  });

  it("a named but unbound upstream secret refuses with 500 instead of passing the client's key on", async () => {
    const res = await appWith({})("missing-key", "Bearer the-clients-own-key");
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_credential_missing");
    expect((await backend("vllm", "key-mk")).served).toBe(0);
  });
});
