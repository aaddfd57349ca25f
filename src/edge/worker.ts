import { Hono } from "hono";
import { DeploymentRouter } from "./deployment-router";
import type { Env } from "./env";

export { DeploymentRouter };

interface SliceConfig {
  deployments: Record<string, { replicas: string[] }>;
}

/**
 * The ready Worker: maps a request to its deployment by the body's `model`, asks that deployment's
 * router for a replica, and forwards the request to it.
 *
 * @example
 * ```sh
 * curl -s 127.0.0.1:8787/v1/chat/completions -H 'content-type: application/json' \
 *   -d '{"model":"demo-model","messages":[{"role":"user","content":"hi"}]}'
 * ```
 */
const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true }));

app.post("/v1/*", async (c) => {
  const config = JSON.parse(c.env.SPILLWAY_CONFIG) as SliceConfig;
  const body = await c.req.text();
  const model = (JSON.parse(body) as { model?: string }).model ?? "";
  const deployment = config.deployments[model];
  if (!deployment)
    return c.json(
      { error: { message: `unknown model ${model}`, type: "invalid_request_error", code: "model_not_found" } },
      404,
    );
  const router = c.env.DEPLOYMENT_ROUTER.getByName(model);
  const { replica } = await router.acquire(deployment.replicas);
  const url = new URL(c.req.path, replica);
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
});

export default app;
