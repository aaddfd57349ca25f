import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { adminBearerAuth } from "./admin-auth";
import { adminRoutes } from "./admin-routes";
import { configFromEnv } from "./config";
import { dashboardRoutes } from "./dashboard/routes";
import { DeploymentRouter } from "./deployment-router";
import type { Env } from "./env";
import { type SpillwayVariables, spillway } from "./middleware";
import { spillwayModels } from "./models-routes";
import { openAIError } from "./openai-error";
import { placement, routerName, type ShardStats } from "./router-protocol";
import { TenantQuota } from "./tenant-quota-object";

export { DeploymentRouter, TenantQuota };

/**
 * The ready Worker: spillway in front of the deployments configured in `SPILLWAY_CONFIG`.
 *
 * - `POST /v1/chat/completions`, `POST /v1/completions`: admitted and forwarded, or shed with Retry-After.
 * - `GET /v1/models`: the configured deployments, in OpenAI's list format; `GET /v1/models/:model`: one of them.
 * - `GET /spillway/stats/:deployment`: router state per shard (bearer `SPILLWAY_ADMIN_TOKEN`).
 * - `GET /spillway/overview`, `GET /spillway/metrics` (Prometheus text): the same, guarded; see admin-routes.ts.
 * - `GET /spillway/dashboard`: the live dashboard page (open; it asks for the token before reading data).
 * - `GET /health`: liveness, and whether the configuration is valid.
 *
 * @example
 * ```sh
 * curl -s 127.0.0.1:8787/v1/chat/completions -H 'content-type: application/json' \
 *   -d '{"model":"demo-model","messages":[{"role":"user","content":"hi"}]}'
 * ```
 */
type WorkerEnv = { Bindings: Env; Variables: SpillwayVariables };
const app = new Hono<WorkerEnv>();

app.get("/health", (c) => {
  configFromEnv(c.env.SPILLWAY_CONFIG);
  return c.json({ ok: true });
});

// The package's own routes (`spillwayModels`): one code path for this Worker and a Worker built on the package.
app.route("/", spillwayModels());

app.post("/v1/chat/completions", spillway());
app.post("/v1/completions", spillway());

// Before the guard: the page and its assets hold no data (the page asks for the token itself).
app.route("/spillway", dashboardRoutes());
app.use(
  "/spillway/*",
  adminBearerAuth<WorkerEnv>((c) => c.env.SPILLWAY_ADMIN_TOKEN),
);
app.route("/spillway", adminRoutes());
app.get("/spillway/stats/:deployment", async (c) => {
  const config = configFromEnv(c.env.SPILLWAY_CONFIG);
  const name = c.req.param("deployment");
  const deployment = Object.hasOwn(config.deployments, name) ? config.deployments[name] : undefined;
  if (!deployment) return openAIError(404, "unknown deployment", "invalid_request_error", "not_found");
  const shards: ShardStats[] = await Promise.all(
    Array.from({ length: deployment.routerShards }, (_, shard) =>
      c.env.DEPLOYMENT_ROUTER.getByName(routerName(name, shard), placement(deployment.locationHint)).stats(name, shard),
    ),
  );
  // JSON has no Infinity: the histogram's last bucket is "+Inf", as in Prometheus.
  return c.json({
    deployment: name,
    shards: shards.map((s) => ({
      ...s,
      suggestedDelayBuckets: s.suggestedDelayBuckets.map((b) => ({ ...b, le: Number.isFinite(b.le) ? b.le : "+Inf" })),
      drainTimeError: {
        ...s.drainTimeError,
        buckets: s.drainTimeError.buckets.map((b) => ({ ...b, le: Number.isFinite(b.le) ? b.le : "+Inf" })),
      },
    })),
  });
});

// OpenAI's answer to a URL it has no route for (code `unknown_url`), as spillway's engine, vLLM and SGLang give it:
// one code for a client to match whichever answered. The path as the request line had it (not percent-decoded).
app.notFound((c) =>
  openAIError(
    404,
    `Invalid URL (${c.req.method} ${new URL(c.req.url).pathname})`,
    "invalid_request_error",
    "unknown_url",
  ),
);

app.onError((error, c) => {
  // An answer decided by a middleware (the admin guard's 401), not a failure.
  if (error instanceof HTTPException) return error.getResponse();
  console.error(JSON.stringify({ event: "spillway.error", path: c.req.path, message: error.message }));
  return openAIError(500, "internal error in the edge", "server_error", "internal_error");
});

export default app;
