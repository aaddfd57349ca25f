import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FairEntry, FairQueue, type PriorityClass } from "../../../src/core/fair-queue";
import { propertyRuns } from "../../support/property-runs";

let clock = 0;
function entry(ticket: string, tenant: string, priority: PriorityClass = "interactive", weight = 1): FairEntry {
  return { ticket, tenant, weight, priority, enqueuedAtMs: clock++ };
}

/** One interactive request of the tenant "t", queued at `enqueuedAtMs`. */
function queuedAt(ticket: string, enqueuedAtMs: number): FairEntry {
  return { ticket, tenant: "t", weight: 1, priority: "interactive", enqueuedAtMs };
}

function drain(q: FairQueue): string[] {
  const out: string[] = [];
  for (let e = q.dispatch(); e; e = q.dispatch()) out.push(e.ticket);
  return out;
}

describe("FairQueue", () => {
  it("one tenant: FIFO, and a full queue refuses the newcomer (the behaviour of the plain queue)", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), fc.integer({ min: 1, max: 20 }), (ops, capacity) => {
        const q = new FairQueue();
        const expected: string[] = [];
        let n = 0;
        for (const isOffer of ops) {
          if (isOffer) {
            const ticket = `t${n++}`;
            const result = q.offer(entry(ticket, "only"), capacity);
            if (expected.length < capacity) {
              expect(result).toEqual({ kind: "queued" });
              expected.push(ticket);
            } else expect(result).toEqual({ kind: "refused" });
          } else expect(q.dispatch()?.ticket).toBe(expected.shift());
          expect(q.size).toBe(expected.length);
        }
      }),
      propertyRuns(100, 20261207),
    );
  });

  it("equal tenants take turns whatever their backlog; weights 2:1 get two turns to one", () => {
    const q = new FairQueue();
    for (let i = 0; i < 6; i++) q.offer(entry(`a${i}`, "a"), 100);
    q.offer(entry("b0", "b"), 100);
    q.offer(entry("b1", "b"), 100);
    expect(drain(q)).toEqual(["a0", "b0", "a1", "b1", "a2", "a3", "a4", "a5"]);

    const w = new FairQueue();
    for (let i = 0; i < 6; i++) w.offer(entry(`h${i}`, "heavy", "interactive", 2), 100);
    for (let i = 0; i < 6; i++) w.offer(entry(`l${i}`, "light", "interactive", 1), 100);
    const first6 = drain(w).slice(0, 6);
    expect(first6.filter((t) => t.startsWith("h"))).toHaveLength(4);
  });

  it("a tenant returning from idle banks no credit: it starts at the current virtual time", () => {
    const q = new FairQueue();
    for (let i = 0; i < 10; i++) q.offer(entry(`a${i}`, "a"), 100);
    for (let i = 0; i < 5; i++) q.dispatch();
    for (let i = 0; i < 3; i++) q.offer(entry(`b${i}`, "b"), 100);
    // b starts at the virtual time (a4's start), just before a's next turn; then they alternate: b does not get
    // the five turns a had while b was idle.
    expect(drain(q).slice(0, 6)).toEqual(["b0", "a5", "b1", "a6", "b2", "a7"]);
  });

  it("full: the tenant most over its share loses its newest request, not the light newcomer", () => {
    const q = new FairQueue();
    for (let i = 0; i < 4; i++) expect(q.offer(entry(`a${i}`, "a"), 4).kind).toBe("queued");
    const b = q.offer(entry("b0", "b"), 4);
    expect(b.kind === "queued" && b.displaced?.ticket).toBe("a3");
    // a (3 waiting) vs b (1 + this one): a is still the most over its share.
    const b1 = q.offer(entry("b1", "b"), 4);
    expect(b1.kind === "queued" && b1.displaced?.ticket).toBe("a2");
    // Now 2 and 2: b's third would put b over, so it is refused itself.
    expect(q.offer(entry("b2", "b"), 4)).toEqual({ kind: "refused" });
    expect(q.offer(entry("a9", "a"), 4)).toEqual({ kind: "refused" });
    expect(q.size).toBe(4);
  });

  it("a weight counts in the share: a weight-3 tenant may hold three times the backlog", () => {
    const q = new FairQueue();
    for (let i = 0; i < 3; i++) q.offer(entry(`big${i}`, "big", "interactive", 3), 4);
    q.offer(entry("s0", "small"), 4);
    expect(q.offer(entry("s1", "small"), 4)).toEqual({ kind: "refused" });
  });

  it("batch: refused first, never displaces interactive work, served whenever no interactive request waits", () => {
    const q = new FairQueue();
    q.offer(entry("x0", "x", "batch"), 3);
    q.offer(entry("i0", "a"), 3);
    q.offer(entry("x1", "x", "batch"), 3);
    // Interactive arrival on a full queue pushes out batch, the newest of the batch tenant.
    const i1 = q.offer(entry("i1", "b"), 3);
    expect(i1.kind === "queued" && i1.displaced?.ticket).toBe("x1");
    // A batch arrival when only interactive (and its own) work could go: refused.
    q.offer(entry("i2", "c"), 4);
    expect(q.offer(entry("y0", "y", "batch"), 4)).toEqual({ kind: "refused" });
    expect(drain(q)).toEqual(["i0", "i1", "i2", "x0"]);
  });

  it("holds the bound, and never refuses or displaces interactive work while batch work waits", () => {
    const tenants = ["a", "b", "c", "d"];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            op: fc.constantFrom("offer", "offer", "offer", "dispatch"),
            tenant: fc.constantFrom(...tenants),
            batch: fc.boolean(),
            weight: fc.constantFrom(1, 2, 5),
          }),
          { maxLength: 300 },
        ),
        fc.integer({ min: 1, max: 12 }),
        (ops, capacity) => {
          const q = new FairQueue();
          let n = 0;
          let batchWaiting = 0;
          for (const op of ops) {
            if (op.op === "dispatch") {
              const e = q.dispatch();
              if (e?.priority === "batch") batchWaiting--;
              continue;
            }
            const priority = op.batch ? "batch" : "interactive";
            const result = q.offer(entry(`t${n++}`, op.tenant, priority, op.weight), capacity);
            if (priority === "interactive" && batchWaiting > 0) {
              expect(result.kind).toBe("queued");
              if (result.kind === "queued" && result.displaced) expect(result.displaced.priority).toBe("batch");
            }
            if (priority === "batch" && result.kind === "queued")
              expect(result.displaced?.priority ?? "batch").toBe("batch");
            if (result.kind === "queued") {
              if (priority === "batch") batchWaiting++;
              if (result.displaced?.priority === "batch") batchWaiting--;
            }
            expect(q.size).toBeLessThanOrEqual(capacity);
          }
          // Interactive requests leave before any batch request.
          const classes: PriorityClass[] = [];
          for (let e = q.dispatch(); e; e = q.dispatch()) classes.push(e.priority);
          expect(
            classes.indexOf("interactive", classes.indexOf("batch") >= 0 ? classes.indexOf("batch") : classes.length),
          ).toBe(-1);
        },
      ),
      propertyRuns(100, 20261207),
    );
  });

  it("aheadOf: the queue length for a lone tenant; short for a light tenant beside a heavy one", () => {
    const q = new FairQueue();
    for (let i = 0; i < 5; i++) q.offer(entry(`a${i}`, "a"), 100);
    expect(q.aheadOf("a", 1, "interactive")).toBe(5);
    expect(q.aheadOf("b", 1, "interactive")).toBe(1);
    q.offer(entry("b0", "b"), 100);
    expect(q.aheadOf("b", 1, "interactive")).toBe(3);
    expect(q.aheadOf("a", 1, "interactive")).toBe(6);
    expect(q.aheadOf("z", 1, "batch")).toBe(6);
  });

  it("remove and clear keep the counts; entries are in arrival order", () => {
    const q = new FairQueue();
    q.offer(entry("a0", "a"), 10);
    q.offer(entry("b0", "b", "batch"), 10);
    q.offer(entry("a1", "a"), 10);
    expect(q.remove("a0")?.ticket).toBe("a0");
    expect(q.remove("a0")).toBeUndefined();
    expect([...q.entries()].map((e) => e.ticket)).toEqual(["b0", "a1"]);
    expect(q.peek()?.ticket).toBe("a1");
    expect(q.clear().map((e) => e.ticket)).toEqual(["b0", "a1"]);
    expect(q.size).toBe(0);
    expect(q.dispatch()).toBeUndefined();
  });

  it("with an eligibility filter: the next in fair order among eligible tenants of the head's class, never a lower class", () => {
    const q = new FairQueue();
    for (const e of [entry("a0", "a"), entry("b0", "b"), entry("x0", "x", "batch"), entry("a1", "a"), entry("b1", "b")])
      q.offer(e, 100);
    const notA = (tenant: string) => tenant !== "a";
    expect(q.peek()?.ticket).toBe("a0");
    expect(q.peek(notA)?.ticket).toBe("b0");
    expect(q.dispatch(notA)?.ticket).toBe("b0");
    expect(q.peek()?.ticket).toBe("a0"); // the unfiltered head is unchanged
    expect(q.dispatch(notA)?.ticket).toBe("b1");
    // Only a's interactive requests wait above the batch one: a filter that refuses a does not let batch by.
    expect(q.peek(notA)).toBeUndefined();
    expect(q.dispatch(notA)).toBeUndefined();
    expect(drain(q)).toEqual(["a0", "a1", "x0"]);
  });
});

describe("FairQueue's freshOrder: entries that do not yield by their next completion horizon", () => {
  // Arrivals at 0, 3 and 9.5 s, all waiting at t = 10 s, 4 s allowed from start to answer. a (0 s) missed its 5 s
  // start-by (1 s): its next is 15 s, by 11 s; b (3 s) by 14 s; c (9.5 s) can still make 5 s, by 10.5 s.
  const queue = (now: { t: number }, freshOrder?: "arrival" | "next_horizon") => {
    const q = new FairQueue({
      ordering: "start_time",
      clock: { now: () => now.t },
      yieldServiceS: 4,
      ...(freshOrder ? { freshOrder } : {}),
    });
    for (const e of [queuedAt("a", 0), queuedAt("b", 3_000), queuedAt("c", 9_500)]) q.offer(e, 10);
    return q;
  };

  it("next_horizon: the one whose next horizon is due soonest first, re-read as time passes", () => {
    const now = { t: 10_000 };
    expect(drain(queue(now, "next_horizon"))).toEqual(["c", "a", "b"]);
    // At 11.5 s c has missed its 5 s too (by 10.5 s): a's 15 s is past as well (11 s), so b (14 s) first, then c
    // (15 s: 9.5 + 15 - 4 = 20.5 s) and a (30 s: 26 s).
    now.t = 11_500;
    expect(drain(queue(now, "next_horizon"))).toEqual(["b", "c", "a"]);
  });

  it("arrival, the default: first in, first out whatever the horizons", () => {
    expect(drain(queue({ t: 10_000 }))).toEqual(["a", "b", "c"]);
  });

  it("next_horizon needs the clock its deadlines are read on", () => {
    expect(() => new FairQueue({ ordering: "start_time", freshOrder: "next_horizon" })).toThrow(/needs a clock/);
  });
});

describe("FairQueue's next_horizon order of entries that yield", () => {
  // Clients first refused at 0, 8 and 20 s, all waiting at t = 22 s, with 4 s allowed from start to answer. Their
  // next horizons still within reach: a (0 s) 30 s, start by 26 s; b (8 s) 30 s, by 34 s; c (20 s) 15 s, by 31 s
  // (its 5 s needed a start by 21 s). Earliest deadline first: a, c, b.
  const yielding = (ticket: string, firstRefusedAtMs: number, enqueuedAtMs: number): FairEntry => ({
    ticket,
    tenant: "t",
    weight: 1,
    priority: "interactive",
    enqueuedAtMs,
    yields: true,
    firstRefusedAtMs,
  });
  const queue = (now: { t: number }) => {
    const q = new FairQueue({
      ordering: "start_time",
      clock: { now: () => now.t },
      yieldOrder: "next_horizon",
      yieldServiceS: 4,
    });
    for (const e of [yielding("a", 0, 21_000), yielding("b", 8_000, 21_500), yielding("c", 20_000, 21_800)])
      q.offer(e, 10);
    return q;
  };

  it("serves first the one whose next completion horizon is due soonest, after every entry that does not yield", () => {
    const now = { t: 22_000 };
    const q = queue(now);
    q.offer({ ticket: "fresh", tenant: "t", weight: 1, priority: "interactive", enqueuedAtMs: 21_900 }, 10);
    expect(drain(q)).toEqual(["fresh", "a", "c", "b"]);
  });

  it("re-reads the deadlines as time passes: the order is not remembered from an earlier instant", () => {
    const now = { t: 22_000 };
    const q = queue(now);
    expect(q.peek()?.ticket).toBe("a");
    // At 27 s the first has missed its 30 s start-by (26 s): its next is 60 s (56 s); c's 31 s comes first.
    now.t = 27_000;
    expect(drain(q)).toEqual(["c", "b", "a"]);
  });

  it("needs the clock its deadlines are read on", () => {
    expect(() => new FairQueue({ ordering: "start_time", yieldOrder: "next_horizon" })).toThrow(/needs a clock/);
  });

  it("newest_first, the default, ignores the horizons: the most recently first refused first", () => {
    const q = new FairQueue({ ordering: "start_time" });
    for (const e of [yielding("a", 0, 21_000), yielding("b", 8_000, 21_500), yielding("c", 20_000, 21_800)])
      q.offer(e, 10);
    expect(drain(q)).toEqual(["c", "b", "a"]);
  });
});

describe("FairQueue's shares: the demoted's turn (yieldShare) and the newest's (newestShare)", () => {
  const fresh = queuedAt;
  const demoted = (ticket: string, firstRefusedAtMs: number, enqueuedAtMs: number): FairEntry => ({
    ...fresh(ticket, enqueuedAtMs),
    yields: true,
    firstRefusedAtMs,
  });

  it("yieldShare 0.5: every second dispatch goes to the demoted while both wait, in their own order", () => {
    const now = { t: 10_000 };
    const q = new FairQueue({ ordering: "least_attained", clock: { now: () => now.t }, yieldShare: 0.5 });
    for (let i = 0; i < 4; i++) q.offer(fresh(`f${i}`, 9_000 + i), 100);
    // newest_first among the demoted (the constructor's default): the most recently first refused goes first.
    for (let i = 0; i < 3; i++) q.offer(demoted(`d${i}`, 1_000 * i, 9_500 + i), 100, 200);
    expect(drain(q)).toEqual(["f0", "f1", "d2", "f2", "d1", "f3", "d0"]);
  });

  it("yieldShare absent: the demoted go only when nothing else waits", () => {
    const q = new FairQueue({ ordering: "least_attained", clock: { now: () => 10_000 } });
    q.offer(fresh("f0", 9_000), 100);
    q.offer(demoted("d0", 0, 9_100), 100, 200);
    q.offer(fresh("f1", 9_200), 100);
    expect(drain(q)).toEqual(["f0", "f1", "d0"]);
  });

  it("yieldFirstUnderMs: the demoted go first while every other entry has waited less than it, when allowed", () => {
    const queueAt = (t: number, allowed = true) => {
      const q = new FairQueue({
        ordering: "least_attained",
        clock: { now: () => t },
        yieldFirstUnderMs: 2_000,
        yieldFirstWhile: () => allowed,
      });
      q.offer(fresh("f0", 9_000), 100);
      q.offer(demoted("d0", 0, 9_100), 100, 200);
      q.offer(fresh("f1", 9_600), 100);
      return q;
    };
    // At 10 s the oldest other entry has waited 1 s: the demoted goes first.
    expect(queueAt(10_000).dispatch()?.ticket).toBe("d0");
    // At 11.5 s it has waited 2.5 s: f0 first; then the oldest, f1, has waited 1.9 s, and the demoted go before it.
    expect(drain(queueAt(11_500))).toEqual(["f0", "d0", "f1"]);
    // Not allowed now (the router: a standing queue): the demoted go last.
    expect(drain(queueAt(10_000, false))).toEqual(["f0", "f1", "d0"]);
  });

  it("newestShare: a turn goes to the newest that can still start within its 5 s horizon, else to the oldest", () => {
    // yieldServiceS 4 (the default): a request can still be answered within 5 s if it starts within 1 s of arriving.
    const queueAt = (t: number, newestShare = 1) => {
      const q = new FairQueue({ ordering: "least_attained", clock: { now: () => t }, newestShare });
      const arrivals = { a: 2_000, b: 3_000, c: 9_200, d: 9_500 };
      for (const [ticket, at] of Object.entries(arrivals)) q.offer(fresh(ticket, at), 100);
      return q;
    };
    // The first dispatch earns the newest its turn: then d, then c (start by 10.2 s), then b.
    expect(drain(queueAt(10_000))).toEqual(["a", "d", "c", "b"]);
    // At 10.3 s c is past its start-by: its turn goes to the oldest, b, and c waits in arrival order.
    expect(drain(queueAt(10_300))).toEqual(["a", "d", "b", "c"]);
    // newestShare 0.5: every second turn.
    expect(drain(queueAt(10_000, 0.5))).toEqual(["a", "b", "d", "c"]);
  });

  it("newestShare never reorders a tenant's single waiting entry nor other tenants' turns", () => {
    const q = new FairQueue({ ordering: "start_time", clock: { now: () => 0 }, newestShare: 1 });
    for (const [ticket, tenant] of [
      ["a1", "a"],
      ["b1", "b"],
      ["a2", "a"],
      ["a3", "a"],
    ] as const)
      q.offer({ ...fresh(ticket, 0), tenant }, 100);
    // a1 earns the newest a turn; b alternates with a as fair queuing says; a's turn then goes to its newest, a3;
    // a2, alone, is simply next.
    expect(drain(q)).toEqual(["a1", "b1", "a3", "a2"]);
  });
});

describe("FairQueue's newestShare after a spell of late arrivals", () => {
  it("keeps one turn, not a run of them: the newest goes once, then arrival order resumes its share", () => {
    const now = { t: 0 };
    const q = new FairQueue({ ordering: "least_attained", clock: { now: () => now.t }, newestShare: 0.5 });
    const offer = (ticket: string, at: number) => q.offer(queuedAt(ticket, at), 100);
    // Eight entries long past their 5 s start-by; six dispatches, each a turn of the newest lost to lateness.
    for (let i = 0; i < 8; i++) offer(`old${i}`, i);
    now.t = 60_000;
    expect([1, 2, 3, 4, 5, 6].map(() => q.dispatch()?.ticket)).toEqual([
      "old0",
      "old1",
      "old2",
      "old3",
      "old4",
      "old5",
    ]);
    // Three arrivals in time: one newest turn kept (not three), then every second dispatch as before.
    for (const [ticket, at] of [
      ["n1", 59_900],
      ["n2", 59_950],
      ["n3", 59_990],
    ] as const)
      offer(ticket, at);
    expect(drain(q)).toEqual(["n3", "old6", "n2", "old7", "n1"]);
  });
});

describe("FairQueue's newestWhile: the newest's share only while the router says (its queue stands)", () => {
  it("first in, first out while it says no; newest first while it says yes (adaptive LIFO)", () => {
    const state = { standing: false };
    const q = new FairQueue({
      ordering: "least_attained",
      clock: { now: () => 10_000 },
      newestShare: 1,
      newestWhile: () => state.standing,
    });
    for (const [ticket, at] of [
      ["a", 9_100],
      ["b", 9_200],
      ["c", 9_300],
      ["d", 9_400],
    ] as const)
      q.offer(queuedAt(ticket, at), 100);
    expect([q.dispatch()?.ticket, q.dispatch()?.ticket]).toEqual(["a", "b"]);
    state.standing = true;
    // No credit was earned while it said no: one dispatch earns the newest its turn, then every one is the newest's.
    q.offer(queuedAt("e", 9_500), 100);
    expect(drain(q)).toEqual(["c", "e", "d"]);
  });
});
