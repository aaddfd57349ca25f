import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chat, computedHintRangeMs, releaseHold, setRouterClock, stats0, waitFor, warmRouter } from "./helpers";

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
