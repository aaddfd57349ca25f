import { DurableObject } from "cloudflare:workers";
import type { Rejection, ReleaseOutcome, SubmitOptions } from "../core/router-core";
import { RouterDriver } from "../core/router-driver";
import { rejectionPoint, writeDecision } from "./analytics";
import { configFromEnv, routerOptionsFor } from "./config";
import type { Env } from "./env";
import { replicaLabel } from "./replica-label";
import { replicaProber } from "./replica-probe";
import { ReplicaProbeLog } from "./replica-probe-log";
import { edgeRouterIO } from "./router-io";
import {
  checkedAcquire,
  checkedReleaseAll,
  checkedReplicaFailed,
  checkedShard,
  checkedTicket,
  RouterMessageError,
} from "./router-messages";
import { type AcquireAnswer, routerName, type ShardStats } from "./router-protocol";
import type { CarriedSlots, HandedOffSlot, HandoffLeave, ReleasedSlot } from "./slot-batch";
import { upstreamApiKey } from "./upstream-credential";

const EARLY_CANCELS_MAX = 1024;

/**
 * The router of one deployment shard, a Durable Object around the shared {@link RouterDriver} (the same one the
 * simulator runs): it answers `acquire` with a replica slot or a refusal, probes replicas (`/load` or `/metrics`,
 * see replica-probe.ts), sleeps the placement backoff, and sheds requests that wait too long. Request and response bodies never pass through it.
 *
 * State lives in memory only: a restarted router starts cold (empty queue, no estimate) and falls back to the
 * static Retry-After until its estimator is warm again.
 *
 * Every call is checked where it arrives (src/edge/router-messages.ts): one that names another router (a
 * deployment or shard other than the one `routerName` gave this object, or a shard the deployment does not have),
 * or carries an option out of its range (a weight, priority or tenant name the tenant configuration would refuse,
 * a negative wait, ...), is refused with a `RouterMessageError` naming what is wrong, and changes nothing.
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
  private driver: RouterDriver | undefined;
  private identity = { deployment: "", shard: 0 };
  private logRejections = true;
  /** Cancels that arrived before the first acquire built the driver (a cancel names no deployment); bounded. */
  private earlyCancels: string[] = [];
  /** Set only by {@link setClockForTesting}: the router's time stands still at this value. */
  private frozenNowMs: number | undefined;
  /** Calls answered, for `stats` (what batching releases saves is read there). */
  private readonly calls = { acquire: 0, releaseCalls: 0, slotsReleased: 0, handedOff: 0 };
  /** The deployment's `slotHandoffMs`: how long an isolate may hand slots on after an answer; 0: never. */
  private slotHandoffMs = 0;

  /**
   * Asks for a replica slot. The reject path answers from memory at once (no I/O, nothing awaited); a queued
   * request resolves when a replica takes it, or when it is shed (queue timeout, fleet down). `ticket`
   * identifies the request for `release` and `cancel`; `options` carries the request's fingerprint (the key to a
   * promised retry), its client's horizon and `x-stainless-retry-count` (read only by `retry_schedule`).
   * `carried`: other requests' slots given back, and handed from one request to the next, by the same isolate
   * (see `SlotBatch`): taken into account before this request is placed. An admission carries the isolate's
   * leave to hand slots on (`handoffMs`) while nothing waits and the deployment allows it.
   */
  async acquire(
    deployment: string,
    shard: number,
    ticket: string,
    options: SubmitOptions = {},
    carried: CarriedSlots = { released: [], handedOff: [] },
  ): Promise<AcquireAnswer> {
    const call = checkedAcquire(shard, ticket, options, carried);
    const driver = this.driverFor(deployment, call.shard);
    this.calls.acquire += 1;
    const known = this.take(driver, call.carried.released, call.carried.handedOff);
    // Asked again with a ticket that holds a lease here: `acquireSlot` asks twice when its first call failed on
    // the way back, after this router placed it. Its lease is the answer; placing it again would count a second
    // request on a replica (the lease map keeps one), a slot lost until a probe reads the replica, for good on one
    // never probed.
    const leased = driver.core.leaseOf(call.ticket);
    if (leased !== undefined) return { kind: "admitted", replica: leased, ...(known ? this.leave(driver) : {}) };
    return new Promise<AcquireAnswer>((resolve) =>
      driver.acquire(call.ticket, call.options, (result) =>
        resolve(result.kind === "admitted" && known ? { ...result, ...this.leave(driver) } : result),
      ),
    );
  }

  /**
   * Ends a lease; `replicaFailed` `true` marks the replica down until a probe succeeds, `"full"` (it answered 429
   * itself) counts it full until a probe reads its queue (see `RouterCore.release`).
   */
  async release(ticket: string, replicaFailed: ReleaseOutcome = false): Promise<void> {
    const [checked, failed] = [checkedTicket(ticket), checkedReplicaFailed(replicaFailed)];
    this.calls.releaseCalls += 1;
    this.calls.slotsReleased += 1;
    this.driver?.release(checked, failed);
  }

  /**
   * Ends many leases at once, and hears of slots handed from one request to the next (an isolate's batch, see
   * `SlotBatch`); answers with the isolate's leave to go on handing slots on, if it has it.
   */
  async releaseAll(released: readonly ReleasedSlot[], handedOff: readonly HandedOffSlot[] = []): Promise<HandoffLeave> {
    const batch = checkedReleaseAll(released, handedOff);
    this.calls.releaseCalls += 1;
    if (!this.driver) return {};
    return this.take(this.driver, batch.released, batch.handedOff) ? this.leave(this.driver) : {};
  }

  /** The client went away: leave the queue or give back the slot. Safe to call for any ticket, any time. */
  async cancel(ticket: string): Promise<void> {
    const checked = checkedTicket(ticket);
    if (this.driver) this.driver.cancel(checked);
    else if (this.earlyCancels.push(checked) > EARLY_CANCELS_MAX) this.earlyCancels.shift();
  }

  /** Read-only state for the stats endpoint. */
  async stats(deployment: string, shard: number): Promise<ShardStats> {
    const driver = this.driverFor(deployment, checkedShard(shard));
    const stats = driver.stats();
    // Keyed by the replicas' display forms: the stats go to /spillway/stats, /metrics and the dashboard, and a
    // credential in a replica's URL must not (parseConfig refuses two replicas that would show as one).
    const replicas = Object.fromEntries(
      Object.entries(stats.replicas).map(([url, entry]) => [replicaLabel(url), entry]),
    );
    const internal = {
      waiters: driver.waiters,
      recentlyCancelled: driver.recentlyCancelledCount,
      pendingObservations: stats.pendingObservations,
    };
    return { ...stats, replicas, ...this.identity, internal, calls: { ...this.calls } };
  }

  /**
   * Test seam: stops this router's clock at `nowMs` (a later call moves it on; `null` gives it back real time),
   * so that a test decides which drains fall into which of the estimator's intervals instead of the machine's
   * speed deciding it. Set it before the router's first request: the estimator starts its first interval then.
   * Refused unless the Worker has the binding `SPILLWAY_TEST_HOOKS = "1"` (the workerd tests set it).
   *
   * @example
   * ```ts
   * await env.DEPLOYMENT_ROUTER.getByName(routerName("llama", 0)).setClockForTesting(0);
   * ```
   */
  async setClockForTesting(nowMs: number | null): Promise<void> {
    if (this.env.SPILLWAY_TEST_HOOKS !== "1") throw new Error("setClockForTesting needs SPILLWAY_TEST_HOOKS=1");
    this.frozenNowMs = nowMs ?? undefined;
  }

  /**
   * Hand-offs first: a slot handed on and then released in the same batch was handed on before it ended.
   * Returns false when a hand-off named a ticket this router does not hold (it restarted since): that isolate
   * gets no leave in this answer, so it stops handing on slots the router no longer counts.
   */
  private take(driver: RouterDriver, released: readonly ReleasedSlot[], handedOff: readonly HandedOffSlot[]): boolean {
    let known = true;
    for (const [ticket, tenant, weight, priority, fingerprint] of handedOff) {
      if (driver.handOff(ticket, { tenant, weight, priority, fingerprint })) this.calls.handedOff += 1;
      else known = false;
    }
    this.calls.slotsReleased += released.length;
    for (const [ticket, replicaFailed] of released) driver.release(ticket, replicaFailed);
    return known;
  }

  /** The isolate's leave to hand slots on: only while nothing waits here (see `RouterCore.handoffAllowed`). */
  private leave(driver: RouterDriver): HandoffLeave {
    return this.slotHandoffMs > 0 && driver.core.handoffAllowed() ? { handoffMs: this.slotHandoffMs } : {};
  }

  /**
   * This router's driver, built by the first call. Every call names the router it means (deployment and shard);
   * one that names another - a shard the deployment does not have, or not the one this object is (its name is
   * `routerName(deployment, shard)`) - is refused, never served by the wrong queue.
   */
  private driverFor(deployment: string, shard: number): RouterDriver {
    if (this.driver) {
      const { deployment: own, shard: ownShard } = this.identity;
      if (deployment !== own || shard !== ownShard)
        throw new RouterMessageError(
          `router ${routerName(own, ownShard)} was called as ${routerName(deployment, shard)}`,
        );
      return this.driver;
    }
    const config = configFromEnv(this.env.SPILLWAY_CONFIG);
    const deploymentConfig = Object.hasOwn(config.deployments, deployment) ? config.deployments[deployment] : undefined;
    if (!deploymentConfig) throw new RouterMessageError(`unknown deployment ${deployment}`);
    if (shard >= deploymentConfig.routerShards)
      throw new RouterMessageError(
        `deployment ${deployment} has ${deploymentConfig.routerShards} router shard(s), 0 to ${deploymentConfig.routerShards - 1}: no shard ${shard}`,
      );
    // Where the runtime knows this object's name (`getByName`), the call must name this object.
    const name = this.ctx.id.name;
    if (name !== undefined && name !== routerName(deployment, shard))
      throw new RouterMessageError(`router ${name} was called as ${routerName(deployment, shard)}`);
    this.identity = { deployment, shard };
    this.logRejections = config.logRejections;
    this.slotHandoffMs = deploymentConfig.slotHandoffMs;
    const now = () => this.frozenNowMs ?? Date.now();
    // One line when a replica's probes start failing (and why), one when it answers again: never one per probe.
    const probeLog = new ReplicaProbeLog(this.identity, now);
    const probe = replicaProber(
      deploymentConfig.replicas,
      {
        signingSecret: this.env.SPILLWAY_SIGNING_SECRET,
        upstreamApiKey: upstreamApiKey(this.env, deploymentConfig, false),
      },
      (target, result) => probeLog.observe(target, result),
    );
    const io = edgeRouterIO({
      now,
      probe,
      onRejection: (rejection) => this.recordRejection(rejection),
      onAdmission: (replica, queueDepth, tenant) =>
        writeDecision(this.env.SPILLWAY_METRICS, {
          ...this.identity,
          outcome: "admitted",
          replica,
          queueDepth,
          drainRate: null,
          status: 200,
          ...(tenant ? { tenant } : {}),
        }),
    });
    const driver = new RouterDriver({ options: routerOptionsFor(deploymentConfig), random: Math.random }, io);
    for (const ticket of this.earlyCancels) driver.cancel(ticket);
    this.earlyCancels = [];
    this.driver = driver;
    return driver;
  }

  private recordRejection(rejection: Rejection): void {
    if (this.logRejections) console.log(JSON.stringify({ ...rejection.record, ...this.identity }));
    writeDecision(this.env.SPILLWAY_METRICS, rejectionPoint(rejection, this.identity.deployment, this.identity.shard));
  }
}
