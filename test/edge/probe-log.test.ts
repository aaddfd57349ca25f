import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { PROBE_LOG_QUIET_MS } from "../../src/edge/replica-probe-log";
import { chat, setDown, setRouterClock } from "./helpers";

/**
 * The router's probe log, through the Worker and its Durable Object: a replica whose probes fail writes one
 * `spillway.replica_down` line saying why (not one per probe, not one per refused request), and one
 * `spillway.replica_recovered` line when it answers again.
 */

afterEach(() => vi.restoreAllMocks());

/** The probe log lines the router writes for `deployment` while `run` runs. */
async function probeLines(deployment: string, run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const printed: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => printed.push(args.map(String).join(" ")));
  await run();
  vi.restoreAllMocks();
  return printed
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => String(line.event).startsWith("spillway.replica_") && line.deployment === deployment);
}

async function errorMessage(res: Response): Promise<string> {
  return ((await res.json()) as { error: { message: string } }).error.message;
}

describe("probe log", () => {
  it('an SGLang replica configured with "load": "vllm": every request 503 (no replica available), one down line saying why', async () => {
    const deployment = "probe-log-wrong-load";
    let nowMs = 0;
    await setRouterClock(deployment, nowMs);
    const lines = await probeLines(deployment, async () => {
      for (let i = 0; i < 5; i++) {
        const res = await chat(deployment, `r${i}`);
        expect(res.status).toBe(503);
        expect(await errorMessage(res)).toContain("No replica");
        // Past the down period (1 s): the next request probes the replica again, and fails again.
        nowMs += 2_000;
        await setRouterClock(deployment, nowMs);
      }
    });
    expect(lines).toEqual([
      {
        event: "spillway.replica_down",
        deployment,
        shard: 0,
        replica: expect.stringMatching(/\/b\/sglang\/plw$/),
        load: "vllm",
        reason: "unreadable",
        detail: expect.stringContaining("the page has sglang's gauges"),
      },
    ]);
    // Probed on every request, not once: the one line is one per change, not one per probe.
    const backend = await (await fetch(`${inject("fakeEngineUrl")}/b/sglang/plw/__state`)).json();
    expect((backend as { metricsReads: number }).metricsReads).toBeGreaterThanOrEqual(5);
    await setRouterClock(deployment, null);
  });

  it("a replica that goes down and answers again: one down line, one recovered line", async () => {
    const deployment = "probe-log-down-up";
    let nowMs = 0;
    await setRouterClock(deployment, nowMs);
    const lines = await probeLines(deployment, async () => {
      expect((await chat(deployment, "warm")).status).toBe(200);
      await setDown("pl-du", true);
      for (let i = 0; i < 3; i++) {
        // Past the report's stale age first, then past each down period: every request probes it.
        nowMs += 11_000;
        await setRouterClock(deployment, nowMs);
        const res = await chat(deployment, `down${i}`);
        expect(res.status).toBe(503);
      }
      await setDown("pl-du", false);
      nowMs += PROBE_LOG_QUIET_MS;
      await setRouterClock(deployment, nowMs);
      for (let i = 0; i < 3; i++) expect((await chat(deployment, `up${i}`)).status).toBe(200);
    });
    expect(lines).toEqual([
      expect.objectContaining({ event: "spillway.replica_down", load: "spillway", reason: "unreachable" }),
      expect.objectContaining({ event: "spillway.replica_recovered", load: "spillway", queueLength: 0 }),
    ]);
    await setRouterClock(deployment, null);
  });
});
