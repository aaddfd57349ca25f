import { env, SELF } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { writeDecision } from "../../src/edge/analytics";
import type { FleetOverview } from "../../src/edge/fleet-overview";
import { prometheusText } from "../../src/edge/prometheus";
import { promValue } from "../../src/edge/replica-load";
import { TEST_ADMIN_TOKEN } from "../support/edge-test-config";
import { chat, stats } from "./helpers";

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const get = (path: string, headers: Record<string, string> = {}) => SELF.fetch(`http://spillway${path}`, { headers });

describe("the dashboard page", () => {
  it("is served without a token, holds no data, and loads nothing from elsewhere", async () => {
    const res = await get("/spillway/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('id="token"');
    expect(html).not.toContain("misc");
    expect(html).not.toMatch(/src="https?:/);
    // It names its icon (an empty one, which the CSP's img-src allows): without one a browser asks for /favicon.ico,
    // which the Worker does not serve, and its console shows the 404.
    expect(html).toContain('<link rel="icon" href="data:,">');
    expect(res.headers.get("content-security-policy")).toMatch(/img-src [^;]*data:/);
    expect((await get("/favicon.ico")).status).toBe(404);
    for (const asset of ["uplot.js", "uplot.css", "app.js", "app.css"]) {
      const a = await get(`/spillway/dashboard/${asset}`);
      expect(a.status, asset).toBe(200);
      expect((await a.text()).length, asset).toBeGreaterThan(100);
    }
  });
});

describe("guarded operator routes", () => {
  it.each(["/spillway/overview", "/spillway/metrics"])("%s answers 401 without the token", async (path) => {
    expect((await get(path)).status).toBe(401);
    expect((await get(path, { authorization: "Bearer wrong" })).status).toBe(401);
  });

  it("overview: every deployment's routers and its replicas' load", async () => {
    await (await chat("misc", "hello")).text();
    const res = await get("/spillway/overview", auth);
    expect(res.status).toBe(200);
    const overview = (await res.json()) as FleetOverview;
    const misc = overview.deployments.find((d) => d.deployment === "misc");
    expect(misc?.admitted).toBeGreaterThanOrEqual(1);
    expect(misc?.suggestedDelayBuckets.at(-1)?.le).toBe("+Inf");
    expect(misc?.hintedRetries.admitted).toEqual({
      early: expect.any(Number),
      on_time: expect.any(Number),
      late: expect.any(Number),
    });
    // The default policy keeps a ledger: its promises, summed over shards, and its trust.
    expect(misc?.ledger?.promises).toEqual({
      made: expect.any(Number),
      kept: expect.any(Number),
      broken: expect.any(Number),
      noShow: expect.any(Number),
    });
    expect(misc?.ledger?.trust).toBeGreaterThan(0);
    // The fake engine answers /load but has no /metrics: the load is read, the gap is reported.
    expect(misc?.replicas[0]?.queueLength).toBeTypeOf("number");
    expect(misc?.replicas[0]?.ok).toBe(false);
    const down = overview.deployments.find((d) => d.deployment === "all-down");
    expect(down?.replicas.every((r) => !r.ok && r.queueLength === null)).toBe(true);
  });

  it("metrics: Prometheus text for every shard", async () => {
    await (await chat("misc", "hello")).text();
    const res = await get("/spillway/metrics", auth);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await res.text();
    expect(text).toContain("# TYPE spillway_admitted_total counter");
    const admitted = promValue(
      text
        .split("\n")
        .filter((l) => l.includes('deployment="misc"'))
        .join("\n"),
      "spillway_admitted_total",
    );
    expect(admitted).toBe((await stats("misc"))[0]?.admitted);
    expect(text).toMatch(/spillway_queue_depth\{deployment="sharded",shard="3"\} \d+/);
    expect(text).toMatch(
      /spillway_hinted_retries_total\{deployment="misc",shard="0",outcome="admitted",timing="on_time"\} \d+/,
    );
    expect(text).toMatch(/spillway_outstanding_bookings\{deployment="misc",shard="0"\} \d+/);
    expect(text).toMatch(/spillway_demoted_total\{deployment="misc",shard="0"\} \d+/);
    // The default policy (booked_capacity) keeps a ledger: its promises and trust are on the page too.
    expect(text).toMatch(/spillway_promises_made_total\{deployment="misc",shard="0"\} \d+/);
    expect(text).toMatch(/spillway_promises_ended_total\{deployment="misc",shard="0",outcome="broken"\} \d+/);
    expect(text).toMatch(/spillway_booking_trust\{deployment="misc",shard="0"\} (1|0\.\d+)\n/);
  });
});

describe("Prometheus rendering", () => {
  it("makes the suggested-delay histogram cumulative and escapes labels", async () => {
    const [shard] = await stats("misc");
    if (!shard) throw new Error("no shard");
    const text = prometheusText([
      {
        ...shard,
        deployment: 'a"b',
        suggestedDelayBuckets: [
          { le: 1, count: 2 },
          { le: 5, count: 3 },
          { le: Number.POSITIVE_INFINITY, count: 1 },
        ],
      },
    ]);
    expect(text).toContain('spillway_suggested_delay_seconds_bucket{deployment="a\\"b",shard="0",le="5"} 5');
    expect(text).toContain('spillway_suggested_delay_seconds_bucket{deployment="a\\"b",shard="0",le="+Inf"} 6');
    expect(text).toContain('spillway_suggested_delay_seconds_count{deployment="a\\"b",shard="0"} 6');
  });

  it("reads a sample from an engine's /metrics text", () => {
    const text = '# HELP x\nsglang:token_usage_other 9\nsglang:token_usage{model_name="m"} 0.25\n';
    expect(promValue(text, "sglang:token_usage")).toBe(0.25);
    expect(promValue(text, "sglang:missing")).toBeNull();
  });
});

describe("Analytics Engine", () => {
  it("the binding from wrangler.toml is simulated locally: decisions are written and nothing breaks", async () => {
    // The router writes through the binding it is given: record what reaches it (an admission, and a refusal).
    const dataset = env.SPILLWAY_METRICS as AnalyticsEngineDataset;
    const written = vi.spyOn(dataset, "writeDataPoint");
    try {
      const admitted = await chat("misc", "hello");
      expect(admitted.status).toBe(200);
      expect((await admitted.text()).length).toBeGreaterThan(0);
      const refused = await chat("all-down", "hello");
      expect(refused.status).toBe(503);
      await refused.text();
      const points = written.mock.calls as unknown as [AnalyticsEngineDataPoint | undefined][];
      const rows = points.map(([point]) => point?.blobs?.slice(0, 3));
      expect(rows).toContainEqual(["misc", "admitted", ""]);
      expect(rows).toContainEqual(["all-down", "rejected", "no_replica_available"]);
    } finally {
      written.mockRestore();
    }
  });

  it("an absent or failing dataset never fails a decision", () => {
    const point = {
      deployment: "d",
      shard: 0,
      outcome: "admitted" as const,
      queueDepth: 0,
      drainRate: null,
      status: 200,
    };
    expect(() => writeDecision(undefined, point)).not.toThrow();
    const broken = {
      writeDataPoint() {
        throw new Error("boom");
      },
    } as AnalyticsEngineDataset;
    expect(() => writeDecision(broken, point)).not.toThrow();
  });
});
