import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { SubmitOptions } from "../../src/core/router-core";
import type { DeploymentRouter } from "../../src/edge/deployment-router";
import type { Env } from "../../src/edge/env";
import { spillway } from "../../src/edge/middleware";
import worker from "../../src/edge/worker";
import { releaseHold, replicaState, waitFor } from "./helpers";

/**
 * A router namespace whose every call fails the way the platform fails it (e.g. `{ overloaded: true }`; `remote`:
 * the router's own code threw).
 */
function failingRouters(flags: { overloaded?: boolean; remote?: boolean }) {
  const calls: (SubmitOptions | undefined)[] = [];
  const message = flags.remote
    ? "TypeError: a bug in the router"
    : "Durable Object is overloaded. Too many requests queued.";
  const fail = () => Object.assign(new Error(message), flags);
  const stub = {
    acquire: async (_d: string, _s: number, _t: string, options?: SubmitOptions) => {
      calls.push(options);
      throw fail();
    },
    release: async () => {},
    cancel: async () => {},
  };
  const namespace = { getByName: () => stub } as unknown as DurableObjectNamespace<DeploymentRouter>;
  return { namespace, calls };
}

/** The Worker with spillway in front, its routers replaced by `namespace`. */
function appWith(namespace: DurableObjectNamespace<DeploymentRouter>) {
  const app = new Hono<{ Bindings: Env }>();
  app.use("/v1/*", spillway({ routers: () => namespace }));
  return async (model: string, content: string) => {
    const ctx = createExecutionContext();
    const res = await app.request(
      "/v1/chat/completions",
      { method: "POST", body: JSON.stringify({ model, messages: [{ role: "user", content }] }) },
      env,
      ctx,
    );
    return { res, settled: waitOnExecutionContext(ctx) };
  };
}

describe("router unavailable", () => {
  it("shed (the default): 503 with the static Retry-After, nothing forwarded, no second call to an overloaded router", async () => {
    const { namespace, calls } = failingRouters({ overloaded: true });
    const { res } = await appWith(namespace)("unavailable-shed", "hi");
    expect(res.status).toBe(503);
    // The static 4.5 s, jittered by 20% as every static hint is; the header the second that holds it.
    const ms = Number(res.headers.get("retry-after-ms"));
    expect(ms).toBeGreaterThanOrEqual(3600);
    expect(ms).toBeLessThanOrEqual(5400);
    expect(res.headers.get("retry-after")).toBe(String(Math.ceil(ms / 1000)));
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("service_unavailable");
    expect(calls).toHaveLength(1);
    expect((await replicaState("us")).served).toEqual([]);
  });

  it("a router whose own code throws: the ready Worker answers 500 internal_error at once, asks it once, forwards nothing", async () => {
    const { namespace, calls } = failingRouters({ remote: true });
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("http://spillway/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "unavailable-shed", messages: [{ role: "user", content: "hi" }] }),
      }),
      { ...env, DEPLOYMENT_ROUTER: namespace },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("internal_error");
    expect(calls).toHaveLength(1);
    expect((await replicaState("us")).served).toEqual([]);
  });

  it("an unreachable router is asked once more (with the time waited) before it counts as unavailable", async () => {
    const { namespace, calls } = failingRouters({});
    const { res } = await appWith(namespace)("unavailable-shed", "hi");
    expect(res.status).toBe(503);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.waitedMs).toBeGreaterThanOrEqual(0);
  });

  it("pass: forwards to a replica, at most maxOngoingRequests at once per isolate; past that, sheds", async () => {
    const { namespace } = failingRouters({ overloaded: true });
    const send = appWith(namespace);
    const first = send("unavailable-pass", "hold:p1");
    const second = send("unavailable-pass", "hold:p2");
    await waitFor(async () => (await replicaState("up")).inflight === 2, "two passed to the replica");
    const third = await send("unavailable-pass", "hold:p3"); // the cap is 2 (maxOngoingRequests)
    expect(third.res.status).toBe(503);
    await releaseHold("up", "p1");
    await releaseHold("up", "p2");
    for (const p of [first, second]) {
      const { res, settled } = await p;
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await settled;
    }
    // The slots came back: the next one passes too.
    const fourth = await send("unavailable-pass", "after");
    expect(fourth.res.status).toBe(200);
    expect((await replicaState("up")).served.sort()).toEqual(["after", "hold:p1", "hold:p2"]);
  });
});
