import { Hono } from "hono";
import { configFromEnv } from "./config";
import type { Env } from "./env";
import { fleetOverview, shardStats } from "./fleet-overview";
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from "./prometheus";
import { tenantQuotaStats } from "./tenant-quota-metrics";

/**
 * Guarded operator routes, mounted under `/spillway` after the admin bearer guard:
 * - `GET /overview`: every deployment's routers (summed over shards) and its replicas' `/load` and `/metrics`
 *   (the dashboard's data; `?replicas=0` skips the engine fetches).
 * - `GET /metrics`: every router shard's stats, and the configured tenants' quota counts, in Prometheus text format.
 *
 * @example
 * ```ts
 * app.use("/spillway/*", adminBearerAuth((c) => c.env.SPILLWAY_ADMIN_TOKEN));
 * app.route("/spillway", adminRoutes());
 * ```
 */
export function adminRoutes(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.get("/overview", async (c) => {
    const config = configFromEnv(c.env.SPILLWAY_CONFIG);
    const overview = await fleetOverview(c.env, config, c.req.query("replicas") !== "0");
    return c.json(overview, 200, { "cache-control": "no-store" });
  });
  app.get("/metrics", async (c) => {
    const config = configFromEnv(c.env.SPILLWAY_CONFIG);
    const [shards, quotas] = await Promise.all([
      Promise.all(
        Object.entries(config.deployments).map(([name, d]) => shardStats(c.env, name, d.routerShards, d.locationHint)),
      ),
      tenantQuotaStats(c.env, config),
    ]);
    return c.body(prometheusText(shards.flat(), quotas), 200, {
      "content-type": PROMETHEUS_CONTENT_TYPE,
      "cache-control": "no-store",
    });
  });
  return app;
}
