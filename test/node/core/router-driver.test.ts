import { describe, expect, it } from "vitest";
import { type AcquireResult, RouterDriver } from "../../../src/core/router-driver";
import type { RouterOptions } from "../../../src/core/router-options";
import { EventLoop } from "../../../src/sim/event-loop";
import { simRouterIO } from "../../../src/sim/sim-router";

const OPTIONS: RouterOptions = {
  replicas: ["a"],
  maxOngoingRequests: 1,
  maxQueuedRequests: 5,
  queueTimeoutMs: 10_000,
  leaseTimeoutMs: 60_000,
  statusCode: 429,
  retryAfter: {
    retryAfterPolicy: "static",
    retryAfterS: 5,
    jitter: 0,
    saturation: { backoffStreakSaturation: 5, occupancyWeight: 0.25, backoffWeight: 0.25 },
  },
  drainRate: { alpha: 0.3, intervalS: 1, warmupSamples: 3 },
};

/** A driver over the event loop, one replica whose `/load` answers `load.a` after 2 ms. */
function setup() {
  const loop = new EventLoop();
  const load: Record<string, number | undefined> = { a: 0 };
  const driver = new RouterDriver(
    { options: OPTIONS, random: () => 0.5 },
    simRouterIO(loop, { queueLength: (r) => load[r] }, { probeMs: 2 }),
  );
  const answers = new Map<string, { atMs: number; result: AcquireResult }>();
  const acquire = (ticket: string) =>
    driver.acquire(ticket, {}, (result) => answers.set(ticket, { atMs: loop.now(), result }));
  return { loop, load, driver, answers, acquire };
}

describe("RouterDriver", () => {
  it("refuses an acquire whose cancel arrived first (499), once", () => {
    const { loop, driver, answers, acquire } = setup();
    driver.cancel("t1");
    acquire("t1");
    expect(answers.get("t1")?.result).toMatchObject({ kind: "rejected", status: 499, reason: "cancelled" });
    expect(driver.recentlyCancelledCount).toBe(0);
    acquire("t2");
    loop.run(10);
    expect(answers.get("t2")?.result).toEqual({ kind: "admitted", replica: "a" });
  });

  it("remembers at most 1024 early cancels, forgetting the oldest", () => {
    const { driver, answers, acquire } = setup();
    for (let i = 0; i <= 1024; i++) driver.cancel(`early-${i}`);
    expect(driver.recentlyCancelledCount).toBe(1024);
    acquire("early-0");
    expect(answers.get("early-0")?.result.kind).not.toBe("rejected");
    acquire("early-1024");
    expect(answers.get("early-1024")?.result).toMatchObject({ status: 499 });
  });

  it("a release ends the backoff sleep early: the next request is placed at the release's instant", () => {
    const { loop, load, driver, answers, acquire } = setup();
    acquire("t1");
    loop.run(2); // probe answered: placed at 2 ms
    load.a = 1;
    acquire("t2"); // the replica is full: probe (4 ms), backoff 25 ms, probe (31 ms), backoff 50 ms until 81 ms
    loop.run(40);
    expect(answers.has("t2")).toBe(false);
    load.a = 0;
    driver.release("t1");
    loop.run(40); // the wake-up runs after the current step, still at 40 ms (the freed slot needs no probe)
    expect(answers.get("t2")).toEqual({ atMs: 40, result: { kind: "admitted", replica: "a" } });
  });

  it("sheds a request past the queue timeout, 5 ms after its deadline", () => {
    const { loop, load, answers, acquire } = setup();
    load.a = 1;
    acquire("t1");
    loop.run(20_000);
    expect(answers.get("t1")).toMatchObject({ atMs: 10_005, result: { status: 429, reason: "queue_timeout" } });
  });

  it("sheds a queued request on time while an admitted one's lease is pending (the lease's later deadline does not hold the timer)", () => {
    const { loop, load, answers, acquire } = setup();
    acquire("t1");
    loop.run(2); // placed at 2 ms; its lease expires at 60 s
    expect(answers.get("t1")?.result).toEqual({ kind: "admitted", replica: "a" });
    loop.run(12_000); // by now the expiry timer waits for the lease alone (nothing has been queued since t1)
    load.a = 1;
    acquire("t2"); // queued at 12 s behind the full replica: its queue timeout is at 22 s, before the lease's
    loop.run(30_000);
    expect(answers.get("t2")).toMatchObject({ atMs: 22_005, result: { status: 429, reason: "queue_timeout" } });
  });

  it("a restart fails waiting requests with 500 and starts cold; old answers are ignored", () => {
    const { loop, load, driver, answers, acquire } = setup();
    load.a = 1;
    acquire("t1");
    loop.run(1);
    driver.restart();
    expect(answers.get("t1")?.result).toMatchObject({ status: 500, reason: "router_restart" });
    expect(driver.stats()).toMatchObject({ queueDepth: 0, admitted: 0, activeLeases: 0 });
    load.a = 0;
    acquire("t2");
    loop.run(100);
    expect(answers.get("t2")?.result).toEqual({ kind: "admitted", replica: "a" });
    expect(driver.stats().admitted).toBe(1);
  });
});
