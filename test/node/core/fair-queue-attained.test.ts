import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FairEntry, FairQueue, type FairQueueOptions, type PriorityClass } from "../../../src/core/fair-queue";
import { propertyRuns } from "../../support/property-runs";

/** A queue ordered by decayed attained service, on a clock the test moves. */
function attainedQueue(tauMs = 4000): { q: FairQueue; clock: { now(): number; ms: number } } {
  const clock = {
    ms: 0,
    now() {
      return this.ms;
    },
  };
  const options: FairQueueOptions = { ordering: "least_attained", clock, serviceTimeConstantMs: tauMs };
  return { q: new FairQueue(options), clock };
}

let seq = 0;
function entry(ticket: string, tenant: string, weight = 1, priority: PriorityClass = "interactive"): FairEntry {
  return { ticket, tenant, weight, priority, enqueuedAtMs: seq++ };
}

function drain(q: FairQueue): string[] {
  const out: string[] = [];
  for (let e = q.dispatch(); e; e = q.dispatch()) out.push(e.ticket);
  return out;
}

describe("FairQueue, least attained service", () => {
  it("a light tenant's second waiting request goes before a heavy tenant's backlog (start-time alternates)", () => {
    const { q, clock } = attainedQueue();
    const sfq = new FairQueue();
    for (const queue of [q, sfq]) for (let i = 0; i < 10; i++) queue.offer(entry(`a${i}`, "a"), 100);
    for (let i = 0; i < 5; i++) {
      clock.ms += 100;
      q.dispatch();
      sfq.dispatch();
    }
    for (const queue of [q, sfq]) {
      queue.offer(entry("b0", "b"), 100);
      queue.offer(entry("b1", "b"), 100);
    }
    expect(drain(q)).toEqual(["b0", "b1", "a5", "a6", "a7", "a8", "a9"]);
    expect(drain(sfq).slice(0, 3)).toEqual(["b0", "a5", "b1"]);
  });

  it("two tenants both backlogged share by weight: equal weights alternate, 2:1 get two turns to one", () => {
    const { q } = attainedQueue();
    for (let i = 0; i < 4; i++) q.offer(entry(`a${i}`, "a"), 100);
    for (let i = 0; i < 4; i++) q.offer(entry(`b${i}`, "b"), 100);
    expect(drain(q)).toEqual(["a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3"]);

    const { q: w, clock } = attainedQueue();
    for (let i = 0; i < 30; i++) w.offer(entry(`h${i}`, "heavy", 2), 100);
    for (let i = 0; i < 30; i++) w.offer(entry(`l${i}`, "light", 1), 100);
    const first = [];
    for (let i = 0; i < 30; i++) {
      clock.ms += 50; // the decay scales both tenants alike: the split stays 2:1
      first.push(w.dispatch()?.ticket ?? "");
    }
    expect(first.filter((t) => t.startsWith("h"))).toHaveLength(20);
  });

  it("service decays: twenty dispatches a minute ago (tau 1 s) weigh less than one just now", () => {
    const { q, clock } = attainedQueue(1000);
    for (let i = 0; i < 20; i++) q.offer(entry(`a${i}`, "a"), 100);
    for (let i = 0; i < 20; i++) q.dispatch();
    clock.ms += 1000;
    q.offer(entry("a20", "a"), 100);
    q.offer(entry("b0", "b"), 100);
    expect(q.peek()?.ticket).toBe("b0"); // a second after its 20 dispatches, a is still ahead in service
    clock.ms += 60_000;
    q.remove("b0");
    q.offer(entry("b1", "b"), 100);
    q.offer(entry("b2", "b"), 100);
    // A minute later a's twenty have decayed to almost nothing (b, never served, still has less)...
    expect(q.dispatch()?.ticket).toBe("b1");
    // ...and one dispatch just now puts b above a's twenty of a minute ago.
    expect(drain(q)).toEqual(["a20", "b2"]);
  });

  it("one tenant alone is FIFO whatever the clock does", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 5000 })), { maxLength: 200 }), (ops) => {
        const { q, clock } = attainedQueue();
        const expected: string[] = [];
        let n = 0;
        for (const [isOffer, stepMs] of ops) {
          clock.ms += stepMs;
          if (isOffer) {
            const ticket = `t${n++}`;
            q.offer(entry(ticket, "only"), 1000);
            expected.push(ticket);
          } else expect(q.dispatch()?.ticket).toBe(expected.shift());
        }
      }),
      propertyRuns(100, 20261207),
    );
  });

  it("full: the tenant whose newest request this order would dispatch last is pushed out (recent service counts)", () => {
    const { q, clock } = attainedQueue();
    for (let i = 0; i < 10; i++) q.offer(entry(`a${i}`, "a"), 100);
    for (let i = 0; i < 8; i++) {
      clock.ms += 100;
      q.dispatch();
    }
    for (let i = 0; i < 3; i++) q.offer(entry(`b${i}`, "b"), 5);
    // a: 2 waiting but ~8 recent dispatches; b: 3 waiting, none served. Backlog alone would push out b's newest.
    const c = q.offer(entry("c0", "c"), 5);
    expect(c.kind === "queued" && c.displaced?.ticket).toBe("a9");
    // b's fourth (load 4) still goes before a's last (load ~8 with one waiting); b's fifth would be dispatched
    // after everything waiting (a has nothing left to lose), so it is refused itself.
    const b3 = q.offer(entry("b3", "b"), 5);
    expect(b3.kind === "queued" && b3.displaced?.ticket).toBe("a8");
    expect(q.offer(entry("b4", "b"), 5)).toEqual({ kind: "refused" });
  });

  it("aheadOf follows the order: a light tenant beside a recently served heavy one waits behind little", () => {
    const { q, clock } = attainedQueue();
    for (let i = 0; i < 12; i++) q.offer(entry(`a${i}`, "a"), 100);
    for (let i = 0; i < 6; i++) {
      clock.ms += 100;
      q.dispatch();
    }
    expect(q.aheadOf("b", 1, "interactive")).toBe(0);
    expect(q.aheadOf("a", 1, "interactive")).toBe(6);
    expect(q.aheadOf("z", 1, "batch")).toBe(6);
  });

  it("batch still waits for every interactive request, whatever their services", () => {
    const { q, clock } = attainedQueue();
    for (let i = 0; i < 5; i++) q.offer(entry(`i${i}`, "i"), 100);
    q.offer(entry("x0", "x", 1, "batch"), 100);
    clock.ms += 100;
    expect(drain(q)).toEqual(["i0", "i1", "i2", "i3", "i4", "x0"]);
  });

  it("needs a clock", () => {
    expect(() => new FairQueue({ ordering: "least_attained" })).toThrow(/clock/);
  });
});
