import type { MiddlewareHandler } from "hono";
import { ReplayGuard, type SignatureFailure, verifyRequest } from "../core/request-signature";
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
  /**
   * The deployments this engine serves: a valid signature made for any other is refused, so a request captured
   * on its way to another deployment's engine (one secret may sign for several) cannot be replayed here. Unset
   * or empty: any deployment. `/load` and `/metrics` are exempt (the edge's probes sign them for no deployment).
   */
  deployments?: readonly string[];
  logger: Logger;
  now?: () => number;
}

/** Why the engine refused a request: the signature's own failures, or `deployment` (signed for another). */
export type EdgeRefusal = SignatureFailure | "deployment";

/** Paths open to anyone: liveness and the model list (and its one model, by id) reveal nothing and cost nothing. */
const OPEN_PATHS = new Set(["/health", "/v1/models"]);
const isOpenPath = (path: string) => OPEN_PATHS.has(path) || /^\/v1\/models\/[^/]+$/.test(path);
const LOAD_AND_METRICS = new Set(["/load", "/metrics"]);

/**
 * Accepts inference only from the edge: a request must carry spillway's HMAC signature over its method, path,
 * body digest, deployment and timestamp, within the window and never seen before, and (with `deployments` set)
 * made for one of this engine's deployments. Anything else gets 401 and one warning line (the reason stays in
 * the log; the client learns nothing).
 *
 * @example
 * ```ts
 * app.use(requireEdgeSignature({ secrets: [process.env.SPILLWAY_SIGNING_SECRET!], windowMs: 30_000,
 *   protectLoadAndMetrics: true, deployments: ["llama"], logger }));
 * ```
 */
export function requireEdgeSignature(options: EdgeSignatureOptions): MiddlewareHandler {
  const guard = new ReplayGuard(options.windowMs);
  const now = options.now ?? Date.now;
  const served = options.deployments && options.deployments.length > 0 ? new Set(options.deployments) : undefined;
  const servedList = [...(served ?? [])].map((d) => JSON.stringify(d)).join(", ");
  return async function requireEdgeSignature(c, next) {
    const path = c.req.path;
    if (isOpenPath(path) || (!options.protectLoadAndMetrics && LOAD_AND_METRICS.has(path))) return next();
    // Read the body only for requests that claim a signature, so unsigned floods cost a header check.
    const claimsSignature = c.req.header("x-spillway-signature") !== undefined;
    const body = claimsSignature && c.req.method !== "GET" ? await c.req.text() : "";
    const url = new URL(c.req.url);
    // The log names the path as the request line had it: `c.req.path` is percent-decoded, and a `%0A` in it wrote an
    // unsigned caller's own lines into the engine's log.
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
    const refuse = (reason: EdgeRefusal, detail = "") => {
      options.logger.warning(`refused ${c.req.method} ${url.pathname}: edge signature ${reason}${detail}`);
      return c.json(errorBody("unauthorized", "authentication_error", null, 401), 401);
    };
    if (!result.ok) return refuse(result.failure);
    // The signature is valid, so the deployment is the edge's own text, safe to name in the log.
    if (served && !LOAD_AND_METRICS.has(path) && !served.has(result.deployment))
      return refuse("deployment", ` (signed for ${JSON.stringify(result.deployment)}, serving ${servedList})`);
    await next();
  };
}
