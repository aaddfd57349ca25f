import { RouterCore } from "../../src/core/router-core";
import type { BookingAdmission } from "../../src/core/router-options";
import { routerOptions } from "./router-options";

/**
 * A `booked_capacity` router over a queue that stands, on a clock the test moves: each `run(seconds)` half-second
 * places one request (two drains a second) and offers five new ones (each its own fingerprint `s<n>`), so a delay
 * target refuses fresh arrivals beyond a couple waiting. `placed` lists the tickets placed, `kinds` what each new
 * arrival got (the n-th is `s<n>`'s); `advance(ms)` moves the clock alone, for a test that offers its own.
 *
 * @example
 * ```ts
 * const { core, run } = standingQueueRouter({ queueDelayTargetS: 1, standingIntervalS: 10, maxHeldRoomShare: 0 });
 * run(30); // the queue stands: fresh arrivals are refused
 * core.submit("r", { fingerprint: "r" }).kind; // "rejected"
 * ```
 */
export function standingQueueRouter(
  booking: BookingAdmission,
  queue: { maxQueuedRequests?: number; queueTimeoutMs?: number } = {},
) {
  let now = 0;
  const core = new RouterCore(
    routerOptions(
      { maxQueuedRequests: queue.maxQueuedRequests ?? 100, queueTimeoutMs: queue.queueTimeoutMs ?? 600_000, booking },
      { retryAfterPolicy: "booked_capacity", retryAfterS: undefined },
    ),
    { now: () => now },
    () => 0.5,
  );
  const placed: string[] = [];
  const kinds: string[] = [];
  const placeOne = () => {
    const plan = core.beginRound();
    if (plan) for (const r of plan.probe) core.reportProbe(r, 0);
    const outcome = plan ? core.finishRound(plan) : undefined;
    if (outcome?.kind !== "placed") return false;
    placed.push(outcome.ticket);
    core.release(outcome.ticket);
    return true;
  };
  let n = 0;
  const run = (seconds: number) => {
    for (let i = 0; i < seconds * 2; i++) {
      now += 500;
      placeOne();
      for (let k = 0; k < 5; k++) kinds.push(core.submit(`s${n}`, { fingerprint: `s${n++}` }).kind);
    }
  };
  const advance = (ms: number) => {
    now += ms;
  };
  return { core, run, advance, placeOne, placed, kinds };
}
