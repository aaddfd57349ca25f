import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chat, releaseHold, stats0, waitFor } from "./helpers";

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

/** Warms the estimator (0.2 s intervals, 3 samples) with short requests that drain. */
async function warm(): Promise<void> {
  const warmup = Array.from({ length: 25 }, () => chat("restart", "sleep:40"));
  await waitFor(async () => (await stats0("restart")).estimatorWarm, "a warm estimator");
  await Promise.all(warmup);
}

describe("a router restarted mid-overload", () => {
  it("starts cold (static fallback), then warms again and computes", async () => {
    await warm();
    await abortAllDurableObjects();
    const cold = await stats0("restart");
    expect(cold.estimatorWarm).toBe(false);
    expect(cold.admitted).toBe(0);

    const first = (await overload("cold")).filter((r) => r.status === 429);
    expect(first.length).toBeGreaterThan(0);
    for (const r of first) expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(6); // static 7 +-20%
    expect((await stats0("restart")).rejections.computed).toBe(0);

    await warm();
    const second = (await overload("warm")).filter((r) => r.status === 429);
    expect(second.length).toBeGreaterThan(0);
    expect((await stats0("restart")).rejections.computed).toBeGreaterThan(0);
    // Computed by the default policy (booked_capacity): within the 60 s a client without SDK headers honours.
    for (const r of second) {
      const ms = Number(r.headers.get("retry-after-ms"));
      expect(ms).toBeGreaterThanOrEqual(1000);
      expect(ms).toBeLessThanOrEqual(60_000);
    }
    // Two overloads of 30 requests and two warm-ups of 25 through one slot, one after another: more than the
    // default 30 s on a loaded 2-core machine (the outcome does not depend on the time).
  }, 90_000);
});
