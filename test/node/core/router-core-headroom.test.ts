import { describe, expect, it } from "vitest";
import { RouterCore, type SubmitOptions } from "../../../src/core/router-core";
import type { RouterOptions } from "../../../src/core/router-options";
import { TENANT_ACTIVE_WINDOW_MS } from "../../../src/core/tenant-headroom";
import { routerOptions } from "../../support/router-options";

/**
 * Two unprobed replicas of two slots (4 slots; the cache counts exactly this router's requests), one slot of
 * tenant headroom. With two active tenants of equal weight each one's fair share is 2 slots.
 */
function setup(over: Partial<RouterOptions> = {}) {
  let now = 0;
  const options = routerOptions(
    {
      replicas: ["r1", "r2"],
      unprobedReplicas: ["r1", "r2"],
      maxOngoingRequests: 2,
      tenantHeadroomSlots: 1,
      ...over,
    },
    { jitter: 0 },
  );
  const core = new RouterCore(options, { now: () => now }, () => 0);
  /** One placement round: the ticket placed, or the outcome's kind. */
  const round = () => {
    const plan = core.beginRound();
    if (!plan) return "empty";
    const outcome = core.finishRound(plan);
    return outcome.kind === "placed" ? outcome.ticket : outcome.kind;
  };
  const submit = (ticket: string, options: SubmitOptions) => expect(core.submit(ticket, options).kind).toBe("queued");
  return { core, round, submit, advance: (ms: number) => (now += ms), now: () => now };
}

const A: SubmitOptions = { tenant: "a" };
const B: SubmitOptions = { tenant: "b" };

describe("RouterCore tenant headroom", () => {
  it("keeps the last free slot from a tenant at its share while a tenant below its share is active", () => {
    const { core, round, submit } = setup();
    submit("b0", B);
    expect(round()).toBe("b0");
    for (const t of ["a0", "a1", "a2"]) submit(t, A);
    expect([round(), round()]).toEqual(["a0", "a1"]); // below its share (2) until these two
    // a holds 2 of its 2, b holds 1: placing a2 would leave no slot free.
    const held = core.finishRound(core.beginRound() as NonNullable<ReturnType<RouterCore["beginRound"]>>);
    expect(held.kind).toBe("held");
    expect(core.isQueued("a2")).toBe(true);
    expect(core.backoffStreak).toBe(0); // not a failed round
    // The light tenant's next request takes the slot at once, ahead of the waiting heavy one.
    submit("b1", B);
    expect(round()).toBe("b1");
    expect(core.isQueued("a2")).toBe(true);
  });

  it("places the held request as soon as the headroom allows: more than the headroom free", () => {
    const { core, round, submit } = setup();
    submit("b0", B);
    submit("b1", B);
    expect([round(), round()]).toEqual(["b0", "b1"]);
    for (const t of ["a0", "a1", "a2"]) submit(t, A);
    expect([round(), round()]).toEqual(["a0", "a1"]); // the fleet is full
    expect(round()).toBe("backoff"); // no replica has room: the ordinary backoff
    core.release("b0"); // one free: b (1 of its 2) is below its share, a is at it
    expect(round()).toBe("held");
    core.release("b1"); // two free: placing a2 leaves one
    expect(round()).toBe("a2");
  });

  it("releases the headroom when the light tenant has been quiet for the activity window", () => {
    const { core, round, submit, advance, now } = setup();
    for (const t of ["a0", "a1", "a2"]) submit(t, A);
    expect([round(), round(), round()]).toEqual(["a0", "a1", "a2"]); // alone: nothing is held
    submit("b0", B);
    submit("a3", A);
    expect([round(), round()]).toEqual(["b0", "backoff"]); // b is below its share: it takes the last slot
    advance(100);
    core.release("b0"); // b's last request ends at 100 ms: active until 100 ms + the window
    const plan = core.beginRound() as NonNullable<ReturnType<RouterCore["beginRound"]>>;
    expect(core.finishRound(plan)).toEqual({ kind: "held", delayMs: TENANT_ACTIVE_WINDOW_MS });
    advance(TENANT_ACTIVE_WINDOW_MS - 1);
    expect(round()).toBe("held");
    advance(1);
    expect(now()).toBe(100 + TENANT_ACTIVE_WINDOW_MS);
    expect(round()).toBe("a3"); // b is no longer active: work-conserving again
  });

  it("never holds anything back for a single tenant (or untagged traffic)", () => {
    for (const options of [A, {}]) {
      const { round, submit } = setup();
      for (let i = 0; i < 5; i++) submit(`t${i}`, options);
      expect([round(), round(), round(), round(), round()]).toEqual(["t0", "t1", "t2", "t3", "backoff"]);
    }
  });

  it("holds nothing while every active tenant is below its share", () => {
    const { round, submit } = setup();
    // Three tenants share 4 slots (4/3 each): one in flight apiece is below every share, with one slot left.
    submit("a0", A);
    submit("b0", B);
    submit("c0", { tenant: "c" });
    submit("a1", A);
    expect([round(), round(), round()]).toEqual(["a0", "b0", "c0"]);
    expect(round()).toBe("a1"); // a holds 1 of 4/3: below its share, so it may take the last slot
  });

  it("batch never holds room back from interactive work", () => {
    const { round, submit } = setup();
    const X: SubmitOptions = { tenant: "x", priority: "batch" };
    submit("x0", X);
    expect(round()).toBe("x0");
    for (const t of ["a0", "a1", "a2"]) submit(t, A);
    // a is at its share and x below its own, but x is batch: a's interactive request takes the last slot.
    expect([round(), round(), round()]).toEqual(["a0", "a1", "a2"]);
  });

  it("with no headroom configured, placement is work-conserving as before", () => {
    const { round, submit } = setup({ tenantHeadroomSlots: 0 });
    submit("b0", B);
    for (const t of ["a0", "a1", "a2"]) submit(t, A);
    expect([round(), round(), round(), round()]).toEqual(["b0", "a0", "a1", "a2"]);
  });

  it("with several router shards, a tenant's share at one router is its fair share of the fleet over the shards", () => {
    for (const [routerShards, expected] of [
      [1, "a1"], // a holds 1 of its 2 (4 slots, two tenants): below its share
      [2, "held"], // each router sees about half of every tenant's requests: 1 of its 1 here
    ] as const) {
      const { core, submit } = setup({ unprobedReplicas: [], routerShards });
      // r1 is full of other routers' requests; r2 holds only this router's.
      const place = () => {
        const plan = core.beginRound() as NonNullable<ReturnType<RouterCore["beginRound"]>>;
        for (const replica of plan.probe) core.reportProbe(replica, replica === "r1" ? 2 : 0);
        const outcome = core.finishRound(plan);
        return outcome.kind === "placed" ? outcome.ticket : outcome.kind;
      };
      submit("b0", B);
      expect(place()).toBe("b0");
      core.release("b0"); // b stays active (it ended just now) with nothing in flight
      submit("a0", A);
      submit("a1", A);
      expect([place(), place()]).toEqual(["a0", expected]); // a1 would leave no slot free
    }
  });

  it("a held request still times out in the queue", () => {
    const { core, round, submit, advance } = setup({ queueTimeoutMs: 1000 });
    submit("b0", B);
    expect(round()).toBe("b0");
    for (const t of ["a0", "a1", "a2"]) submit(t, A);
    expect([round(), round(), round()]).toEqual(["a0", "a1", "held"]);
    advance(999);
    submit("b1", B); // keeps b active (and takes the held slot)
    expect(round()).toBe("b1");
    advance(1);
    const { timedOut } = core.expire();
    expect(timedOut.map((t) => t.ticket)).toEqual(["a2"]);
    expect(timedOut[0]?.rejection).toMatchObject({ reason: "queue_timeout", statusCode: 429 });
    expect(core.queueDepth).toBe(0);
  });
});
