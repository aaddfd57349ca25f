import type { Rejection } from "../core/router-core";
import type { ProbeAnswer, RouterDriverIO } from "../core/router-driver";

/** What the Durable Object plugs into its router driver besides the runtime's clock and timers. */
export interface EdgeRouterIODeps {
  /** The router's clock; `Date.now()` unless a test stops it (`DeploymentRouter.setClockForTesting`). */
  now?: () => number;
  /** Asks a replica for its queue length within `deadlineMs` (in the Durable Object: `replicaProber`, `GET /load` or `/metrics`). */
  probe(replica: string, deadlineMs: number): Promise<ProbeAnswer>;
  /** Sees every refusal (the Durable Object logs it and writes an analytics point). */
  onRejection?(rejection: Rejection): void;
  /** Sees every placement (the Durable Object writes an analytics point). */
  onAdmission?(replica: string, queueDepth: number, tenant?: string): void;
}

/**
 * The Durable Object's I/O for {@link RouterDriver}: `Date.now()`, `setTimeout`, microtasks, and probes that
 * run concurrently (each answers when its promise settles; a rejected promise reads as a failed probe). Kept free
 * of `cloudflare:workers` so the same adapter runs in Node under fake timers (the driver's trace test).
 *
 * @example
 * ```ts
 * const io = edgeRouterIO({ probe: replicaProber(deployment.replicas, { signingSecret }) });
 * const driver = new RouterDriver({ options, random: Math.random }, io);
 * ```
 */
export function edgeRouterIO(deps: EdgeRouterIODeps): RouterDriverIO {
  return {
    now: deps.now ?? (() => Date.now()),
    setTimer(delayMs, fire) {
      const timer = setTimeout(fire, delayMs);
      return () => clearTimeout(timer);
    },
    defer: (run) => queueMicrotask(run),
    probe(replica, deadlineMs, answer) {
      deps.probe(replica, deadlineMs).then(answer, () => answer(undefined));
    },
    onRejection: (rejection) => deps.onRejection?.(rejection),
    onAdmission: (replica, queueDepth, tenant) => deps.onAdmission?.(replica, queueDepth, tenant),
  };
}
