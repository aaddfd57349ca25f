import { describe, expect, it } from "vitest";
import { DOWN_RECHECK_MS, QUEUE_LENGTH_STALE_MS } from "../../../src/core/queue-length-cache";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptions } from "../../support/router-options";

/**
 * A router with no queue (`maxQueuedRequests: 0`, Ray's "no waiting"): a request is placed at once or refused. It
 * learns of room only from probes, which it sends for queued requests: it must not refuse while it does not know
 * whether a replica has room, or it never probes and refuses every request, as it did.
 */
function noQueue() {
  let now = 0;
  const core = new RouterCore(routerOptions({ replicas: ["a"], maxQueuedRequests: 0 }), { now: () => now }, () => 0.5);
  /** A round whose probes find replica `a` holding `load` requests; its outcome. */
  const round = (load: number | undefined) => {
    const plan = core.beginRound();
    if (!plan) throw new Error("nothing queued");
    for (const replica of plan.probe) core.reportProbe(replica, load);
    return core.finishRound(plan);
  };
  return { core, round, advance: (ms: number) => (now += ms) };
}

describe("a router with no queue", () => {
  it("places a request on a fleet it has not heard from yet: it probes first instead of refusing", () => {
    const { core, round } = noQueue();
    expect(core.submit("t0").kind).toBe("queued");
    expect(round(0)).toMatchObject({ kind: "placed", ticket: "t0", replica: "a" });
  });

  it("refuses at once while the replica's fresh report says it is full, and places again once its own request ends", () => {
    const { core, round } = noQueue();
    core.submit("t0");
    round(0);
    expect(core.submit("t1").kind).toBe("rejected");
    core.release("t0");
    expect(core.submit("t2").kind).toBe("queued");
    expect(round(0)).toMatchObject({ kind: "placed", ticket: "t2" });
  });

  it("asks again once a full replica's report is stale (another router's requests there may have ended)", () => {
    const { core, round, advance } = noQueue();
    core.submit("t0");
    // The probe finds `a` full of other routers' requests: t0, let in only to wait for the probe, is refused.
    expect(round(1)).toMatchObject({ kind: "backoff", shed: [{ ticket: "t0", rejection: { reason: "queue_full" } }] });
    expect(core.queueDepth).toBe(0);
    expect(core.submit("t1").kind).toBe("rejected");
    advance(QUEUE_LENGTH_STALE_MS + 1);
    expect(core.submit("t2").kind).toBe("queued");
    expect(round(0)).toMatchObject({ kind: "placed", ticket: "t2" });
  });

  it("tries a failed replica again after its recheck period, as a queue would", () => {
    const { core, round, advance } = noQueue();
    core.submit("t0");
    round(0);
    core.release("t0", true);
    expect(core.submit("t1")).toMatchObject({ kind: "rejected", rejection: { reason: "no_replica_available" } });
    advance(DOWN_RECHECK_MS);
    expect(core.submit("t2").kind).toBe("queued");
    expect(round(0)).toMatchObject({ kind: "placed", ticket: "t2" });
  });

  it("counts a hinted request let in only to wait for the probe by the probe's answer, not as admitted at once", () => {
    // It was counted "admitted" as it joined the queue, and then refused by the probe: X read a refusal as admitted.
    const { core, round, advance } = noQueue();
    core.submit("t0");
    round(1); // `a` is full of other routers' requests (t0 is refused): the fresh report says so
    for (const [fingerprint, probeLoad] of [
      ["refused-again", 1],
      ["placed", 0],
    ] as const) {
      const refused = core.submit(`${fingerprint}.0`, { fingerprint });
      if (refused.kind !== "rejected") throw new Error("expected a refusal");
      expect(refused.rejection.decision.jitteredS).toBeDefined();
      advance(QUEUE_LENGTH_STALE_MS + 1); // the report is stale: `a` may have room, the retry waits for a probe
      expect(core.submit(`${fingerprint}.1`, { fingerprint }).kind).toBe("queued");
      const before = core.stats().hintedRetries;
      expect(before.admitted.late + before.refused.late).toBe(probeLoad === 1 ? 0 : 1); // not yet: the probe decides
      round(probeLoad);
    }
    const counts = core.stats().hintedRetries;
    expect(counts.refused.late).toBe(1);
    expect(counts.admitted.late).toBe(1);
  });
});
