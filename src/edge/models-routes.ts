import { Hono } from "hono";
import { configOrInvalid } from "./config-invalid";
import type { Env } from "./env";
import { modelNotFound } from "./openai-error";

const modelEntry = (id: string) => ({ id, object: "model", created: 0, owned_by: "spillway" });

/**
 * `GET /v1/models` (the deployments in `SPILLWAY_CONFIG`, in OpenAI's list format) and `GET /v1/models/:model` (one
 * of them, or OpenAI's 404 `model_not_found`): the official clients' `models.list()` and `models.retrieve(id)`, and
 * the tools that discover a server's models through them, fail against a Worker without these routes. The
 * repository's Worker mounts this same sub-app, so a Worker built on the package answers as it does. Open, as
 * OpenAI's are: the answers name the deployments, nothing more (`tenants.requireKey` does not guard them).
 * Generic over the Worker's env so that it mounts on an app whose bindings add their own to `SpillwayBindings`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { spillway, spillwayModels, type SpillwayBindings } from "spillway";
 *
 * const app = new Hono<{ Bindings: SpillwayBindings }>();
 * app.route("/", spillwayModels());
 * app.post("/v1/chat/completions", spillway());
 * ```
 */
export function spillwayModels<E extends { Bindings: Pick<Env, "SPILLWAY_CONFIG"> } = { Bindings: Env }>(): Hono<E> {
  const app = new Hono<E>();
  app.get("/v1/models", (c) => {
    const config = configOrInvalid(c.env.SPILLWAY_CONFIG);
    if (config instanceof Response) return config;
    return c.json({ object: "list", data: Object.keys(config.deployments).map(modelEntry) });
  });
  // The official clients' `models.retrieve(id)` (an id with a slash comes percent-encoded, one segment): a configured
  // deployment as the list names it, or the 404 a request naming any other model gets.
  app.get("/v1/models/:model", (c) => {
    const config = configOrInvalid(c.env.SPILLWAY_CONFIG);
    if (config instanceof Response) return config;
    const model = c.req.param("model");
    if (Object.hasOwn(config.deployments, model)) return c.json(modelEntry(model));
    return modelNotFound(model);
  });
  return app;
}
