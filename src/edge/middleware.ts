import type { Context, MiddlewareHandler } from "hono";
import { announcesSdk, clientHorizonS } from "../core/client-horizon";
import { requestFingerprint, shardForFingerprint } from "../core/request-fingerprint";
import type { ReleaseOutcome } from "../core/router-core";
import { type AcquireOutcome, acquireSlot } from "./acquire-slot";
import { quotaRefusalPoint, writeDecision } from "./analytics";
import { configInvalid, configOrInvalid } from "./config-invalid";
import type { DeploymentRouter } from "./deployment-router";
import type { Env } from "./env";
import {
  downstreamHeaders,
  type ForwardOutcome,
  fingerprintCredential,
  forwardToReplica,
  relayBody,
  upstreamHeaders,
} from "./forward";
import { modelNotFound, openAIError } from "./openai-error";
import { replicaLabel } from "./replica-label";
import { type AcceptedBody, readRequestBody } from "./request-body";
import { tapEventStreamUsage, usageOfJson } from "./response-usage";
import { isRetry } from "./retry-count";
import { type AcquireResult, placement, routerName } from "./router-protocol";
import { routerUnavailable } from "./router-unavailable";
import { priorityOf } from "./service-tier";
import { type CarriedSlots, type ReleasedSlot, SlotBatch, type TakenSlot } from "./slot-batch";
import type { TenantPlanInput } from "./tenant-config";
import { chargeQuota, estimateTokens } from "./tenant-quota-charge";
import type { TenantQuota } from "./tenant-quota-object";
import { resolvedPlan, resolveTenant } from "./tenant-resolver";
import { withTenantHeaders } from "./tenant-response";
import { upstreamApiKey } from "./upstream-credential";

/** What spillway decided for a request, readable by later middleware as `c.get("spillway")`. */
export interface SpillwayDecision {
  deployment: string;
  /** The router shard asked; -1 when the tenant's quota refused the request before any router was asked. */
  shard: number;
  outcome: "admitted" | "rejected";
  /** The Retry-After sent with a rejection, if any. */
  retryAfterS?: number;
  /** The tenant's name (never its key) and the request's priority class. */
  tenant?: string;
  priority?: "interactive" | "batch";
}

/** Context variables the middleware sets. */
export type SpillwayVariables = { spillway: SpillwayDecision };

type SpillwayEnv = { Bindings: Env; Variables: SpillwayVariables };

/**
 * Options of `spillway()`; every one has a default that fits the ready Worker's wrangler.toml. The configuration
 * itself is always the `SPILLWAY_CONFIG` binding: the router Durable Objects read it too, so it has one source.
 */
export interface SpillwayOptions {
  /** The router Durable Object namespace; default: `c.env.DEPLOYMENT_ROUTER`. */
  routers?: (c: Context<SpillwayEnv>) => DurableObjectNamespace<DeploymentRouter>;
  /** Maps a request to its deployment; default: the body's `model`. */
  deploymentOf?: (c: Context<SpillwayEnv>, body: AcceptedBody) => string;
  /**
   * Attempts per request when a replica cannot be reached at all (nothing was sent) or refuses it with 503 (nothing
   * was done); default 2.
   */
  connectAttempts?: number;
  /**
   * Who is asking, from the operator's own auth (e.g. their middleware's context); default: the bearer key's
   * SHA-256 looked up in `tenants.keys`, then in `c.env.SPILLWAY_TENANT_KEYS`. `undefined`: an unknown caller.
   * The plan's `name` is then part of the request's fingerprint: name each tenant apart.
   */
  tenantOf?: (c: Context<SpillwayEnv>) => TenantPlanInput | undefined | Promise<TenantPlanInput | undefined>;
  /** The tenant quota Durable Object namespace; default: `c.env.TENANT_QUOTA`. */
  quotas?: (c: Context<SpillwayEnv>) => DurableObjectNamespace<TenantQuota> | undefined;
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

/** A replica's answer as `forwardToReplica` gave it. */
type ForwardedAnswer = Extract<ForwardOutcome, { kind: "response" }>;

/**
 * The replica's answer, passed on untouched (its status, body and headers, hop-by-hop ones aside), with the slot
 * released when it has been delivered: SSE (`text/event-stream`, in any case) is relayed chunk by chunk, without the
 * replica's Content-Length (released when the stream ends, fails or the client leaves); any other answer is
 * small, so `forwardToReplica` has read it whole, and the slot is released and the answer sent (cheaper than
 * relaying a stream).
 */
async function answerFrom(
  { response: upstream, body, bodyFailure }: ForwardedAnswer,
  release: (replicaFailed: boolean) => void,
  clientSignal: AbortSignal,
  onUsage?: (totalTokens: number | undefined) => void,
): Promise<Response> {
  // Hop-by-hop headers are the replica's connection's, not the client's.
  const init = {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: downstreamHeaders(upstream.headers),
  };
  if (bodyFailure !== undefined) {
    // Released as failed, the replica marked down until a probe answers, whether its body broke or went silent for
    // `upstreamIdleTimeoutS`: as for a stream's first event (8338d59), an engine that stops sending mid-answer is
    // hung or dead as far as the edge can tell, and its probe brings it back at once if it is neither.
    release(!clientSignal.aborted);
    onUsage?.(undefined);
    // Nothing has reached the client yet: a silent replica is a gateway timeout, as one that never began.
    if (bodyFailure === "silent")
      return openAIError(504, "the replica went silent mid-answer", "server_error", "upstream_timeout");
    return openAIError(502, "the replica failed mid-answer", "server_error", "upstream_failed");
  }
  if (body !== undefined) {
    // An answer that is not a stream, read whole by forwardToReplica.
    release(false);
    onUsage?.(usageOfJson(body));
    return new Response(body, init);
  }
  if (!upstream.body) {
    release(false);
    onUsage?.(undefined);
    return new Response(null, init);
  }
  // What forwardToReplica leaves unread with a body: a stream (`text/event-stream`).
  const relayed = relayBody(upstream.body, release, clientSignal, true);
  // The relayed stream may end with an error event the replica never sent: its length is not the replica's.
  init.headers.delete("content-length");
  return new Response(onUsage ? tapEventStreamUsage(relayed, onUsage) : relayed, init);
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
 * import { spillway, type SpillwayBindings } from "spillway";
 * export { DeploymentRouter } from "spillway";
 *
 * const app = new Hono<{ Bindings: SpillwayBindings }>();
 * app.post("/v1/chat/completions", spillway());
 * export default app;
 * ```
 */
export function spillway(options: SpillwayOptions = {}): MiddlewareHandler<SpillwayEnv> {
  const connectAttempts = options.connectAttempts ?? 2;
  // Refused where the Worker starts, not clamped: 0 or NaN ran one attempt and 2.5 three, without a word.
  if (!Number.isInteger(connectAttempts) || connectAttempts < 1) {
    const got = typeof connectAttempts === "string" ? JSON.stringify(connectAttempts) : String(connectAttempts);
    throw new TypeError(`spillway(): connectAttempts must be a whole number of at least 1, got ${got}`);
  }
  // One per isolate: releases to a router ride along with each other and with the next acquire, and (with
  // slotHandoffMs) a finished request's slot may go straight to the next request.
  const slots = new SlotBatch();
  return async function spillway(c, next) {
    if (c.req.method !== "POST") return next();
    const config = configOrInvalid(c.env.SPILLWAY_CONFIG);
    if (config instanceof Response) return config;
    // Without the router binding every request failed as the router being unreachable: a 503 "retry later" and a
    // TypeError in the log, where the operator's wrangler.toml lacks the binding (README, "Install in your Worker").
    const routers = options.routers?.(c) ?? c.env.DEPLOYMENT_ROUTER;
    if (!routers)
      return configInvalid(
        'the Worker has no DEPLOYMENT_ROUTER binding: wrangler.toml needs a [[durable_objects.bindings]] named DEPLOYMENT_ROUTER with class_name = "DeploymentRouter", exported by the Worker (or pass spillway({ routers }))',
        "the gateway has no DEPLOYMENT_ROUTER binding (its log says why)",
      );
    // Who is asking comes first: an unknown key is refused before its body is read.
    const who = options.tenantOf
      ? resolvedPlan(await options.tenantOf(c), config.tenants)
      : await resolveTenant(c.req.header("authorization"), config.tenants, c.env.SPILLWAY_TENANT_KEYS);
    if (who.kind === "unauthorized") return openAIError(401, who.message, "invalid_request_error", "invalid_api_key");
    const plan = who.plan;
    const body = await readRequestBody(c.req.raw, c.req.path, config.maxBodyBytes);
    if ("status" in body) return openAIError(body.status, body.message, "invalid_request_error", null, {}, body.param);
    const deployment = options.deploymentOf ? options.deploymentOf(c, body) : body.model;
    const deploymentConfig = Object.hasOwn(config.deployments, deployment) ? config.deployments[deployment] : undefined;
    if (!deploymentConfig) return modelNotFound(deployment);
    let apiKey: string | undefined;
    try {
      apiKey = upstreamApiKey(c.env, deploymentConfig);
    } catch (error) {
      return openAIError(500, (error as Error).message, "server_error", "upstream_credential_missing");
    }
    const priority = priorityOf(plan, body.serviceTier);
    if (typeof priority !== "string")
      return openAIError(400, priority.message, "invalid_request_error", "invalid_service_tier", {}, "service_tier");
    const quota = await chargeQuota({
      plan,
      tokens: estimateTokens(body.textLength, body.maxTokens, config.tenants.defaultMaxTokens, body.completions),
      ...(body.maxTokens === undefined ? { assumedMaxTokens: config.tenants.defaultMaxTokens } : {}),
      namespace: options.quotas ? options.quotas(c) : c.env.TENANT_QUOTA,
      leaseMs: config.tenants.quotaLeaseMs,
      waitUntil: (promise) => c.executionCtx.waitUntil(promise),
    });
    if (quota.kind === "refused") {
      c.set("spillway", { deployment, shard: -1, outcome: "rejected", tenant: plan.name, priority });
      writeDecision(c.env.SPILLWAY_METRICS, quotaRefusalPoint(quota.response, deployment, plan.name));
      return quota.response;
    }
    const { charge } = quota;
    const tenant = { tenant: plan.name, priority };
    // The path as the client's URL has it: `c.req.path` is percent-decoded (`%5C` a backslash, `%2E` a dot, `%0A`
    // a newline), which the replica's URL would then re-read as separators, dot segments, or drop.
    const { pathname, search } = new URL(c.req.url);
    const pathAndSearch = pathname + search;
    // Every attempt of the same request has the same fingerprint: it picks the shard (so a retry meets the
    // router that refused it) and is the only key to the promise that router made it.
    // With the operator's own `tenantOf`, the caller may prove who it is by anything (a header of its own, a
    // cookie, the operator's middleware): the tenant it named is part of the credential, so two tenants sending the
    // same body never share a fingerprint (a shard, and each the key to the other's booked retry). A header value
    // holds no newline, so the two parts cannot spell another pair.
    const credential = fingerprintCredential(c.req.raw.headers);
    const fingerprint = await requestFingerprint({
      authorization: options.tenantOf ? `${credential ?? ""}\ntenant ${plan.name}` : credential,
      method: c.req.method,
      path: pathAndSearch,
      // The bytes of the text the checks read (a leading BOM dropped): the same fingerprint as over that text.
      body: body.bytes,
    });
    const shard = shardForFingerprint(fingerprint, deploymentConfig.routerShards);
    // A fresh stub per call: after a Durable Object reset the old stub keeps failing.
    const router = routerName(deployment, shard);
    const routerOf = () => routers.getByName(router, placement(deploymentConfig.locationHint));
    // Only a real promise is registered: most of the batch's answers are `undefined` (another request carries it).
    const waitUntil = (promise: Promise<unknown> | undefined) => {
      if (promise) c.executionCtx.waitUntil(promise);
    };
    // A failed attempt's releases, carried by the next attempt's acquire (`SlotBatch.endBeforeRetry`).
    let carryNext: ReleasedSlot[] = [];
    const carrier = {
      take: () => {
        const carried = slots.takeFor(router);
        carried.released.unshift(...carryNext);
        carryNext = [];
        return carried;
      },
      failed: (carried: CarriedSlots) => waitUntil(slots.putBack(router, carried, routerOf)),
    };
    /** Ends a slot of this isolate's batch; `retrying`: a failed one, whose request asks the router again at once. */
    const ender = (slot: TakenSlot) => (replicaFailed: ReleaseOutcome, retrying?: boolean) => {
      if (retrying && replicaFailed) {
        const { carry, keep } = slots.endBeforeRetry(router, slot, replicaFailed, routerOf);
        carryNext.push(...carry);
        waitUntil(keep);
      } else {
        waitUntil(slots.end(router, slot, replicaFailed, routerOf));
      }
    };
    const clientSignal = c.req.raw.signal;
    // The SDK headers only say how long a hint the client honours (openai-node from 6.35.0: 120 s, earlier 59 s;
    // others: 60 s), and that it honours one at all (`booking.sdkClientsLeaveShare`).
    const identity = {
      lang: c.req.header("x-stainless-lang"),
      packageVersion: c.req.header("x-stainless-package-version"),
    };
    const submit = {
      fingerprint,
      clientHorizonS: clientHorizonS(identity),
      sdkClient: announcesSdk(identity),
      // `x-stainless-retry-count` is a client's claim: only the legacy `retry_schedule` reads it.
      retry: isRetry(c.req.header("x-stainless-retry-count")),
      ...tenant,
      weight: plan.weight,
    };

    for (let attempt = 1; ; attempt++) {
      let replica: string;
      // `retrying`: the request goes on to another attempt at once (see `ender`).
      let release: (replicaFailed: ReleaseOutcome, retrying?: boolean) => void;
      // A slot a request of this isolate just finished with, while the router lets it be handed on; not after a
      // replica could not be reached (that one is marked down: ask the router).
      const taken = attempt === 1 ? slots.take(router) : undefined;
      if (taken) {
        ({ replica } = taken);
        waitUntil(slots.handedOff(router, [taken.ticket, plan.name, plan.weight, priority, fingerprint], routerOf));
        release = ender(taken);
      } else {
        const ticket = crypto.randomUUID();
        // A client that leaves while queued must not keep its queue place (or the slot it was just given).
        let cancelled = false;
        const cancel = () => {
          cancelled = true;
          waitUntil(routerOf().cancel(ticket));
        };
        clientSignal.addEventListener("abort", cancel, { once: true });
        let acquired: AcquireOutcome;
        try {
          acquired = await acquireSlot(routerOf, { deployment, shard, ticket, options: submit }, Date.now, carrier);
        } catch (error) {
          // The router's own code threw (a bug, or a call it refused): the request fails unserved, so uncharged.
          charge.refund();
          throw error;
        } finally {
          clientSignal.removeEventListener("abort", cancel);
        }
        if (acquired.kind === "unavailable") {
          const passed = routerUnavailable(deploymentConfig, deployment, acquired);
          if ("response" in passed) {
            charge.refund();
            c.set("spillway", {
              deployment,
              shard,
              outcome: "rejected",
              retryAfterS: deploymentConfig.backpressure.retryAfterS,
              ...tenant,
            });
            return withTenantHeaders(passed.response, charge.headers);
          }
          ({ replica, release } = passed);
        } else {
          const result = acquired.result;
          slots.heard(router, result);
          if (result.kind === "rejected") {
            charge.refund();
            c.set("spillway", { deployment, shard, outcome: "rejected", retryAfterS: result.retryAfterS, ...tenant });
            return withTenantHeaders(rejectionResponse(result), charge.headers);
          }
          const slot = { ticket, replica: result.replica };
          replica = slot.replica;
          // Its client left while the answer was on its way, and the cancel sent then gives the slot back in the
          // router: released (again: idempotent), never parked, or the isolate's next request would take a slot the
          // router counts free and gives to another.
          release = cancelled
            ? (replicaFailed: ReleaseOutcome) => waitUntil(slots.release(router, [ticket, replicaFailed], routerOf))
            : ender(slot);
        }
      }
      c.set("spillway", { deployment, shard, outcome: "admitted", ...tenant });
      if (clientSignal.aborted) {
        release(false);
        charge.refund();
        return clientClosed();
      }
      const headers = upstreamHeaders(c.req.raw.headers);
      // The backend's own key replaces the client's (which authenticated to this Worker, not to the backend).
      if (apiKey !== undefined) headers.set("authorization", `Bearer ${apiKey}`);
      const outcome = await forwardToReplica({
        replica,
        pathAndSearch,
        headers,
        body: body.bytes,
        deployment,
        signingSecret: c.env.SPILLWAY_SIGNING_SECRET,
        headersTimeoutMs: deploymentConfig.upstreamTimeoutS * 1000,
        idleTimeoutMs: deploymentConfig.upstreamIdleTimeoutS * 1000,
        clientSignal,
      });
      if (outcome.kind === "client_gone") {
        release(false);
        charge.settle(undefined);
        return clientClosed();
      }
      if (outcome.kind === "timeout") {
        // The engine took the request and went silent: its slot is not coming back by itself.
        release(true);
        charge.settle(undefined);
        return withTenantHeaders(
          openAIError(504, "the replica did not answer in time", "server_error", "upstream_timeout"),
          charge.headers,
        );
      }
      if (outcome.kind === "unreachable") {
        release(true, attempt < connectAttempts);
        // Why, for the operator (a redirect says "configure the replica's final URL"); the probe's line says it
        // only for replicas a probe reads, and only once the probe has run.
        console.log(
          JSON.stringify({
            event: "spillway.replica_unreachable",
            deployment,
            replica: replicaLabel(replica),
            attempt,
            message: outcome.message,
          }),
        );
        // Nothing reached the engine: try another replica before answering.
        if (attempt < connectAttempts) continue;
        charge.refund();
        return withTenantHeaders(
          openAIError(502, "no replica could be reached", "server_error", "bad_gateway"),
          charge.headers,
        );
      }
      const { response } = outcome;
      if (response.status === 503) {
        // A replica that answers 503 took no request (spillway's engine while it drains for shutdown, a proxy with
        // no engine behind it, a server shedding under back-pressure, as Ray Serve does): the request tries another
        // replica, as for one that cannot be reached, and the slot is released as "full" (its slot would otherwise
        // come back at once, as the shortest queue): the router probes it before choosing it again, and a probe
        // that fails (a draining engine's /load answers 503 too) marks it down. Not down at once: a busy fleet
        // whose every replica shed one request would be refused whole, with 503s, for a second.
        // Not a replica no probe reads (`load: "none"`): nothing would mark it down, and a draining one would take
        // every request for good; it is marked down now, as before.
        const unprobed = deploymentConfig.replicas.some((r) => r.url === replica && r.load === "none");
        release(unprobed || "full", attempt < connectAttempts);
        if (attempt < connectAttempts) {
          // A body that already failed (a stream reset after its headers) rejects its cancel: nothing to discard.
          await response.body?.cancel().catch(() => {});
          continue;
        }
        charge.refund();
        return withTenantHeaders(await answerFrom(outcome, () => {}, clientSignal), charge.headers);
      }
      // A gateway's 502 (a proxy in front of a replica it cannot reach) may have been served: passed on, but the
      // replica is marked down until a probe answers. Not a 504: a proxy's read timeout on a long generation says
      // slow, not down, and a fleet marked down refuses every request for a second. A replica's own 429 (a
      // rate-limiting proxy in front of it, TGI's full queue) is passed on as it came, not retried elsewhere (its
      // Retry-After is the replica's to give), and the slot released as "full": the router passes the replica over
      // until a probe reads its queue again, where its last report (fresh for up to 10 s) still showed room.
      // The replica's 429 did no work either: the tenant's charge is given back, as for a 503.
      if (response.status === 429) {
        charge.refund();
        return withTenantHeaders(
          await answerFrom(outcome, (failed) => release(failed || "full"), clientSignal),
          charge.headers,
        );
      }
      // A replica never sees the client's credentials (the edge strips them and sends the deployment's own key and
      // signature): its 401 is about the gateway's, not the client's. Passed on, the SDKs read it as a bad API key
      // (and do not retry), and nothing at the edge said why. 502 `upstream_unauthorized`, and a line for the operator.
      if (response.status === 401) {
        await response.body?.cancel().catch(() => {});
        release(false);
        charge.refund();
        console.error(
          JSON.stringify({ event: "spillway.upstream_unauthorized", deployment, replica: replicaLabel(replica) }),
        );
        return withTenantHeaders(
          openAIError(
            502,
            "the replica refused the gateway's credentials (the engines' signing secret, or the deployment's upstream API key)",
            "server_error",
            "upstream_unauthorized",
          ),
          charge.headers,
        );
      }
      const ended = response.status === 502 ? () => release(true) : release;
      return withTenantHeaders(
        await answerFrom(outcome, ended, clientSignal, charge.wantsUsage ? charge.settle : undefined),
        charge.headers,
      );
    }
  };
}
