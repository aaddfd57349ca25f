import { describe, expect, it } from "vitest";
import {
  type AcquireResult,
  type ProbeAnswer,
  RouterDriver,
  type RouterDriverIO,
} from "../../../src/core/router-driver";
import type { RouterOptions } from "../../../src/core/router-options";

const OPTIONS: RouterOptions = {
  replicas: ["a", "b"],
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

/** A driver whose probes stay out until the test answers them, on a clock that moves only when told. */
function setup() {
  let now = 0;
  const probes: { replica: string; answer: (queueLength: ProbeAnswer) => void }[] = [];
  const io: RouterDriverIO = {
    now: () => now,
    setTimer: () => () => {},
    defer: (run) => run(),
    probe: (replica, _deadlineMs, answer) => {
      probes.push({ replica, answer });
    },
  };
  const driver = new RouterDriver({ options: OPTIONS, random: () => 0 }, io);
  const answers = new Map<string, AcquireResult>();
  const acquire = (ticket: string) => driver.acquire(ticket, {}, (result) => answers.set(ticket, result));
  /** Answers the probes out, each with `load[replica]`. */
  const answerProbes = (load: Record<string, ProbeAnswer>) => {
    for (const { replica, answer } of probes.splice(0)) answer(load[replica]);
  };
  return { driver, answers, acquire, probes, answerProbes, advance: (ms: number) => (now += ms) };
}

describe("RouterDriver interleavings", () => {
  // A bug in src/core, reported, not fixed here (src/core is the evaluated policy): a probe's answer read before a
  // request failed on its replica revives the replica that the failure marked down. `markFull` keeps the newer
  // word for a 429 (`probedSince`); `invalidate` keeps none.
  it.fails("KNOWN BUG (core): a probe answer read before a request failed on its replica does not revive it", () => {
    const { driver, answers, acquire, probes, answerProbes } = setup();
    acquire("t0");
    answerProbes({ a: 0, b: 1 }); // b full: t0 goes to a
    expect(answers.get("t0")).toEqual({ kind: "admitted", replica: "a" });
    acquire("t1"); // both at the cap now: the round probes both
    expect(probes.map((p) => p.replica).sort()).toEqual(["a", "b"]);
    // While the probes are out, t0's forward to a fails (connection refused): a is marked down.
    driver.release("t0", true);
    expect(driver.core.stats().replicas.a).toMatchObject({ valid: false, unreachable: true });
    // a's answer was read just before it went down: it still says "empty".
    answerProbes({ a: 0, b: 1 });
    // Expected: the failure, newer than the reading, stands; t1 is not sent to the replica that just failed.
    expect(answers.get("t1")).not.toEqual({ kind: "admitted", replica: "a" });
  });
});
