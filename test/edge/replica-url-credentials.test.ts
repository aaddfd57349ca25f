import { SELF } from "cloudflare:test";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import type { FleetOverview } from "../../src/edge/fleet-overview";
import type { ShardStats } from "../../src/edge/router-protocol";
import { TEST_ADMIN_TOKEN, TEST_REPLICA_URL_KEY } from "../support/edge-test-config";
import { chat, setDown } from "./helpers";

/**
 * A replica configured with a gateway's key in its URL (`http://127.0.0.1:PORT/r/url-key?key=...`, as
 * README's `.replicas` row allows): requests and probes go to the URL with its key, while everything the Worker
 * writes for operators names the replica with the key redacted (`?key=redacted`): `/spillway/metrics`' `replica`
 * label, `/spillway/stats` and `/spillway/overview` JSON, and its log lines (`spillway.replica_unreachable`,
 * `spillway.upstream_timeout`). Before, each of them showed the key.
 */

afterEach(() => vi.restoreAllMocks());

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const get = (path: string) => SELF.fetch(`http://spillway${path}`, { headers: auth });
/** What the Worker shows of the replica `id`. */
const shown = (id: string) => `${inject("fakeEngineUrl")}/r/${id}?key=redacted`;

/** Every line written with console.log while `run` runs. */
async function printedWhile(run: () => Promise<void>): Promise<string[]> {
  const printed: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => printed.push(args.map(String).join(" ")));
  await run();
  vi.restoreAllMocks();
  return printed;
}

/** The JSON lines of `event` about `deployment`. */
function linesOf(printed: string[], event: string, deployment: string): Record<string, unknown>[] {
  return printed
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.event === event && line.deployment === deployment);
}

describe("a replica URL with a gateway's key", () => {
  it("is served, and metrics, stats and the overview name it with the key redacted", async () => {
    // The request and the router's probe went to the URL with its key (the fake engine reads the path without it).
    const res = await chat("url-key", "hello");
    expect(res.status).toBe(200);
    await res.text();

    const metrics = await (await get("/spillway/metrics")).text();
    expect(metrics).not.toContain(TEST_REPLICA_URL_KEY);
    expect(metrics).toContain(`spillway_replica_up{deployment="url-key",shard="0",replica="${shown("url-key")}"} 1`);

    const statsText = await (await get("/spillway/stats/url-key")).text();
    expect(statsText).not.toContain(TEST_REPLICA_URL_KEY);
    const [shard] = (JSON.parse(statsText) as { shards: ShardStats[] }).shards;
    expect(Object.keys(shard?.replicas ?? {})).toEqual([shown("url-key")]);

    const overviewText = await (await get("/spillway/overview")).text();
    expect(overviewText).not.toContain(TEST_REPLICA_URL_KEY);
    const overview = JSON.parse(overviewText) as FleetOverview;
    const replicas = overview.deployments.find((d) => d.deployment === "url-key")?.replicas;
    expect(replicas?.map((r) => r.replica)).toEqual([shown("url-key")]);
    // Its /load was read with the key: the figures are there.
    expect(replicas?.[0]?.queueLength).toBeTypeOf("number");
  });

  it("log lines name it with the key redacted: a replica that cannot be reached", async () => {
    const printed = await printedWhile(async () => {
      await setDown("url-key", true);
      try {
        await (await chat("url-key", "unreachable")).text();
      } finally {
        await setDown("url-key", false);
      }
    });
    expect(linesOf(printed, "spillway.replica_unreachable", "url-key")).toContainEqual(
      expect.objectContaining({ replica: shown("url-key") }),
    );
    expect(printed.filter((line) => line.includes(TEST_REPLICA_URL_KEY))).toEqual([]);
  });

  it("log lines name it with the key redacted: a replica that does not answer in time", async () => {
    const printed = await printedWhile(async () => {
      expect((await chat("url-key-hang", "hang")).status).toBe(504);
    });
    expect(linesOf(printed, "spillway.upstream_timeout", "url-key-hang")).toEqual([
      expect.objectContaining({ replica: shown("url-key-hang") }),
    ]);
    expect(printed.filter((line) => line.includes(TEST_REPLICA_URL_KEY))).toEqual([]);
  });
});
