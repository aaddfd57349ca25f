import { describe, expect, it } from "vitest";
import {
  chat,
  computedHintRangeMs,
  releaseHold,
  replicaState,
  setRouterClock,
  stats0,
  waitFor,
  warmRouter,
} from "./helpers";

describe("backpressure (Ray Serve's cases)", () => {
  it("max_ongoing 1, max_queued 1: the third concurrent request gets 429 (default, no header when cold)", async () => {
    const first = chat("ray-default", "hold:1");
    await waitFor(async () => (await replicaState("ray-default")).inflight === 1, "first request at the engine");
    const second = chat("ray-default", "hold:2");
    await waitFor(async () => (await stats0("ray-default")).queueDepth === 1, "second request queued");
    const third = await chat("ray-default", "third");
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBeNull();
    const body = (await third.json()) as { error: { message: string; code: string } };
    expect(body.error.message).toBe(
      "Request dropped due to backpressure (num_queued_requests=1, max_queued_requests=1)",
    );
    expect(body.error.code).toBe("rate_limit_exceeded");
    // After the first completes, the queued one is served.
    await releaseHold("ray-default", "1");
    expect((await first).status).toBe(200);
    await releaseHold("ray-default", "2");
    expect((await second).status).toBe(200);
    expect((await replicaState("ray-default")).served).toEqual(["hold:1", "hold:2"]);
    await waitFor(async () => (await stats0("ray-default")).activeLeases === 0, "leases released");
  });

  it("configured 503 with a static Retry-After: header jittered around 5 s, retry-after-ms beside it", async () => {
    const first = chat("ray-503-static", "hold:1");
    await waitFor(async () => (await replicaState("ray-503-static")).inflight === 1, "first at the engine");
    const second = chat("ray-503-static", "hold:2");
    await waitFor(async () => (await stats0("ray-503-static")).queueDepth === 1, "second queued");
    const third = await chat("ray-503-static", "third");
    expect(third.status).toBe(503);
    const seconds = Number(third.headers.get("retry-after"));
    const ms = Number(third.headers.get("retry-after-ms"));
    expect(seconds).toBeGreaterThanOrEqual(4);
    expect(seconds).toBeLessThanOrEqual(6);
    expect(ms).toBeGreaterThanOrEqual(4000);
    expect(ms).toBeLessThanOrEqual(6000);
    expect(Math.ceil(ms / 1000)).toBe(seconds);
    expect(((await third.json()) as { error: { type: string } }).error.type).toBe("server_error");
    await releaseHold("ray-503-static", "1");
    await releaseHold("ray-503-static", "2");
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    const s = await stats0("ray-503-static");
    expect(s.rejections.static_fallback).toBe(1);
  });

  it("max_queued 0: the first request on an idle fleet is placed (the cold router probes first), one that finds it full is refused", async () => {
    // A router with no queue sent no probes and refused every request, the first one on an idle fleet included.
    const first = chat("no-queue", "hold:1");
    await waitFor(async () => (await replicaState("no-queue")).inflight === 1, "first request at the engine");
    const second = await chat("no-queue", "second");
    expect(second.status).toBe(429);
    await second.arrayBuffer();
    await releaseHold("no-queue", "1");
    expect((await first).status).toBe(200);
    await waitFor(async () => (await stats0("no-queue")).activeLeases === 0, "first lease released");
    const third = await chat("no-queue", "third");
    expect(third.status).toBe(200);
    await third.arrayBuffer();
    expect((await replicaState("no-queue")).served).toEqual(["hold:1", "third"]);
  });

  it("serves queued requests in FIFO order", async () => {
    const head = chat("fifo", "hold:head");
    await waitFor(async () => (await replicaState("fifo")).inflight === 1, "head at the engine");
    const queued: Promise<Response>[] = [];
    for (const name of ["q1", "q2", "q3", "q4"]) {
      queued.push(chat("fifo", name));
      const depth = queued.length;
      await waitFor(async () => (await stats0("fifo")).queueDepth === depth, `${name} queued`);
    }
    await releaseHold("fifo", "head");
    const statuses = await Promise.all([head, ...queued].map(async (r) => (await r).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect((await replicaState("fifo")).served).toEqual(["hold:head", "q1", "q2", "q3", "q4"]);
  });

  it("computes Retry-After from queue depth and drain rate once the estimator is warm", async () => {
    // The router's clock stands still while each wave drains: three 0.2 s intervals of 5 drains each, a rate
    // of exactly 25/s however fast this machine runs the requests.
    await setRouterClock("computed", 0);
    await warmRouter("computed", { startMs: 0, intervalMs: 200 });
    const warm = await stats0("computed");
    expect(warm.estimatorWarm).toBe(true);
    expect(warm.drainRate).toBeCloseTo(25, 9);
    // Then requests that hold their slot: the queue (30 places) fills and the rest are refused at once.
    const flood = Array.from({ length: 60 }, () => chat("computed", "hold:flood"));
    await waitFor(async () => (await stats0("computed")).rejections.computed > 0, "a computed rejection");
    await releaseHold("computed", "flood");
    const responses = await Promise.all(flood);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // Every refusal saw the full queue (30) and the frozen rate (25/s): 1.2 s x factor [1, 1.5] x jitter.
    const [low, high] = computedHintRangeMs(30, 25);
    for (const res of refused) {
      const seconds = Number(res.headers.get("retry-after"));
      const ms = Number(res.headers.get("retry-after-ms"));
      expect(ms).toBeGreaterThanOrEqual(low);
      expect(ms).toBeLessThanOrEqual(high);
      expect(Math.ceil(ms / 1000)).toBe(seconds);
    }
    const s = await stats0("computed");
    expect(s.rejections.static_fallback).toBe(0);
    expect(s.rejections.computed).toBe(refused.length);
    // The depth over a rate of tens per second is seconds, well below the static 7 s (less 20% jitter).
    expect(high).toBeLessThan(7000 * 0.8);
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    await waitFor(async () => (await stats0("computed")).queueDepth === 0, "queue drained");
  }, 60_000);
});
