import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { routerName } from "../../src/edge/router-protocol";
import {
  chat,
  computedHintRangeMs,
  direct,
  releaseHold,
  replicaState,
  setRouterClock,
  stats0,
  waitFor,
  warmRouter,
} from "./helpers";

/**
 * Overloads the `restart` deployment (one slot, 20 queue places) with requests that hold their slot until
 * `key` is released, so the refusals do not depend on how fast this machine is.
 */
async function overload(key: string): Promise<Response[]> {
  const before = await stats0("restart");
  const refusedBefore = before.rejections.computed + before.rejections.static_fallback + before.rejections.none;
  const pending = Array.from({ length: 30 }, () => chat("restart", `hold:${key}`));
  await waitFor(async () => {
    const s = await stats0("restart");
    return s.rejections.computed + s.rejections.static_fallback + s.rejections.none > refusedBefore;
  }, "a refusal");
  await releaseHold("restart", key);
  return Promise.all(pending);
}

describe("a router restarted mid-overload", () => {
  it("starts cold (static fallback), then warms again and computes", async () => {
    // The router's clock stands still except where the test moves it, so warm-up is decided by construction
    // (three 0.2 s intervals that each see drains), not by how fast this machine drains the requests.
    await setRouterClock("restart", 0);
    await warmRouter("restart", { startMs: 0, intervalMs: 200 });
    expect((await stats0("restart")).estimatorWarm).toBe(true);

    await abortAllDurableObjects();
    // The restarted router is a new instance with a real clock: stop it again before its first request.
    await setRouterClock("restart", 10_000);
    const cold = await stats0("restart");
    expect(cold.estimatorWarm).toBe(false);
    expect(cold.admitted).toBe(0);

    const first = (await overload("cold")).filter((r) => r.status === 429);
    expect(first.length).toBeGreaterThan(0);
    for (const r of first) expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(6); // static 7 +-20%
    expect((await stats0("restart")).rejections.computed).toBe(0);

    await warmRouter("restart", { startMs: 10_000, intervalMs: 200 });
    const warm = await stats0("restart");
    expect(warm.estimatorWarm).toBe(true);
    const rate = warm.drainRate as number;
    // Every interval closed with at least 5 drains in 0.2 s, so the rate is at least 25/s.
    expect(rate).toBeGreaterThanOrEqual(25);
    const second = (await overload("warm")).filter((r) => r.status === 429);
    expect(second.length).toBeGreaterThan(0);
    expect((await stats0("restart")).rejections.computed).toBe(second.length);
    // The clock stands still, so every refusal saw the full queue (20) and this very rate.
    const [low, high] = computedHintRangeMs(20, rate);
    for (const r of second) {
      expect(Number(r.headers.get("retry-after-ms"))).toBeGreaterThanOrEqual(low);
      expect(Number(r.headers.get("retry-after-ms"))).toBeLessThanOrEqual(high);
    }
    expect(high).toBeLessThan(7000 * 0.8);
  }, 60_000);
});

describe("a router reset with requests queued", () => {
  it("loses none of them: each re-acquires once on the fresh router, and every request is served (0 5xx)", async () => {
    // The replica's one slot is taken outside the edge, so the fourteen requests all wait in the router's queue.
    const blocker = direct("reset", "hold:reset");
    await waitFor(async () => (await replicaState("reset")).inflight === 1, "the replica busy");
    const pending = Array.from({ length: 14 }, (_, i) => chat("reset", `queued-${i}`));
    await waitFor(async () => (await stats0("reset")).queueDepth === 14, "fourteen queued");
    // Reset the router as a deploy or a crash does: its memory (the queue) is gone and every call waiting in it
    // fails. (abortAllDurableObjects() would leave the old instance serving its calls: no failure to recover.)
    const router = env.DEPLOYMENT_ROUTER.getByName(routerName("reset", 0));
    await runInDurableObject(router, (_instance, state) => state.abort("reset by the test")).catch(() => {});
    // The fourteen come back to the fresh router by themselves (before the re-acquire: fourteen 500s).
    await waitFor(async () => (await stats0("reset")).queueDepth === 14, "fourteen queued again");
    await releaseHold("reset", "reset");
    await blocker;
    const responses = await Promise.all(pending);
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 14 }, () => 200));
    const served = (await replicaState("reset")).served;
    expect(served.filter((c) => c.startsWith("queued-")).sort()).toEqual(
      Array.from({ length: 14 }, (_, i) => `queued-${i}`).sort(),
    );
  }, 60_000);
});
