import type { Context, MiddlewareHandler } from "hono";
import { clientHorizonS } from "../core/client-horizon";
import { requestFingerprint, shardForFingerprint } from "../core/request-fingerprint";
import { configFromEnv, parseConfig, type SpillwayConfig, type SpillwayConfigInput } from "./config";
import type { DeploymentRouter } from "./deployment-router";
import type { Env } from "./env";
import { forwardToReplica, relayBody, upstreamHeaders } from "./forward";
import { openAIError } from "./openai-error";
import { type AcceptedBody, readRequestBody } from "./request-body";
import { isRetry } from "./retry-count";
import { type AcquireResult, routerName } from "./router-protocol";

/** What spillway decided for a request, readable by later middleware as `c.get("spillway")`. */
export interface SpillwayDecision {
  deployment: string;
  shard: number;
  outcome: "admitted" | "rejected";
  /** The Retry-After sent with a rejection, if any. */
  retryAfterS?: number;
}

/** Context variables the middleware sets. */
export type SpillwayVariables = { spillway: SpillwayDecision };

type SpillwayEnv = { Bindings: Env; Variables: SpillwayVariables };

/** Options of `spillway()`; every one has a default that fits the ready Worker's wrangler.toml. */
export interface SpillwayOptions {
  /** The configuration document; default: `c.env.SPILLWAY_CONFIG`, parsed once per isolate. */
  config?: SpillwayConfigInput;
  /** The router Durable Object namespace; default: `c.env.DEPLOYMENT_ROUTER`. */
  routers?: (c: Context<SpillwayEnv>) => DurableObjectNamespace<DeploymentRouter>;
  /** Maps a request to its deployment; default: the body's `model`. */
  deploymentOf?: (c: Context<SpillwayEnv>, body: AcceptedBody) => string;
  /** Attempts per request when a replica cannot be reached at all (nothing was sent); default 2. */
  connectAttempts?: number;
}

/** The refusal a client sees: status, Retry-After, retry-after-ms and an OpenAI-style body. */
function rejectionResponse(result: Extract<AcquireResult, { kind: "rejected" }>): Response {
  const headers: Record<string, string> = {};
  if (result.retryAfterS !== undefined) headers["retry-after"] = String(result.retryAfterS);
  if (result.retryAfterMs !== undefined) headers["retry-after-ms"] = String(result.retryAfterMs);
  const [type, code] =
    result.status === 429 ? ["requests", "rate_limit_exceeded"] : ["server_error", "service_unavailable"];
  return openAIError(result.status, result.message, type, code, headers);
}

/** 499, nginx's "client closed request": nobody reads it, but logs and `c.res` see why the request ended. */
function clientClosed(): Response {
  return openAIError(499, "client closed the request", "invalid_request_error", "client_closed_request");
}

/**
 * The replica's answer, passed on untouched, with the slot released when it has been delivered: SSE is relayed
 * chunk by chunk (released when the stream ends, fails or the client leaves); a whole JSON answer is small, so
 * it is read, the slot released, and answered (cheaper than relaying a stream).
 */
async function answerFrom(
  upstream: Response,
  release: (replicaFailed: boolean) => void,
  clientSignal: AbortSignal,
): Promise<Response> {
  if (!upstream.body) {
    release(false);
    return new Response(null, upstream);
  }
  if (upstream.headers.get("content-type")?.includes("text/event-stream")) {
    return new Response(relayBody(upstream.body, release, clientSignal, true), upstream);
  }
  let answer: ArrayBuffer;
  try {
    answer = await upstream.arrayBuffer();
  } catch {
    release(!clientSignal.aborted);
    return openAIError(502, "the replica failed mid-answer", "server_error", "upstream_failed");
  }
  release(false);
  return new Response(answer, upstream);
}

/**
 * spillway: load shedding for OpenAI-compatible LLM APIs. Maps a request to its deployment (the body's
 * `model`), asks that deployment's router (a Durable Object) for a replica slot, and either forwards the
 * request to the chosen engine server and streams the answer back untouched, or refuses it with 429/503,
 * a computed `Retry-After`, `retry-after-ms` and an OpenAI-style error body. The slot is released when the
 * response ends, fails, or the client disconnects.
 *
 * Only POST requests are handled; anything else goes to the next handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { spillway } from "spillway/edge/middleware";
 * export { DeploymentRouter } from "spillway/edge/deployment-router";
 *
 * const app = new Hono<{ Bindings: Env }>();
 * app.use("/v1/*", spillway());
 * export default app;
 * ```
 */
export function spillway(options: SpillwayOptions = {}): MiddlewareHandler<SpillwayEnv> {
  const fixedConfig: SpillwayConfig | undefined = options.config ? parseConfig(options.config) : undefined;
  const connectAttempts = Math.max(1, options.connectAttempts ?? 2);
  return async function spillway(c, next) {
    if (c.req.method !== "POST") return next();
    const config = fixedConfig ?? configFromEnv(c.env.SPILLWAY_CONFIG);
    const body = await readRequestBody(c.req.raw, c.req.path, config.maxBodyBytes);
    if ("status" in body) return openAIError(body.status, body.message, "invalid_request_error", null, {}, body.param);
    const deployment = options.deploymentOf ? options.deploymentOf(c, body) : body.model;
    const deploymentConfig = Object.hasOwn(config.deployments, deployment) ? config.deployments[deployment] : undefined;
    if (!deploymentConfig) {
      return openAIError(
        404,
        `The model \`${deployment}\` does not exist`,
        "invalid_request_error",
        "model_not_found",
        {},
        "model",
      );
    }
    const pathAndSearch = c.req.path + new URL(c.req.url).search;
    // Every attempt of the same request has the same fingerprint: it picks the shard (so a retry meets the
    // router that refused it) and is the only key to the promise that router made it.
    const fingerprint = await requestFingerprint({
      authorization: c.req.header("authorization"),
      method: c.req.method,
      path: pathAndSearch,
      body: body.text,
    });
    const shard = shardForFingerprint(fingerprint, deploymentConfig.routerShards);
    const router = (options.routers?.(c) ?? c.env.DEPLOYMENT_ROUTER).getByName(routerName(deployment, shard));
    const clientSignal = c.req.raw.signal;
    const submit = {
      fingerprint,
      // The SDK headers only say how long a hint the client honours (openai-node: any; others: 60 s).
      clientHorizonS: clientHorizonS({
        lang: c.req.header("x-stainless-lang"),
        packageVersion: c.req.header("x-stainless-package-version"),
      }),
      // `x-stainless-retry-count` is a client's claim: only the legacy `retry_schedule` reads it.
      retry: isRetry(c.req.header("x-stainless-retry-count")),
    };

    for (let attempt = 1; ; attempt++) {
      const ticket = crypto.randomUUID();
      // A client that leaves while queued must not keep its queue place (or the slot it was just given).
      const cancel = () => c.executionCtx.waitUntil(router.cancel(ticket));
      clientSignal.addEventListener("abort", cancel, { once: true });
      let result: AcquireResult;
      try {
        result = await router.acquire(deployment, shard, ticket, submit);
      } finally {
        clientSignal.removeEventListener("abort", cancel);
      }
      if (result.kind === "rejected") {
        c.set("spillway", { deployment, shard, outcome: "rejected", retryAfterS: result.retryAfterS });
        return rejectionResponse(result);
      }
      c.set("spillway", { deployment, shard, outcome: "admitted" });
      const release = (replicaFailed: boolean) => c.executionCtx.waitUntil(router.release(ticket, replicaFailed));
      if (clientSignal.aborted) {
        release(false);
        return clientClosed();
      }
      const outcome = await forwardToReplica({
        replica: result.replica,
        pathAndSearch,
        headers: upstreamHeaders(c.req.raw.headers),
        body: body.text,
        deployment,
        signingSecret: c.env.SPILLWAY_SIGNING_SECRET,
        headersTimeoutMs: deploymentConfig.upstreamTimeoutS * 1000,
        clientSignal,
      });
      if (outcome.kind === "client_gone") {
        release(false);
        return clientClosed();
      }
      if (outcome.kind === "timeout") {
        // The engine took the request and went silent: its slot is not coming back by itself.
        release(true);
        return openAIError(504, "the replica did not answer in time", "server_error", "upstream_timeout");
      }
      if (outcome.kind === "unreachable") {
        release(true);
        // Nothing reached the engine: try another replica before answering.
        if (attempt < connectAttempts) continue;
        return openAIError(502, "no replica could be reached", "server_error", "bad_gateway");
      }
      return answerFrom(outcome.response, release, clientSignal);
    }
  };
}
