import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import type { SubmitOptions } from "../../src/core/router-core";
import type { DeploymentRouter } from "../../src/edge/deployment-router";
import type { Env } from "../../src/edge/env";
import { spillway } from "../../src/edge/middleware";
import { type AcquireAnswer, routerName } from "../../src/edge/router-protocol";
import type { HandedOffSlot, ReleasedSlot } from "../../src/edge/slot-batch";
import { stats0 } from "./helpers";

/**
 * Interleavings of a router's calls that the Durable Object's one-call-at-a-time rule does not order: an answer on
 * its way back while the client leaves, a call that failed on the way back and is asked again.
 */
describe("router interleavings", () => {
  it("a slot whose client left while its admission was on the way back (its cancel sent) is released, never handed to the isolate's next request", async () => {
    const replica = `${inject("fakeEngineUrl")}/r/ilc`;
    const acquired: string[] = [];
    const cancelled: string[] = [];
    const batches: { released: readonly ReleasedSlot[]; handedOff: readonly HandedOffSlot[] }[] = [];
    // The client of the next acquire leaves just as the router places it: its cancel goes out before the answer
    // is read (the router, placed first, then gives the slot back when the cancel arrives).
    let leaveDuring: AbortController | undefined;
    const stub = {
      acquire: async (_d: string, _s: number, ticket: string, _o?: SubmitOptions): Promise<AcquireAnswer> => {
        acquired.push(ticket);
        leaveDuring?.abort();
        leaveDuring = undefined;
        return { kind: "admitted", replica, handoffMs: 1000 };
      },
      cancel: async (ticket: string) => {
        cancelled.push(ticket);
      },
      releaseAll: async (released: readonly ReleasedSlot[], handedOff: readonly HandedOffSlot[] = []) => {
        batches.push({ released, handedOff });
        return { handoffMs: 1000 };
      },
    };
    const namespace = { getByName: () => stub } as unknown as DurableObjectNamespace<DeploymentRouter>;
    // One middleware: one isolate's slot batch, shared by both requests.
    const app = new Hono<{ Bindings: Env }>().post("/v1/chat/completions", spillway({ routers: () => namespace }));
    const send = async (content: string, signal?: AbortSignal) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request("http://spillway/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "interleave-cancel", messages: [{ role: "user", content }] }),
          signal,
        }),
        env,
        ctx,
      );
      return { res, settled: waitOnExecutionContext(ctx) };
    };

    leaveDuring = new AbortController();
    const first = await send("left", leaveDuring.signal);
    expect(first.res.status).toBe(499);
    const ticket = acquired[0] as string;
    expect(cancelled).toEqual([ticket]);
    // Sent at once, not parked (a parked slot goes back only after PARK_MS, if no request takes it first).
    expect(batches.flatMap((b) => b.released)).toEqual([[ticket, false]]);

    const second = await send("hello");
    expect(second.res.status).toBe(200);
    await second.res.arrayBuffer();
    await Promise.all([first.settled, second.settled]);
    // The next request asked the router: the cancelled slot was never handed on.
    expect(acquired).toHaveLength(2);
    expect(batches.flatMap((b) => b.handedOff).map(([t]) => t)).not.toContain(ticket);
  });

  it("an acquire asked again with its ticket after the router placed it (the answer lost on the way back) gets the same lease, not a second one", async () => {
    const deployment = "interleave-reacquire";
    const router = env.DEPLOYMENT_ROUTER.getByName(routerName(deployment, 0));
    const first = await router.acquire(deployment, 0, "t1");
    expect(first).toMatchObject({ kind: "admitted" });
    // acquireSlot asks again, same ticket, when its first call failed on the way back (not a reset: the same router).
    const again = await router.acquire(deployment, 0, "t1");
    expect(again).toMatchObject({ kind: "admitted", replica: (first as { replica: string }).replica });
    let s = await stats0(deployment);
    expect(s.activeLeases).toBe(1);
    expect(Object.values(s.replicas)[0]?.queueLength).toBe(1);
    await router.release("t1", false);
    s = await stats0(deployment);
    expect(s.activeLeases).toBe(0);
    // The replica (never probed: the router's own count is all it knows of it) has both its slots again.
    expect(Object.values(s.replicas)[0]?.queueLength).toBe(0);
    expect(await router.acquire(deployment, 0, "t2")).toMatchObject({ kind: "admitted" });
    expect(await router.acquire(deployment, 0, "t3")).toMatchObject({ kind: "admitted" });
    await router.releaseAll([
      ["t2", false],
      ["t3", false],
    ]);
  });
});
