import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chat, stats0, waitFor } from "./helpers";

/** Overloads the `restart` deployment (one slot, 20 queue places, 40 ms requests) until one is refused. */
async function overload(): Promise<{ refused: Response; pending: Promise<Response>[] }> {
  const pending = Array.from({ length: 20 }, () => chat("restart", "sleep:40"));
  await waitFor(async () => (await stats0("restart")).queueDepth > 5, "a queue");
  const burst = await Promise.all(Array.from({ length: 30 }, () => chat("restart", "sleep:40")));
  const refused = burst.find((r) => r.status === 429);
  if (!refused) throw new Error("no refusal in the burst");
  return { refused, pending: [...pending, ...burst.map(async (r) => r)] };
}

describe("a router restarted mid-overload", () => {
  it("starts cold (static fallback), then warms again and computes", async () => {
    // Warm the estimator: 0.2 s intervals, 3 samples.
    const warmup = Array.from({ length: 25 }, () => chat("restart", "sleep:40"));
    await waitFor(async () => (await stats0("restart")).estimatorWarm, "a warm estimator");
    await Promise.all(warmup);

    await abortAllDurableObjects();
    const cold = await stats0("restart");
    expect(cold.estimatorWarm).toBe(false);
    expect(cold.admitted).toBe(0);

    const first = await overload();
    expect(Number(first.refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(6); // static 7 +-20%
    expect((await stats0("restart")).rejections.static_fallback).toBeGreaterThan(0);
    await Promise.all(first.pending);

    await waitFor(async () => (await stats0("restart")).estimatorWarm, "warm again");
    const second = await overload();
    expect((await stats0("restart")).rejections.computed).toBeGreaterThan(0);
    expect(Number(second.refused.headers.get("retry-after-ms"))).toBeLessThan(7000 * 0.8);
    await Promise.all(second.pending);
  });
});
