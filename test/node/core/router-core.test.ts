import { describe, expect, it } from "vitest";
import { RouterCore } from "../../../src/core/router-core";
import type { RouterOptions } from "../../../src/core/router-options";
import { routerOptions } from "../../support/router-options";

function setup(over: Partial<RouterOptions> = {}, randomValues: number[] = []) {
  let now = 0;
  const options = routerOptions({ replicas: ["a", "b"], maxQueuedRequests: 1, ...over });
  const core = new RouterCore(options, { now: () => now }, () => randomValues.shift() ?? 0.5);
  /** Runs rounds the way the Durable Object does, answering probes from `lengths`. */
  const place = (lengths: Record<string, number | undefined>) => {
    const plan = core.beginRound();
    if (!plan) return undefined;
    for (const r of plan.probe) core.reportProbe(r, lengths[r]);
    return core.finishRound(plan);
  };
  return { core, place, advance: (ms: number) => (now += ms), options };
}

describe("RouterCore", () => {
  it("Ray's case: max_ongoing 1, max_queued 1, one replica - the third concurrent request is rejected", () => {
    const { core, place } = setup({ replicas: ["a"] });
    expect(core.submit("r1").kind).toBe("queued");
    expect(place({ a: 0 })).toEqual({ kind: "placed", ticket: "r1", replica: "a" });
    expect(core.submit("r2").kind).toBe("queued");
    expect(place({ a: 1 })).toMatchObject({ kind: "backoff", delayMs: 25 });
    const third = core.submit("r3");
    expect(third.kind).toBe("rejected");
    if (third.kind !== "rejected") return;
    expect(third.rejection.statusCode).toBe(429);
    expect(third.rejection.decision).toMatchObject({ rung: "static_fallback", retryAfterS: 5 });
    expect(third.rejection.message).toBe(
      "Request dropped due to backpressure (num_queued_requests=1, max_queued_requests=1)",
    );
    expect(third.rejection.record).toMatchObject({ reason: "queue_full", rung: "static_fallback", queue_depth: 1 });
    // After the first completes, the queued one is served.
    core.release("r1");
    expect(place({ a: 0 })).toEqual({ kind: "placed", ticket: "r2", replica: "a" });
    expect(core.backoffStreak).toBe(0);
  });

  it("counts rejections by rung (spec: counts of rejections by rung), one per rejection", () => {
    // Ray's case (one one-slot replica, a queue of one): r1 runs, r2 waits, later arrivals are refused.
    const refuse = (retryAfterS: number | undefined, tickets: string[]) => {
      const { core, place } = setup({ replicas: ["a"], retryAfter: { ...routerOptions().retryAfter, retryAfterS } });
      core.submit("r1");
      place({ a: 0 });
      core.submit("r2");
      const rungs = tickets.map((t) => {
        const r = core.submit(t);
        return r.kind === "rejected" ? r.rejection.decision.rung : r.kind;
      });
      return { rungs, counts: core.stats().rejections };
    };
    expect(refuse(5, ["r3", "r4"])).toEqual({
      rungs: ["static_fallback", "static_fallback"],
      counts: { computed: 0, static_fallback: 2, none: 0 },
    });
    expect(refuse(undefined, ["r3", "r4", "r5"])).toEqual({
      rungs: ["none", "none", "none"],
      counts: { computed: 0, static_fallback: 0, none: 3 },
    });
  });

  it("places in FIFO order", () => {
    const { core, place } = setup({ replicas: ["a"], maxOngoingRequests: 10, maxQueuedRequests: 10 });
    for (const t of ["x", "y", "z"]) core.submit(t);
    const order = [place({ a: 0 }), place({}), place({})].map((o) => (o?.kind === "placed" ? o.ticket : o?.kind));
    expect(order).toEqual(["x", "y", "z"]);
  });

  it("sends the request to the replica with the shorter queue", () => {
    const { core, place } = setup({ maxOngoingRequests: 5, maxQueuedRequests: 5 });
    core.submit("t");
    expect(place({ a: 3, b: 1 })).toMatchObject({ replica: "b" });
  });

  it("computes Retry-After from depth / rate once warm", () => {
    const { core, place, advance } = setup({ replicas: ["a"], maxOngoingRequests: 1000, maxQueuedRequests: 4 });
    // Three busy seconds of 4 drains each warm the estimator at 4 drains/s.
    for (let s = 0; s < 3; s++) {
      for (let i = 0; i < 4; i++) {
        core.submit(`w${s}-${i}`);
        core.submit(`w${s}-${i}b`);
        place({ a: 0 });
        advance(250);
      }
    }
    while (core.queueDepth < 4) core.submit(`fill-${core.queueDepth}`);
    advance(1); // still inside the fourth interval
    const r = core.submit("late");
    expect(r.kind).toBe("rejected");
    if (r.kind !== "rejected") return;
    const stats = core.stats();
    expect(stats.estimatorWarm).toBe(true);
    // depth 4 / rate 4 * saturation (occupancy 12/1000 * 0.25) ~ 1.003 s
    expect(r.rejection.decision.rung).toBe("computed");
    expect(r.rejection.decision.preJitterS).toBeCloseTo(
      (4 / (stats.drainRate as number)) * (1 + 0.25 * (12 / 1000)),
      9,
    );
    expect(r.rejection.decision.retryAfterS).toBe(2);
    // The only computed rejection so far (any during the warm-up fell back to the static value).
    expect(stats.rejections.computed).toBe(1);
    // The structured log record carries every field the RFC lists, with the values of this decision.
    const pre = r.rejection.decision.preJitterS as number;
    expect(r.rejection.record).toEqual({
      event: "spillway.rejection",
      reason: "queue_full",
      status: 429,
      policy: "router_queue_drain_rate", // policy
      rung: "computed", // fallback rung
      queue_depth: 4, // observed queue depth
      max_queued_requests: 4,
      drain_rate: stats.drainRate, // drain rate
      estimator_warm: true, // estimator warm
      pre_jitter_s: pre, // pre-jitter value
      // post-jitter value: within 20% of the 1 s floor, jittered upward only (u = 0.5: +10%), not clamped onto it
      post_jitter_s: pre * 1.1,
      retry_after_s: 2,
      retry_after_ms: Math.ceil(pre * 1.1 * 1000),
      drain_counter: stats.drainCount, // the drain counter
      backoff_streak: 0,
    });
    expect(stats.drainCount).toBe(12);
  });

  it("a request re-acquired after a router reset queues by its first arrival and keeps its queue timeout", () => {
    const { core, place, advance } = setup({ replicas: ["a"], maxOngoingRequests: 1, maxQueuedRequests: 10 });
    advance(10_000);
    core.submit("young"); // arrived at 10 s
    core.submit("old", { waitedMs: 25_000 }); // re-acquired: first arrived at -15 s (30 s timeout: due at 15 s)
    core.submit("older", { waitedMs: 28_000 });
    // FIFO by first arrival: the re-acquired ones go ahead of the young one.
    expect(core.nextExpiryMs()).toBe(10_000 - 28_000 + 30_000);
    advance(2_000); // 12 s: "older" has waited 30 s in all
    expect(core.expire().timedOut.map((t) => t.ticket)).toEqual(["older"]);
    expect(place({ a: 0 })).toMatchObject({ kind: "placed", ticket: "old" });
    core.release("old");
    expect(place({ a: 0 })).toMatchObject({ kind: "placed", ticket: "young" });
  });

  it("maxQueuedRequests -1 is unlimited (Ray's max_queued_requests = -1): a full fleet queues, never sheds", () => {
    const { core, place } = setup({ replicas: ["a"], maxOngoingRequests: 1, maxQueuedRequests: -1 });
    for (let i = 0; i < 500; i++) expect(core.submit(`q${i}`).kind).toBe("queued");
    expect(place({ a: 1 })).toMatchObject({ kind: "backoff" });
    expect(core.queueDepth).toBe(500);
    expect(core.stats().maxQueuedRequests).toBe(-1);
  });

  it("a cancelled queued request leaves the queue and holds no slot", () => {
    const { core, place } = setup({ replicas: ["a"], maxQueuedRequests: 3 });
    core.submit("p");
    place({ a: 0 });
    core.submit("q");
    expect(core.cancel("q")).toBe("dequeued");
    expect(core.queueDepth).toBe(0);
    expect(core.cancel("p")).toBe("released");
    expect(core.stats().activeLeases).toBe(0);
    expect(core.cancel("p")).toBe("unknown");
  });

  it("sheds requests past the queue timeout and reclaims leases never released", () => {
    const { core, place, advance } = setup({ replicas: ["a"], queueTimeoutMs: 1_000, leaseTimeoutMs: 5_000 });
    core.submit("held");
    place({ a: 0 });
    core.submit("waiting");
    expect(core.nextExpiryMs()).toBe(1_000);
    advance(1_000);
    const first = core.expire();
    expect(first.timedOut.map((t) => [t.ticket, t.rejection.reason])).toEqual([["waiting", "queue_timeout"]]);
    advance(4_000);
    expect(core.expire().reclaimed).toEqual(["held"]);
    expect(core.stats().activeLeases).toBe(0);
  });

  it("stops choosing a replica whose probe failed and rejects with 503 when all are down", () => {
    // max_ongoing 1: b is at its cap after t1, so the next round re-probes both replicas.
    const { core, place, advance } = setup({ maxOngoingRequests: 1, maxQueuedRequests: 4, statusCode: 429 });
    core.submit("t1");
    expect(place({ a: undefined, b: 0 })).toMatchObject({ replica: "b" });
    core.submit("t2");
    const outcome = place({ a: undefined, b: undefined });
    expect(outcome).toMatchObject({ kind: "backoff" });
    if (outcome?.kind !== "backoff") return;
    expect(outcome.shed.map((s) => [s.ticket, s.rejection.statusCode, s.rejection.decision.rung])).toEqual([
      ["t2", 503, "static_fallback"],
    ]);
    const r = core.submit("t3");
    expect(r).toMatchObject({ kind: "rejected", rejection: { statusCode: 503, reason: "no_replica_available" } });
    // A second later the fleet is worth probing again: a request queues, and a replica that answers takes it.
    advance(1_000);
    expect(core.submit("t4").kind).toBe("queued");
    expect(place({ a: 0, b: undefined })).toMatchObject({ kind: "placed", ticket: "t4", replica: "a" });
  });

  it("a probe that misses its deadline passes the replica over without calling the fleet down", () => {
    const { core, place } = setup({ replicas: ["a"], maxOngoingRequests: 4, maxQueuedRequests: 4 });
    core.submit("t1");
    const plan = core.beginRound();
    if (!plan) throw new Error("no round");
    for (const r of plan.probe) core.reportProbe(r, "timeout");
    const outcome = core.finishRound(plan);
    // Backoff (and a longer probe deadline next round), but nobody is shed and new requests still queue.
    expect(outcome).toMatchObject({ kind: "backoff", shed: [] });
    expect(core.beginRound()?.probeDeadlineMs).toBe(200);
    expect(core.submit("t2").kind).toBe("queued");
    expect(place({ a: 0 })).toMatchObject({ kind: "placed", ticket: "t1" });
  });

  it("a probe that misses its deadline marks the entry invalid: a stale replica that did not answer is not chosen", () => {
    const { core, place, advance } = setup({ replicas: ["a"], maxOngoingRequests: 4, maxQueuedRequests: 4 });
    core.submit("t1");
    expect(place({ a: 0 })).toMatchObject({ kind: "placed", replica: "a" });
    core.release("t1");
    advance(10_001); // a's report (0 of 4) is now stale: the next round re-probes it
    core.submit("t2");
    const plan = core.beginRound();
    expect(plan?.probe).toEqual(["a"]);
    if (!plan) return;
    core.reportProbe("a", "timeout");
    // Its stale entry still reads 0 of 4, but the probe failed: the round backs off instead of placing t2 there.
    expect(core.finishRound(plan)).toMatchObject({ kind: "backoff", shed: [] });
    expect(core.stats().replicas.a).toMatchObject({ valid: false, unreachable: false });
    expect(place({ a: 0 })).toMatchObject({ kind: "placed", ticket: "t2", replica: "a" });
  });

  it("a failed request marks its replica down until a probe succeeds", () => {
    const { core, place } = setup({ maxOngoingRequests: 4, maxQueuedRequests: 4 });
    core.submit("t1");
    place({ a: 0, b: 0 });
    core.release("t1", true);
    expect(Object.values(core.stats().replicas).filter((e) => e?.valid === false)).toHaveLength(1);
  });

  it("records suggested vs observed drain for rejections", () => {
    const { core, place, advance } = setup({ replicas: ["a"], maxOngoingRequests: 10 });
    core.submit("a1");
    core.submit("a2"); // rejected? no: first is still queued, so the second is rejected at depth 1
    advance(2_000);
    place({ a: 0 });
    expect(core.stats().recentObservations).toEqual([
      { atMs: 0, queueDepth: 1, suggestedS: expect.any(Number), observedS: 2 },
    ]);
  });
});
