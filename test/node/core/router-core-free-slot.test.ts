import { describe, expect, it } from "vitest";
import { QUEUE_LENGTH_STALE_MS } from "../../../src/core/queue-length-cache";
import { RouterCore } from "../../../src/core/router-core";
import { routerOptions } from "../../support/router-options";

/** Random draws that make `chooseTwo` over [a, b, c, d] pick (a, b) (the default, 0) or (c, d). */
const PAIR_CD = [0.5, 0.9];

/**
 * Four one-slot replicas, each holding one of this router's requests (t0 on a ... t3 on d). The core's random
 * source answers the scripted draws, then 0: from then on power of two choices always draws the pair (a, b), the
 * case where a slot frees on c or d, which the pair never contains. `initialLoad`: what each replica reports
 * holding for others before this router places anything (capacity - 1: the one-slot picture; 0: room for our own).
 */
function saturated(capacity = 1, initialLoad = capacity - 1) {
  const options = routerOptions({ replicas: ["a", "b", "c", "d"], maxOngoingRequests: capacity });
  let now = 0;
  const draws: number[] = [];
  const core = new RouterCore(options, { now: () => now }, () => draws.shift() ?? 0);
  /** A round whose probes find each replica holding exactly this router's requests there. */
  const round = (loads: Record<string, number> = {}) => {
    const plan = core.beginRound();
    if (!plan) throw new Error("nothing queued");
    for (const replica of plan.probe) core.reportProbe(replica, loads[replica] ?? capacity);
    return { plan, outcome: core.finishRound(plan) };
  };
  for (const replica of options.replicas) core.reportProbe(replica, initialLoad);
  const placedOn: Record<string, string> = {};
  for (const [ticket, pair] of [
    ["t0", []],
    ["t1", []],
    ["t2", PAIR_CD],
    ["t3", PAIR_CD],
  ] as const) {
    draws.push(...pair);
    core.submit(ticket);
    const { outcome } = round();
    if (outcome.kind !== "placed") throw new Error(`${ticket} was not placed`);
    placedOn[outcome.replica] = ticket;
  }
  return { core, round, placedOn, draws, advance: (ms: number) => (now += ms) };
}

/**
 * Four two-slot replicas, each holding two of this router's requests (`own[replica]`, placed by the default pair
 * (a, b), then by (c, d)); from then on the default pair is (a, b) unless a test pushes other draws.
 */
function fullOfOwnRequests() {
  const { core, round, draws, placedOn } = saturated(2, 0);
  const own: Record<string, string[]> = {};
  for (const [replica, ticket] of Object.entries(placedOn)) own[replica] = [ticket];
  for (const [ticket, pair] of [
    ["u0", []],
    ["u1", []],
    ["u2", PAIR_CD],
    ["u3", PAIR_CD],
  ] as const) {
    draws.push(...pair);
    core.submit(ticket);
    const { outcome } = round();
    if (outcome.kind !== "placed") throw new Error(`${ticket} was not placed`);
    own[outcome.replica]?.push(ticket);
  }
  return { core, round, draws, own };
}

describe("RouterCore: a slot freed by this router's own release is taken at once", () => {
  it("after a release on a replica outside the random pair, the head goes there: no probe, no backoff", () => {
    const { core, round, placedOn } = saturated();
    expect(Object.keys(placedOn).sort()).toEqual(["a", "b", "c", "d"]);
    core.submit("waiting");
    // Nothing is free: the pair is probed, found full, and the loop backs off.
    const full = round();
    expect(full.plan.probe).toEqual(["a", "b"]);
    expect(full.outcome).toMatchObject({ kind: "backoff", delayMs: 25 });
    expect(core.backoffStreak).toBe(1);

    core.release(placedOn.c as string);
    const next = round();
    expect(next.plan.probe).toEqual([]);
    expect(next.outcome).toEqual({ kind: "placed", ticket: "waiting", replica: "c" });
    expect(core.backoffStreak).toBe(0);
  });

  it("a release that arrives while the round's probes are out places the head instead of backing off", () => {
    const { core, placedOn } = saturated();
    core.submit("waiting");
    const plan = core.beginRound();
    if (!plan) throw new Error("nothing queued");
    expect(plan.candidates).toEqual(["a", "b"]);
    core.release(placedOn.d as string); // the response on d ends before the probes of a and b answer
    for (const replica of plan.probe) core.reportProbe(replica, 1);
    expect(core.finishRound(plan)).toEqual({ kind: "placed", ticket: "waiting", replica: "d" });
  });

  it("a freed slot is used once: the next request finds the fleet full again", () => {
    const { core, round, placedOn } = saturated();
    core.release(placedOn.c as string);
    core.submit("first");
    core.submit("second");
    expect(round().outcome).toMatchObject({ kind: "placed", ticket: "first", replica: "c" });
    expect(round().outcome).toMatchObject({ kind: "backoff" });
  });

  it("a probe that finds the freed slot taken (by another router) cancels it", () => {
    const { core, round, placedOn } = saturated();
    core.release(placedOn.c as string);
    core.reportProbe("c", 1); // another router took the slot first
    core.submit("waiting");
    expect(round().outcome.kind).toBe("backoff");
  });

  it("a release on a replica whose report is stale does not skip the probe", () => {
    const { core, placedOn, advance } = saturated();
    advance(QUEUE_LENGTH_STALE_MS + 1);
    core.release(placedOn.c as string);
    core.submit("waiting");
    const plan = core.beginRound();
    expect(plan?.candidates).toEqual(["a", "b"]);
    expect(plan?.probe).toEqual(["a", "b"]);
  });

  it("while the random pair has room, power of two choices is unchanged: a freed replica elsewhere is not preferred", () => {
    const { core, round, placedOn } = saturated(4); // each replica holds 4 of 4: 3 reported + one of ours
    core.release(placedOn.c as string); // c: 3 of 4, freed by us
    core.reportProbe("a", 2); // a: 2 of 4 on a fresh report
    core.submit("waiting");
    const { plan, outcome } = round({ b: 3 });
    expect(plan.candidates).toEqual(["a", "b"]);
    expect(outcome).toMatchObject({ kind: "placed", replica: "a" });
  });

  it("slots freed while their replica's probe is out stay known free after its answer shows them", () => {
    // Two slots a replica, each holding two of this router's requests: a and b by the default pair, c and d by (c, d).
    const { core, round, draws, own } = fullOfOwnRequests();
    expect(Object.values(core.stats().replicas).map((e) => e?.queueLength)).toEqual([2, 2, 2, 2]);
    core.submit("w1");
    core.submit("w2");
    draws.push(...PAIR_CD);
    const plan = core.beginRound();
    if (!plan) throw new Error("nothing queued");
    expect(plan.probe).toEqual(["c", "d"]);
    // Both of c's responses end while the probes are out; c's answer, read after, shows it empty.
    for (const ticket of own.c ?? []) core.release(ticket);
    core.reportProbe("c", 0);
    core.reportProbe("d", 2);
    expect(core.finishRound(plan)).toEqual({ kind: "placed", ticket: "w1", replica: "c" });
    // The next pair is (a, b), both full: the second slot freed on c is still this router's to take.
    const next = round();
    expect(next.plan.candidates).toEqual(["c"]);
    expect(next.outcome).toEqual({ kind: "placed", ticket: "w2", replica: "c" });
  });

  it("a slot freed while the probe is out is not claimed when the answer shows it taken (by another router)", () => {
    const { core, round, draws, own } = fullOfOwnRequests();
    core.submit("w1");
    core.submit("w2");
    draws.push(...PAIR_CD);
    const plan = core.beginRound();
    if (!plan) throw new Error("nothing queued");
    for (const ticket of own.c ?? []) core.release(ticket);
    core.reportProbe("c", 1); // another router placed one there meanwhile
    core.reportProbe("d", 2);
    expect(core.finishRound(plan)).toEqual({ kind: "placed", ticket: "w1", replica: "c" });
    expect(round().outcome.kind).toBe("backoff"); // c is full again: nothing is left to claim
  });
});
