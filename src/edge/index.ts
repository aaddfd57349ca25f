/**
 * The `spillway` package: load shedding for OpenAI-compatible LLM APIs on Cloudflare Workers. A Hono
 * middleware (`spillway()`), the router Durable Object it talks to (`DeploymentRouter`, which the Worker must
 * export), and the `GET /v1/models` routes (`spillwayModels()`), configured by the `SPILLWAY_CONFIG` binding.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { spillway, spillwayModels, type SpillwayBindings } from "spillway";
 * export { DeploymentRouter } from "spillway";
 *
 * const app = new Hono<{ Bindings: SpillwayBindings }>();
 * app.route("/", spillwayModels());
 * app.post("/v1/chat/completions", spillway());
 * export default app;
 * ```
 */
// The configuration's parser and types: also the `spillway/config` entry, which loads in Node.
export * from "./config-entry";
export { DeploymentRouter } from "./deployment-router";
export type { Env as SpillwayBindings } from "./env";
export { type SpillwayDecision, type SpillwayOptions, type SpillwayVariables, spillway } from "./middleware";
export { spillwayModels } from "./models-routes";
export type { LoadSource, ReplicaTarget } from "./replica-probe";
export type { AcceptedBody } from "./request-body";
export type { AcquireResult } from "./router-protocol";
export { TenantQuota } from "./tenant-quota-object";
export type { TenantQuotaStats } from "./tenant-quota-stats";
