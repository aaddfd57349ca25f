import { afterEach, describe, expect, it, vi } from "vitest";
import { type AcquireResult, RouterDriver, type RouterDriverIO } from "../../../src/core/router-driver";
import type { RouterOptions } from "../../../src/core/router-options";
import { edgeRouterIO } from "../../../src/edge/router-io";
import { EventLoop } from "../../../src/sim/event-loop";
import { randomStream } from "../../../src/sim/random-streams";
import { simRouterIO } from "../../../src/sim/sim-router";

/**
 * The Durable Object and the simulator must make the same decisions: the same scripted acquires, releases,
 * cancels, restarts, replica loads and clock steps go through the driver once over the Durable Object's I/O
 * (`edgeRouterIO`: Date, setTimeout, microtasks and promise-based probes, here under vitest's fake timers) and
 * once over the simulator's (`simRouterIO`: the event loop), and both traces must be equal.
 */

const PROBE_MS = 3;
const REPLICAS = ["r0", "r1", "r2"];

const OPTIONS: RouterOptions = {
  replicas: REPLICAS,
  maxOngoingRequests: 2,
  maxQueuedRequests: 4,
  queueTimeoutMs: 1_500,
  leaseTimeoutMs: 6_000,
  statusCode: 429,
  retryAfter: {
    retryAfterPolicy: "router_queue_drain_rate",
    retryAfterS: 5,
    jitter: 0.2,
    saturation: { backoffStreakSaturation: 5, occupancyWeight: 0.25, backoffWeight: 0.25 },
  },
  drainRate: { alpha: 0.3, intervalS: 0.5, warmupSamples: 2 },
};

type Action =
  | { kind: "acquire"; ticket: string; retry: boolean }
  | { kind: "release"; ticket: string; failed: boolean }
  | { kind: "cancel"; ticket: string }
  | { kind: "load"; replica: string; queueLength: number | undefined }
  | { kind: "restart" };

interface Step {
  atMs: number;
  action: Action;
}

/** A seeded script: bursts of arrivals, releases of earlier tickets, cancels (some before their acquire), loads. */
function script(seed: number, length: number): Step[] {
  const random = randomStream(seed, "script");
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const steps: Step[] = [];
  let now = 0;
  let next = 0;
  for (let i = 0; i < length; i++) {
    // Often the same instant, otherwise a step of up to 400 ms (some of them land on timers' instants).
    now += random() < 0.3 ? 0 : Math.floor(random() * 400);
    const u = random();
    let action: Action;
    if (u < 0.4 || next === 0) {
      action = { kind: "acquire", ticket: `t${next++}`, retry: random() < 0.3 };
    } else if (u < 0.65) {
      action = { kind: "release", ticket: `t${Math.floor(random() * next)}`, failed: random() < 0.1 };
    } else if (u < 0.75) {
      // A cancel for a ticket not acquired yet overtakes its acquire (which the script sends a little later).
      const ahead = random() < 0.3;
      const ticket = ahead ? `t${next}` : `t${Math.floor(random() * next)}`;
      action = { kind: "cancel", ticket };
    } else if (u < 0.98) {
      const down = random() < 0.15;
      action = { kind: "load", replica: pick(REPLICAS), queueLength: down ? undefined : Math.floor(random() * 4) };
    } else {
      action = { kind: "restart" };
    }
    steps.push({ atMs: now, action });
  }
  return steps;
}

/** Runs one step against a driver and a load table, logging every answer and probe with its time. */
function perform(
  driver: RouterDriver,
  load: Map<string, number | undefined>,
  action: Action,
  log: (entry: string) => void,
  now: () => number,
) {
  switch (action.kind) {
    case "acquire":
      driver.acquire(action.ticket, { retry: action.retry }, (result: AcquireResult) =>
        log(`${now()} ${action.ticket} ${JSON.stringify(result)}`),
      );
      break;
    case "release":
      driver.release(action.ticket, action.failed);
      break;
    case "cancel":
      driver.cancel(action.ticket);
      break;
    case "load":
      load.set(action.replica, action.queueLength);
      break;
    case "restart":
      driver.restart();
      break;
  }
}

const TAIL_MS = 20_000;

function initialLoad(): Map<string, number | undefined> {
  return new Map(REPLICAS.map((r) => [r, 0]));
}

/** The simulator's run: the event loop runs everything due up to each step's instant, then the step. */
function simulatorTrace(steps: readonly Step[], seed: number): string[] {
  const loop = new EventLoop();
  const load = initialLoad();
  const log: string[] = [];
  const io = simRouterIO(loop, { queueLength: (r) => load.get(r) }, { probeMs: PROBE_MS });
  const observed = observe(io, log, () => loop.now());
  const driver = new RouterDriver({ options: OPTIONS, random: randomStream(seed, "router") }, observed);
  for (const step of steps) {
    loop.run(step.atMs);
    perform(
      driver,
      load,
      step.action,
      (e) => log.push(e),
      () => loop.now(),
    );
  }
  loop.run((steps.at(-1)?.atMs ?? 0) + TAIL_MS);
  return log;
}

/** The Durable Object's run: fake timers advance to each step's instant (timers and microtasks due run), then the step. */
async function edgeTrace(steps: readonly Step[], seed: number): Promise<string[]> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: 0 });
  const load = initialLoad();
  const log: string[] = [];
  const io = edgeRouterIO({
    probe: (replica) => new Promise((resolve) => setTimeout(() => resolve(load.get(replica)), PROBE_MS)),
  });
  const observed = observe(io, log, () => Date.now());
  const driver = new RouterDriver({ options: OPTIONS, random: randomStream(seed, "router") }, observed);
  for (const step of steps) {
    await vi.advanceTimersByTimeAsync(step.atMs - Date.now());
    perform(
      driver,
      load,
      step.action,
      (e) => log.push(e),
      () => Date.now(),
    );
  }
  await vi.advanceTimersByTimeAsync(TAIL_MS);
  return log;
}

/** Wraps an I/O so that probes, rejections and admissions are logged too (the decisions besides the answers). */
function observe(io: RouterDriverIO, log: string[], now: () => number): RouterDriverIO {
  return {
    ...io,
    probe(replica, deadlineMs, answer) {
      log.push(`${now()} probe ${replica} within ${deadlineMs}`);
      io.probe(replica, deadlineMs, answer);
    },
    onRejection: (rejection) => log.push(`${now()} rejection ${JSON.stringify(rejection.record)}`),
    onAdmission: (replica, queueDepth) => log.push(`${now()} admission ${replica} depth ${queueDepth}`),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("RouterDriver: the Durable Object's I/O and the simulator's make the same decisions", () => {
  const seeds = [1, 2, 3, 4, 5, 6, 7, 8];

  it.each(seeds)("seed %i: identical traces", async (seed) => {
    const steps = script(seed, 300);
    const sim = simulatorTrace(steps, seed);
    const edge = await edgeTrace(steps, seed);
    expect(edge).toEqual(sim);
  });

  it("the scripts reach every kind of decision (so the comparison covers them)", () => {
    const all = seeds.flatMap((seed) => simulatorTrace(script(seed, 300), seed)).join("\n");
    for (const needle of [
      '"kind":"admitted"',
      '"reason":"queue_full"',
      '"reason":"queue_timeout"',
      '"reason":"no_replica_available"',
      '"reason":"cancelled"',
      '"reason":"router_restart"',
      '"rung":"computed"',
      '"rung":"static_fallback"',
      "within 200", // a probe after a failed round: the deadline doubles with the backoff streak
    ]) {
      expect(all, `no trace contains ${needle}`).toContain(needle);
    }
  });
});
