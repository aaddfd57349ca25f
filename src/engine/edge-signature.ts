import type { MiddlewareHandler } from "hono";
import { ReplayGuard, verifyRequest } from "../core/request-signature";
import type { Logger } from "./log-line";
import { errorBody } from "./openai-error";

/** How an engine trusts the edge. */
export interface EdgeSignatureOptions {
  /** Accepted secrets, current first (a previous one stays accepted while a rotation rolls out). */
  secrets: readonly string[];
  /** How far a signature's timestamp may be from this machine's clock. */
  windowMs: number;
  /** Also require a signature on `/load` and `/metrics` (the router's probe signs `/load`). */
  protectLoadAndMetrics: boolean;
  logger: Logger;
  now?: () => number;
}

/** Paths open to anyone: liveness and the model list reveal nothing and cost nothing. */
const OPEN_PATHS = new Set(["/health", "/v1/models"]);
const LOAD_AND_METRICS = new Set(["/load", "/metrics"]);

/**
 * Accepts inference only from the edge: a request must carry spillway's HMAC signature over its method, path,
 * body digest, deployment and timestamp, within the window and never seen before. Anything else gets 401 and
 * one warning line (the reason stays in the log; the client learns nothing).
 *
 * @example
 * ```ts
 * app.use(requireEdgeSignature({ secrets: [process.env.SPILLWAY_SIGNING_SECRET!], windowMs: 30_000,
 *   protectLoadAndMetrics: true, logger }));
 * ```
 */
export function requireEdgeSignature(options: EdgeSignatureOptions): MiddlewareHandler {
  const guard = new ReplayGuard(options.windowMs);
  const now = options.now ?? Date.now;
  return async function requireEdgeSignature(c, next) {
    const path = c.req.path;
    if (OPEN_PATHS.has(path) || (!options.protectLoadAndMetrics && LOAD_AND_METRICS.has(path))) return next();
    // Read the body only for requests that claim a signature, so unsigned floods cost a header check.
    const claimsSignature = c.req.header("x-spillway-signature") !== undefined;
    const body = claimsSignature && c.req.method !== "GET" ? await c.req.text() : "";
    const url = new URL(c.req.url);
    const result = claimsSignature
      ? await verifyRequest(
          options.secrets,
          { get: (name) => c.req.header(name) ?? null },
          { method: c.req.method, path: url.pathname + url.search, body },
          now(),
          guard,
          options.windowMs,
        )
      : ({ ok: false, failure: "missing" } as const);
    if (!result.ok) {
      options.logger.warning(`refused ${c.req.method} ${path}: edge signature ${result.failure}`);
      return c.json(errorBody("unauthorized", "authentication_error", null, 401), 401);
    }
    await next();
  };
}
