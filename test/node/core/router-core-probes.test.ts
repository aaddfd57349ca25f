import { describe, expect, it } from "vitest";
import { DOWN_RECHECK_MS, QUEUE_LENGTH_STALE_MS } from "../../../src/core/queue-length-cache";
import { type RoundPlan, RouterCore } from "../../../src/core/router-core";
import type { RouterOptions } from "../../../src/core/router-options";
import { routerOptions } from "../../support/router-options";

/** A router over replicas with `load: "none"`: nothing is ever probed, the router counts for itself. */
function setup(over: Partial<RouterOptions> = {}) {
  let now = 0;
  const options = routerOptions({ replicas: ["a", "b"], unprobedReplicas: ["a", "b"], maxOngoingRequests: 2, ...over });
  const core = new RouterCore(options, { now: () => now }, () => 0.5);
  const round = () => {
    const plan = core.beginRound();
    if (!plan) return undefined;
    expect(plan.probe).toEqual([]);
    return core.finishRound(plan);
  };
  return { core, round, advance: (ms: number) => (now += ms) };
}

describe("RouterCore with unprobed (load: none) replicas", () => {
  it("never asks for a probe and holds each replica at maxOngoingRequests by its own count", () => {
    const { core, round } = setup();
    for (let i = 0; i < 6; i++) expect(core.submit(`t${i}`).kind).toBe("queued");
    const placed = [round(), round(), round(), round()].map((o) => (o?.kind === "placed" ? o.replica : o?.kind));
    expect(placed.sort()).toEqual(["a", "a", "b", "b"]);
    // Both replicas hold 2 of ours: the fifth waits (backoff), however long ago anything was "reported".
    expect(round()?.kind).toBe("backoff");
    expect(core.queueDepth).toBe(2);
    core.release("t0");
    const next = round();
    expect(next).toMatchObject({ kind: "placed", ticket: "t4" });
    expect(core.stats().replicas[(next as { replica: string }).replica]?.queueLength).toBe(2);
  });

  it("a failed replica is passed over, then tried again after the down period without any probe", () => {
    const { core, round, advance } = setup({ replicas: ["a"], unprobedReplicas: ["a"] });
    core.submit("t1");
    expect(round()).toMatchObject({ kind: "placed", replica: "a" });
    core.release("t1", true);
    // The only replica is down, so the fleet is: refused at once with 503, nothing queued.
    const refused = core.submit("t2");
    expect(refused.kind === "rejected" && refused.rejection.statusCode).toBe(503);
    advance(DOWN_RECHECK_MS);
    core.submit("t3");
    expect(round()).toMatchObject({ kind: "placed", ticket: "t3", replica: "a" });
  });

  it("mixes with probed replicas: only those are probed", () => {
    const { core } = setup({ replicas: ["a", "b"], unprobedReplicas: ["b"] });
    core.submit("t1");
    expect(core.beginRound()?.probe).toEqual(["a"]);
  });
});

describe("RouterCore probe reports", () => {
  it("a report below this router's unreleased leases counts the leases (no double count of a finished request)", () => {
    const { core } = setup({ replicas: ["a"], unprobedReplicas: [], maxOngoingRequests: 1 });
    core.submit("t1");
    let plan = core.beginRound();
    core.reportProbe("a", 0);
    expect(core.finishRound(plan as NonNullable<typeof plan>)).toMatchObject({ kind: "placed", ticket: "t1" });
    // The replica has answered t1 (its page says 0) but the Worker's release has not arrived yet.
    core.submit("t2");
    plan = core.beginRound();
    expect(plan?.probe).toEqual(["a"]);
    core.reportProbe("a", 0);
    expect(core.finishRound(plan as NonNullable<typeof plan>).kind).toBe("backoff");
    core.release("t1");
    plan = core.beginRound();
    for (const r of plan?.probe ?? []) core.reportProbe(r, 0);
    expect(core.finishRound(plan as NonNullable<typeof plan>)).toMatchObject({ kind: "placed", ticket: "t2" });
  });
});

describe('RouterCore: a "full" release (the replica answered 429 itself)', () => {
  /** Probed replicas a and b of 2 slots each; `round` answers each probe from `reports` and finishes the round. */
  function probed(over: Partial<RouterOptions> = {}) {
    const s = setup({ unprobedReplicas: [], ...over });
    const round = (reports: Record<string, number | "timeout">) => {
      const plan = s.core.beginRound() as RoundPlan;
      for (const r of plan.probe) s.core.reportProbe(r, reports[r]);
      return { probed: plan.probe, outcome: s.core.finishRound(plan) };
    };
    return { ...s, round };
  }

  it("the next placements pass the replica over, on a fresh report, until a probe reads its queue again", () => {
    const { core, round } = probed();
    core.submit("t1");
    expect(round({ a: 0, b: 1 })).toMatchObject({ probed: ["a", "b"], outcome: { replica: "a" } });
    core.release("t1", "full");
    // Both reports are fresh and a's showed room (0 now, t1 ended): before, a was taken again without a probe.
    core.submit("t2");
    expect(round({ a: 2 })).toMatchObject({ probed: ["a"], outcome: { kind: "placed", ticket: "t2", replica: "b" } });
    // Not down: nothing refused with 503, nothing shed.
    expect(core.stats().replicas.a).toMatchObject({ valid: true, unreachable: false });
    // A probe that reads room gives it back.
    core.submit("t3");
    expect(round({ a: 0, b: 2 }).outcome).toMatchObject({ kind: "placed", ticket: "t3", replica: "a" });
  });

  it("counts at once: a round whose probes were out when the release came passes the replica over", () => {
    const { core, round } = probed();
    core.submit("t1");
    expect(round({ a: 0, b: "timeout" }).outcome).toMatchObject({ replica: "a" });
    core.submit("t2");
    const plan = core.beginRound() as RoundPlan;
    expect(plan.probe).toEqual(["b"]);
    core.release("t1", "full");
    core.reportProbe("b", 1);
    expect(core.finishRound(plan)).toMatchObject({ kind: "placed", ticket: "t2", replica: "b" });
  });

  it("a router with no queue lets the next request wait for the probe, not refuse it on the replica's word", () => {
    const { core, round } = probed({ replicas: ["a"], maxOngoingRequests: 1, maxQueuedRequests: 0 });
    core.submit("t1");
    expect(round({ a: 0 }).outcome).toMatchObject({ replica: "a" });
    core.release("t1", "full");
    expect(core.submit("t2").kind).toBe("queued");
    const { probed: asked, outcome } = round({ a: 1 });
    expect(asked).toEqual(["a"]);
    expect(outcome.kind === "backoff" && outcome.shed.map((s) => [s.ticket, s.rejection.reason])).toEqual([
      ["t2", "queue_full"],
    ]);
  });

  it("a round under way passes the replica over even when another of its slots comes back before it ends", () => {
    const { core, round } = probed({ maxOngoingRequests: 3 });
    core.submit("t1");
    core.submit("t2");
    // b reads full, so every round probes it; a's fresh report is trusted: t1 and t2 both go to a.
    expect(round({ a: 0, b: 3 }).outcome).toMatchObject({ ticket: "t1", replica: "a" });
    expect(round({ b: 3 })).toMatchObject({ probed: ["b"], outcome: { ticket: "t2", replica: "a" } });
    core.submit("t3");
    const plan = core.beginRound() as RoundPlan;
    expect(plan.probe).toEqual(["b"]);
    // While b's probe is out, a refuses t1 with its own 429, then t2 ends: a's count falls below the cap again.
    core.release("t1", "full");
    core.release("t2");
    core.reportProbe("b", 3);
    // Before, this round placed t3 on a without a probe, on the strength of t2's end.
    expect(core.finishRound(plan).kind).toBe("backoff");
    expect(round({ a: 1, b: 3 })).toMatchObject({ probed: ["a", "b"], outcome: { ticket: "t3", replica: "a" } });
  });

  it("nor is a slot that comes back on it handed on by an isolate before a probe reads it", () => {
    const { core, round } = probed({ replicas: ["a"] });
    core.submit("t1");
    core.submit("t2");
    expect(round({ a: 0 }).outcome).toMatchObject({ ticket: "t1", replica: "a" });
    expect(round({}).outcome).toMatchObject({ ticket: "t2", replica: "a" });
    core.release("t1", "full");
    core.release("t2");
    // Nothing waits and a's count is below its cap, but a said it was full: no hand-off may place on it.
    expect(core.handoffAllowed()).toBe(false);
  });

  it("a probe that was already out when the replica said it was full does not clear the mark", () => {
    const { core, round, advance } = probed();
    core.submit("t1");
    expect(round({ a: 0, b: 2 }).outcome).toMatchObject({ ticket: "t1", replica: "a" });
    core.submit("t2");
    advance(QUEUE_LENGTH_STALE_MS + 1);
    const plan = core.beginRound() as RoundPlan;
    expect(plan.probe).toEqual(["a", "b"]);
    core.release("t1", "full");
    // a's page was read before its 429: it shows the room the 429 says others have taken since.
    core.reportProbe("a", 0);
    core.reportProbe("b", 2);
    expect(core.finishRound(plan).kind).toBe("backoff");
    // The next round probes a again; a reading taken after the 429 gives it back.
    expect(round({ a: 0, b: 2 })).toMatchObject({ probed: ["a", "b"], outcome: { ticket: "t2", replica: "a" } });
  });

  it("an unprobed replica is passed over for the down period, without counting as down", () => {
    const { core, round, advance } = setup({ replicas: ["a"], unprobedReplicas: ["a"] });
    core.submit("t1");
    expect(round()).toMatchObject({ kind: "placed", replica: "a" });
    core.release("t1", "full");
    expect(core.submit("t2").kind).toBe("queued");
    expect(round()?.kind).toBe("backoff");
    advance(DOWN_RECHECK_MS);
    expect(round()).toMatchObject({ kind: "placed", ticket: "t2", replica: "a" });
  });
});
