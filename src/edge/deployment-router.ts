import { DurableObject } from "cloudflare:workers";
import type { Rejection, SubmitOptions } from "../core/router-core";
import { RouterCore } from "../core/router-core";
import { rejectionPoint, writeDecision } from "./analytics";
import { configFromEnv, routerOptionsFor } from "./config";
import type { Env } from "./env";
import { replicaUrl } from "./replica-url";
import type { AcquireResult, ShardStats } from "./router-protocol";
import { signedGet } from "./signed-get";

const RECENTLY_CANCELLED_MAX = 1024;

function rejected(rejection: Rejection): AcquireResult {
  const { decision } = rejection;
  return {
    kind: "rejected",
    status: rejection.statusCode,
    reason: rejection.reason,
    message: rejection.message,
    ...(decision.retryAfterS !== undefined ? { retryAfterS: decision.retryAfterS } : {}),
    ...(decision.retryAfterMs !== undefined ? { retryAfterMs: decision.retryAfterMs } : {}),
  };
}

const CANCELLED: AcquireResult = {
  kind: "rejected",
  status: 499,
  reason: "cancelled",
  message: "client closed the request",
};

/**
 * The router of one deployment shard, a Durable Object driving the pure `RouterCore`: it answers `acquire`
 * with a replica slot or a refusal, probes replicas' `/load`, sleeps the placement backoff, and sheds
 * requests that wait too long. Request and response bodies never pass through it.
 *
 * State lives in memory only: a restarted router starts cold (empty queue, no estimate) and falls back to the
 * static Retry-After until its estimator is warm again.
 *
 * @example
 * ```ts
 * const router = env.DEPLOYMENT_ROUTER.getByName(routerName("llama", 0));
 * const ticket = crypto.randomUUID();
 * const result = await router.acquire("llama", 0, ticket);
 * if (result.kind === "admitted") {
 *   // forward to result.replica, then:
 *   await router.release(ticket, false);
 * }
 * ```
 */
export class DeploymentRouter extends DurableObject<Env> {
  private core: RouterCore | undefined;
  private identity = { deployment: "", shard: 0 };
  private logRejections = true;
  private readonly waiting = new Map<string, (result: AcquireResult) => void>();
  private readonly recentlyCancelled = new Set<string>();
  private placing = false;
  private wakeBackoff: (() => void) | undefined;
  private expiryTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Asks for a replica slot. The reject path answers from memory at once (no I/O, nothing awaited); a queued
   * request resolves when a replica takes it, or when it is shed (queue timeout, fleet down). `ticket`
   * identifies the request for `release` and `cancel`; `options` carries the request's fingerprint (the key to a
   * promised retry), its client's horizon and `x-stainless-retry-count` (read only by `retry_schedule`).
   */
  async acquire(
    deployment: string,
    shard: number,
    ticket: string,
    options: SubmitOptions = {},
  ): Promise<AcquireResult> {
    const core = this.coreFor(deployment, shard);
    if (this.recentlyCancelled.delete(ticket)) return CANCELLED;
    const submitted = core.submit(ticket, options);
    if (submitted.kind === "rejected") return this.refuse(submitted.rejection);
    const result = new Promise<AcquireResult>((resolve) => this.waiting.set(ticket, resolve));
    this.startPlacing();
    this.armExpiry();
    return result;
  }

  /** Ends a lease; `replicaFailed` marks the replica down until a probe succeeds. */
  async release(ticket: string, replicaFailed = false): Promise<void> {
    if (this.core?.release(ticket, replicaFailed)) this.wakeBackoff?.();
  }

  /** The client went away: leave the queue or give back the slot. Safe to call for any ticket, any time. */
  async cancel(ticket: string): Promise<void> {
    const outcome = this.core?.cancel(ticket) ?? "unknown";
    if (outcome === "dequeued") {
      this.settle(ticket, CANCELLED);
    } else if (outcome === "released") {
      this.wakeBackoff?.();
    } else {
      // The cancel overtook its acquire: remember it so the acquire is refused when it arrives.
      this.recentlyCancelled.add(ticket);
      if (this.recentlyCancelled.size > RECENTLY_CANCELLED_MAX) {
        this.recentlyCancelled.delete(this.recentlyCancelled.values().next().value as string);
      }
    }
  }

  /** Read-only state for the stats endpoint. */
  async stats(deployment: string, shard: number): Promise<ShardStats> {
    const core = this.coreFor(deployment, shard);
    const stats = core.stats();
    const internal = {
      waiters: this.waiting.size,
      recentlyCancelled: this.recentlyCancelled.size,
      pendingObservations: stats.pendingObservations,
    };
    return { ...stats, ...this.identity, internal };
  }

  private coreFor(deployment: string, shard: number): RouterCore {
    if (this.core) return this.core;
    const config = configFromEnv(this.env.SPILLWAY_CONFIG);
    const deploymentConfig = Object.hasOwn(config.deployments, deployment) ? config.deployments[deployment] : undefined;
    if (!deploymentConfig) throw new Error(`unknown deployment ${deployment}`);
    this.identity = { deployment, shard };
    this.logRejections = config.logRejections;
    this.core = new RouterCore(routerOptionsFor(deploymentConfig), Date, Math.random);
    return this.core;
  }

  private refuse(rejection: Rejection): AcquireResult {
    if (this.logRejections) console.log(JSON.stringify({ ...rejection.record, ...this.identity }));
    writeDecision(this.env.SPILLWAY_METRICS, rejectionPoint(rejection, this.identity.deployment, this.identity.shard));
    return rejected(rejection);
  }

  private settle(ticket: string, result: AcquireResult): boolean {
    const resolve = this.waiting.get(ticket);
    if (!resolve) return false;
    this.waiting.delete(ticket);
    resolve(result);
    return true;
  }

  /** One placement loop at a time; it runs while anything is queued. */
  private startPlacing(): void {
    if (this.placing) return;
    this.placing = true;
    void this.placeQueued().finally(() => {
      this.placing = false;
    });
  }

  private async placeQueued(): Promise<void> {
    const core = this.core as RouterCore;
    for (let plan = core.beginRound(); plan; plan = core.beginRound()) {
      if (plan.probe.length > 0) {
        const deadline = plan.probeDeadlineMs;
        const secret = this.env.SPILLWAY_SIGNING_SECRET;
        await Promise.all(
          plan.probe.map(async (replica) => core.reportProbe(replica, await probe(replica, deadline, secret))),
        );
      }
      const outcome = core.finishRound(plan);
      if (outcome.kind === "placed") {
        writeDecision(this.env.SPILLWAY_METRICS, {
          ...this.identity,
          outcome: "admitted",
          replica: outcome.replica,
          queueDepth: core.queueDepth,
          drainRate: null,
          status: 200,
        });
        // The waiter may have gone between the round's start and now; give its slot back.
        if (!this.settle(outcome.ticket, { kind: "admitted", replica: outcome.replica })) core.release(outcome.ticket);
      } else if (outcome.kind === "backoff") {
        for (const { ticket, rejection } of outcome.shed) this.settle(ticket, this.refuse(rejection));
        await this.backoff(outcome.delayMs);
      }
    }
  }

  /** Sleeps the placement backoff; a released slot ends it early (a replica has room now). */
  private backoff(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, delayMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeBackoff = () => {
        this.wakeBackoff = undefined;
        done();
      };
    });
  }

  /** Sheds requests past the queue timeout and reclaims abandoned leases, on a timer while any exist. */
  private armExpiry(): void {
    const next = this.core?.nextExpiryMs();
    if (next === undefined || this.expiryTimer !== undefined) return;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = undefined;
        const { timedOut, reclaimed } = (this.core as RouterCore).expire();
        for (const { ticket, rejection } of timedOut) this.settle(ticket, this.refuse(rejection));
        if (reclaimed.length > 0) this.wakeBackoff?.();
        this.armExpiry();
      },
      Math.max(0, next - Date.now()) + 5,
    );
  }
}

/**
 * Asks a replica for its queue length (`GET /load`) within `deadlineMs`, signed when a secret is set (engines
 * may restrict `/load`). A missed deadline reads as `"timeout"` (slow), any other failure as `undefined`.
 */
async function probe(
  replica: string,
  deadlineMs: number,
  secret: string | undefined,
): Promise<number | undefined | "timeout"> {
  const deadline = AbortSignal.timeout(deadlineMs);
  try {
    const res = await signedGet(replicaUrl(replica, "/load"), secret, deadline);
    if (!res.ok) return undefined;
    const load = (await res.json()) as { queueLength?: unknown };
    return typeof load.queueLength === "number" ? load.queueLength : undefined;
  } catch {
    return deadline.aborted ? "timeout" : undefined;
  }
}
