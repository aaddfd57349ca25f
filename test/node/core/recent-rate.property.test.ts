import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RecentRate } from "../../../src/core/recent-rate";
import { propertyRuns } from "../../support/property-runs";

/**
 * `RecentRate` (the fresh-arrival and offered-attempt rates the router reads), driven by arbitrary operation
 * sequences on a clock the test moves (steps of every size, the clock standing still, steps landing exactly on - and
 * 1 ms either side of - every second boundary and window edge, and jumps far ahead), against a model written from
 * its JSDoc: the plain list of event instants, recomputed from scratch at every query. `rate(now)` is the number of
 * events whose second (floor(ms / 1000)) lies in the `windowS` whole seconds before the current one, over `windowS`;
 * the current second is the latest one the clock has reached (an event in it is left out until it is over). The
 * clock never goes back here (the JSDoc says nothing of a clock going back). The router's other small memories
 * (per-second counts, refusals, hinted retries, the standing queue) have theirs in router-memories.property.test.ts.
 */

const runs = propertyRuns(200, 20261205);

/** Just before, exactly at, or just after an instant. */
const edgeDelta = fc.constantFrom(-1, 0, 1);
/** A start instant: around 0 (seconds before it are negative), or a wall clock's milliseconds (`Date.now()` sized). */
const startMs = fc.oneof(fc.integer({ min: -5_000, max: 5_000 }), fc.integer({ min: 1_700_000_000_000, max: 1.8e12 }));
const FAR_S = 1_000_000;
const second = (ms: number) => Math.floor(ms / 1000);

describe("RecentRate (events per second over the whole seconds before the current one)", () => {
  type Op =
    | { kind: "add"; n: number; query: boolean }
    | { kind: "wait"; ms: number; query: boolean }
    /** To the start of the second `ahead` seconds after the current one (0: this one's: the clock stands), ± delta. */
    | { kind: "boundary"; ahead: number; delta: number; query: boolean }
    /** To the instant an event counted enters the window (its second ends) or leaves it (`windowS` later), ± delta. */
    | { kind: "edge"; leave: boolean; pick: number; delta: number; query: boolean };

  const query = fc.boolean();
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({ kind: fc.constant("add" as const), n: fc.integer({ min: 1, max: 4 }), query }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("wait" as const),
        ms: fc.oneof(fc.constantFrom(0, 0, 1, 999, 1_000, 1_001), fc.integer({ min: 0, max: 4_000 })),
        query,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("boundary" as const),
        // 0, 1, 2 seconds; and, given windowS = w: w, w + 1 (the whole ring), w + 2, and far ahead.
        ahead: fc.integer({ min: 0, max: 6 }),
        delta: edgeDelta,
        query,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("edge" as const),
        leave: fc.boolean(),
        pick: fc.nat(),
        delta: edgeDelta,
        query,
      }),
    },
  );

  function run(ops: readonly Op[], windowS: number, start: number) {
    const rate = new RecentRate(windowS);
    let now = start;
    // The model: every call's instant (the clock it read), and the instants of the events added.
    const clock: number[] = [];
    const events: number[] = [];
    const violations: string[] = [];
    const fail = (what: string) => violations.push(`t=${now}: ${what}`);
    const expected = () => {
      const current = Math.max(...clock.map(second));
      const inWindow = events.filter((t) => second(t) >= current - windowS && second(t) < current).length;
      return inWindow / windowS;
    };
    const ask = () => {
      clock.push(now);
      const read = rate.rate(now);
      const model = expected();
      if (read !== model) fail(`rate ${read}, expected ${model} (events ${events.join(",")})`);
    };
    // The clock never goes back: an instant behind it leaves it standing.
    const moveTo = (at: number) => {
      now = Math.max(now, at);
    };
    for (const o of ops) {
      if (o.kind === "add") {
        for (let i = 0; i < o.n; i++) {
          rate.add(now);
          clock.push(now);
          events.push(now);
        }
      } else if (o.kind === "wait") moveTo(now + o.ms);
      else if (o.kind === "boundary") {
        const ahead = [0, 1, 2, windowS, windowS + 1, windowS + 2, FAR_S][o.ahead] as number;
        moveTo((second(now) + ahead) * 1000 + o.delta);
      } else {
        const picked = events[o.pick % Math.max(1, events.length)];
        if (picked !== undefined) moveTo((second(picked) + 1 + (o.leave ? windowS : 0)) * 1000 + o.delta);
      }
      if (o.query) ask();
      if (violations.length > 0) break;
    }
    ask();
    return violations;
  }

  it("reads exactly the events of the window's whole seconds over the window", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 5, maxLength: 100, size: "max" }),
        fc.integer({ min: 1, max: 6 }),
        startMs,
        (ops, windowS, start) => {
          expect(run(ops, windowS, start)).toEqual([]);
        },
      ),
      runs,
    );
  });

  it("reads as its JSDoc example says", () => {
    const offered = new RecentRate(3);
    offered.add(1_000);
    offered.add(1_500);
    offered.add(2_200);
    expect(offered.rate(3_500)).toBe(1);
    expect(offered.rate(4_100)).toBe(1);
  });

  it("counts seconds before 0 like any other (a clock near its origin): one event at -0.5 s, read at 1.5 s", () => {
    const rate = new RecentRate(3);
    rate.add(-500);
    expect(rate.rate(-500)).toBe(0); // its second is not over
    expect(rate.rate(1_500)).toBeCloseTo(1 / 3, 12);
  });
});
