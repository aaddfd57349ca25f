import { describe, expect, it } from "vitest";
import {
  type AcquireResult,
  type ProbeAnswer,
  RouterDriver,
  type RouterDriverIO,
} from "../../../src/core/router-driver";
import { DEFAULT_BOOKING_ADMISSION, type RouterOptions } from "../../../src/core/router-options";
import { routerOptions } from "../../support/router-options";

/** Two one-slot replicas, a 5-deep queue, a static 5 s hint without jitter. */
const OPTIONS: RouterOptions = routerOptions(
  { replicas: ["a", "b"], maxQueuedRequests: 5, queueTimeoutMs: 10_000, leaseTimeoutMs: 60_000 },
  { retryAfterPolicy: "static", retryAfterS: 5, jitter: 0 },
);

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
  // A probe's answer read before a request failed on its replica revived the replica that the failure marked down
  // (found by helper-75): `markFull` kept the newer word for a 429 (`probedSince`), `invalidate` kept none. Now the
  // cache drops the report of a probe that was out when its replica failed (`failedWhileProbing`).
  it("a probe answer read before a request failed on its replica does not revive it", () => {
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

  // The driver re-armed its expiry timer only when a request was queued (and when the timer fired) (found by
  // helper-75). With `booking.standingTimeoutS`, a queue that starts to stand shortens every waiting request's
  // deadline, but it starts to stand on an arrival that is then refused (the target binds), and while it stands
  // arrivals are refused: the timer stayed armed for the queue's own timeout (600 s here), and requests waited far
  // past the standing timeout (nothing shed by 25 s although the core's next expiry was 9 s). A refusal re-arms it now.
  it("with standingTimeoutS, a queue that starts to stand sheds its old requests on time", () => {
    let now = 0;
    const timers: { due: number; fire: () => void; live: boolean }[] = [];
    const deferred: (() => void)[] = [];
    let inflight = 0;
    const io: RouterDriverIO = {
      now: () => now,
      setTimer: (delayMs, fire) => {
        const timer = { due: now + delayMs, fire, live: true };
        timers.push(timer);
        return () => {
          timer.live = false;
        };
      },
      defer: (run) => deferred.push(run),
      probe: (_replica, _deadlineMs, answer) => deferred.push(() => answer(inflight)),
    };
    const options = routerOptions(
      {
        maxQueuedRequests: 100,
        queueTimeoutMs: 600_000,
        booking: { ...DEFAULT_BOOKING_ADMISSION, demoteAfterS: undefined, standingIntervalS: 10, standingTimeoutS: 5 },
      },
      { retryAfterPolicy: "booked_capacity", retryAfterS: undefined },
    );
    const driver = new RouterDriver({ options, random: () => 0.5 }, io);
    const shed: string[] = [];
    const leased: string[] = [];
    const settle = () => {
      while (deferred.length > 0) (deferred.shift() as () => void)();
    };
    const advanceTo = (t: number) => {
      for (;;) {
        const next = timers.filter((x) => x.live && x.due <= t).sort((x, y) => x.due - y.due)[0];
        if (!next) break;
        now = Math.max(now, next.due);
        next.live = false;
        next.fire();
        settle();
      }
      now = t;
    };
    let n = 0;
    // Every half second: one request ends (two drains a second) and five arrive, as in standingQueueRouter.
    for (let step = 1; step <= 36; step++) {
      advanceTo(step * 500);
      const done = leased.shift();
      if (done !== undefined) {
        inflight -= 1;
        driver.release(done);
      }
      settle();
      for (let k = 0; k < 5; k++) {
        const ticket = `s${n++}`;
        driver.acquire(ticket, { fingerprint: ticket }, (result) => {
          if (result.kind === "admitted") {
            inflight += 1;
            leased.push(ticket);
          } else if (result.reason === "queue_timeout") shed.push(ticket);
        });
      }
      settle();
    }
    // 18 s: the queue stands (its requests queued at 13 s and before are past the standing timeout). Time goes on.
    advanceTo(25_000);
    // Nothing the core would shed is left waiting: no expiry due before now.
    expect(driver.core.nextExpiryMs() ?? Number.POSITIVE_INFINITY).toBeGreaterThan(25_000);
    expect(shed.length).toBeGreaterThan(0);
  });
});
