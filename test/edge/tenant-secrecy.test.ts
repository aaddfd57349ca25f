import { SELF } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { rejectionPoint, writeDecision } from "../../src/edge/analytics";
import { hashApiKey } from "../../src/edge/tenant-resolver";
import { TEST_ADMIN_TOKEN, TEST_KEYS } from "../support/edge-test-config";

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

function ask(key: string, model: string, extra: Record<string, unknown> = {}) {
  return SELF.fetch("http://spillway/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "secrecy" }], ...extra }),
  });
}

afterEach(() => vi.restoreAllMocks());

describe("no raw key anywhere", () => {
  it("keys never appear in logs, metrics, stats, overview or analytics rows; tenant names do", async () => {
    const printed: string[] = [];
    for (const level of ["log", "error", "warn", "info", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => printed.push(args.map(String).join(" ")));
    const unknown = "sk-secret-unknown-0123456789";
    const bodies: string[] = [];
    const keep = async (res: Response) => {
      bodies.push(JSON.stringify([...res.headers]), await res.text());
    };
    for (const key of Object.values(TEST_KEYS)) await keep(await ask(key, "tenants"));
    for (let i = 0; i < 4; i++) await keep(await ask(TEST_KEYS.small, "tenants")); // past its quota: 429s
    await keep(await ask(TEST_KEYS.tokens, "tenants", { max_tokens: 100_000 })); // never fits: 400
    await keep(await ask(unknown, "tenants", { service_tier: "nonsense" })); // 400
    await keep(await ask(unknown, "no-such-model")); // 404
    await keep(await ask(TEST_KEYS.alpha, "ray-default", { messages: "not an array" })); // 400
    const metrics = await (await SELF.fetch("http://spillway/spillway/metrics", { headers: auth })).text();
    const overview = await (await SELF.fetch("http://spillway/spillway/overview?replicas=0", { headers: auth })).text();
    const tenantStats = await (await SELF.fetch("http://spillway/spillway/stats/tenants", { headers: auth })).text();
    // Analytics rows, as the router writes them, through a dataset that records them.
    const rows: string[] = [];
    const dataset = { writeDataPoint: (p: unknown) => rows.push(JSON.stringify(p)) } as AnalyticsEngineDataset;
    writeDecision(dataset, {
      deployment: "tenants",
      shard: 0,
      outcome: "admitted",
      replica: "r",
      queueDepth: 0,
      drainRate: null,
      status: 200,
      tenant: "alpha",
    });
    writeDecision(
      dataset,
      rejectionPoint(
        {
          statusCode: 429,
          reason: "queue_full",
          message: "",
          decision: { rung: "none" },
          record: { reason: "queue_full", rung: "none", status: 429, tenant: "alpha" },
        } as unknown as Parameters<typeof rejectionPoint>[0],
        "tenants",
        0,
      ),
    );

    // The controls: the tenants' names are there, so a leak would be too.
    expect(metrics).toContain('tenant="alpha"');
    expect(tenantStats).toContain('"alpha"');
    expect(rows.join("\n")).toContain("alpha");
    const everything = [...printed, ...bodies, metrics, overview, tenantStats, ...rows].join("\n");
    for (const key of [...Object.values(TEST_KEYS), unknown]) {
      expect(everything).not.toContain(key);
      expect(everything).not.toContain(await hashApiKey(key));
    }
  });
});
