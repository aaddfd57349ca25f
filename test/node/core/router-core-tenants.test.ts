import { describe, expect, it } from "vitest";
import { RouterCore, type SubmitOptions } from "../../../src/core/router-core";
import type { RouterOptions } from "../../../src/core/router-options";
import { routerOptions } from "../../support/router-options";

function setup(over: Partial<RouterOptions> = {}) {
  let now = 0;
  const options = routerOptions({ maxOngoingRequests: 1000, maxQueuedRequests: 4, ...over }, { jitter: 0 });
  const core = new RouterCore(options, { now: () => now }, () => 0.5);
  const place = () => {
    const plan = core.beginRound();
    if (!plan) return undefined;
    for (const r of plan.probe) core.reportProbe(r, 0);
    const outcome = core.finishRound(plan);
    return outcome.kind === "placed" ? outcome.ticket : outcome.kind;
  };
  return { core, place, advance: (ms: number) => (now += ms) };
}

const A: SubmitOptions = { tenant: "a" };
const B: SubmitOptions = { tenant: "b" };

describe("RouterCore with tenants", () => {
  it("a full queue pushes out the heavy tenant's newest request for a light tenant, and places fairly", () => {
    const { core, place } = setup();
    for (let i = 0; i < 4; i++) expect(core.submit(`a${i}`, A).kind).toBe("queued");
    const b = core.submit("b0", B);
    expect(b.kind).toBe("queued");
    if (b.kind !== "queued") return;
    expect(b.displaced?.ticket).toBe("a3");
    expect(b.displaced?.rejection).toMatchObject({ statusCode: 429, reason: "queue_full" });
    expect(core.isQueued("a3")).toBe(false);
    expect(core.queueDepth).toBe(4);
    expect([place(), place(), place(), place()]).toEqual(["a0", "b0", "a1", "a2"]);
    expect(core.stats().rejectionsByReason.queue_full).toBe(1);
  });

  it("a refused heavy tenant's Retry-After counts everything ahead of its next request", () => {
    const { core, place, advance } = setup({ maxQueuedRequests: 8 });
    // Three busy seconds of 4 drains each warm the estimator at 4 drains/s.
    for (let s = 0; s < 3; s++) {
      for (let i = 0; i < 4; i++) {
        core.submit(`w${s}-${i}`, A);
        core.submit(`w${s}-${i}b`, A);
        place();
        advance(250);
      }
    }
    while (core.queueDepth < 7) core.submit(`a-fill-${core.queueDepth}`, A);
    core.submit("b-0", B);
    advance(1);
    const heavy = core.submit("a-late", A);
    expect(heavy.kind).toBe("rejected");
    if (heavy.kind !== "rejected") return;
    const rate = core.stats().drainRate as number;
    // 7 of its own and b's one (b is served once while a is served 8 times): 8 ahead, the whole queue.
    expect(heavy.rejection.decision.preJitterS).toBeCloseTo((8 / rate) * (1 + 0.25 * (12 / 1000)), 6); // 12 placed of 1000 slots
    expect(heavy.rejection.record.queue_depth).toBe(8);
    // The light tenant is not refused while under its share: a's newest makes room, and is told the same wait.
    const light = core.submit("b-1", B);
    expect(light.kind === "queued" && light.displaced?.ticket).toBe("w2-3"); // a's newest (w2-3b found the queue full)
  });

  it("batch is refused first and placed only when no interactive request waits", () => {
    const { core, place } = setup({ maxQueuedRequests: 3 });
    core.submit("x0", { tenant: "x", priority: "batch" });
    core.submit("x1", { tenant: "x", priority: "batch" });
    core.submit("i0", A);
    const i1 = core.submit("i1", B);
    expect(i1.kind === "queued" && i1.displaced?.ticket).toBe("x1");
    // A batch arrival on a full queue may only push out batch work; x is its only batch tenant: refused.
    expect(core.submit("x2", { tenant: "x", priority: "batch" }).kind).toBe("rejected");
    expect([place(), place(), place()]).toEqual(["i0", "i1", "x0"]);
  });

  it("expiry still sheds the oldest first, across tenants", () => {
    const { core, advance } = setup({ queueTimeoutMs: 1000 });
    core.submit("a0", A);
    advance(400);
    core.submit("b0", B);
    advance(700);
    expect(core.expire().timedOut.map((t) => t.ticket)).toEqual(["a0"]);
    expect(core.nextExpiryMs()).toBe(1400);
  });
});
