import { describe, expect, it } from "vitest";
import { DOWN_RECHECK_MS } from "../../../src/core/queue-length-cache";
import { RouterCore } from "../../../src/core/router-core";
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
