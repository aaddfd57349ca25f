import { RouterDriver, type RouterDriverDeps, type RouterDriverIO } from "../core/router-driver";
import type { EventLoop } from "./event-loop";

/** What the router needs from the fleet: a probe answer (`GET /load`), read when the probe completes. */
export interface SimFleetView {
  queueLength(replica: string): number | undefined;
}

/** Network delays the router sees, ms. */
export interface SimRouterTiming {
  probeMs: number;
}

/**
 * The simulator's I/O for {@link RouterDriver}: the event loop's clock, timers as events (a cancelled one
 * stays in the loop and does nothing), deferred work as a 0 ms event (the Durable Object uses a microtask: both
 * run after the current step and before anything later), and a probe that answers after `probeMs` with the
 * replica's queue length at that moment. Synchronous in virtual time, hence deterministic.
 *
 * @example
 * ```ts
 * const io = simRouterIO(loop, { queueLength: (r) => fleet.get(r)?.queueLength }, { probeMs: 2 });
 * ```
 */
export function simRouterIO(loop: EventLoop, fleet: SimFleetView, timing: SimRouterTiming): RouterDriverIO {
  return {
    now: () => loop.now(),
    setTimer(delayMs, fire) {
      let cancelled = false;
      loop.after(delayMs, () => {
        if (!cancelled) fire();
      });
      return () => {
        cancelled = true;
      };
    },
    defer: (run) => loop.after(0, run),
    probe(replica, _deadlineMs, answer) {
      loop.after(timing.probeMs, () => answer(fleet.queueLength(replica)));
    },
  };
}

/**
 * One router shard in virtual time: the Durable Object's own {@link RouterDriver} over {@link simRouterIO}.
 * `restart()` models a Durable Object restart (queued requests fail with 500, the core starts cold).
 *
 * @example
 * ```ts
 * const router = createSimRouter(loop, { options, random }, fleet, { probeMs: 2 });
 * router.acquire("t1", {}, (result) => console.log(result.kind));              // a first attempt
 * router.acquire("t1.1", { retry: true }, (result) => console.log(result.kind)); // a retry (x-stainless-retry-count: 1)
 * ```
 */
export function createSimRouter(
  loop: EventLoop,
  deps: RouterDriverDeps,
  fleet: SimFleetView,
  timing: SimRouterTiming,
): RouterDriver {
  return new RouterDriver(deps, simRouterIO(loop, fleet, timing));
}
