import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FairEntry, FairQueue, type FairQueueOptions, type PriorityClass } from "../../../src/core/fair-queue";
import { propertyRuns } from "../../support/property-runs";

/**
 * The router's queue under arbitrary offers, dispatches, removals and time, with every ordering option the router
 * can set, against the plainest model of it: the set of requests waiting. Whatever the order, the queue must hold
 * exactly the requests it accepted and has not let go (its size, `has`, `entries`, each tenant's backlog), hand each
 * out once, name in `peek` the request `dispatch` then takes, let a request of the batch class (or one that yields)
 * go ahead of interactive work only on the turns its options give it, and never exceed the larger of the capacity
 * and the bound it was offered.
 */

type Op =
  | { kind: "wait"; ms: number }
  | {
      kind: "offer";
      tenant: number;
      weight: number;
      batch: boolean;
      yields: boolean;
      capacity: number;
      bound: number;
      /** Queued this long ago (a request re-acquired after a router reset keeps its first arrival). */
      agoMs: number;
    }
  | { kind: "dispatch"; only: number | undefined; peekFirst: boolean }
  | { kind: "remove"; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 6_000 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("offer" as const),
      tenant: fc.integer({ min: 0, max: 3 }),
      weight: fc.constantFrom(1, 2, 0.5),
      batch: fc.boolean(),
      yields: fc.boolean(),
      capacity: fc.integer({ min: 0, max: 8 }),
      bound: fc.integer({ min: 0, max: 10 }),
      agoMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("dispatch" as const),
      only: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
      peekFirst: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }) },
);

/** The options the router may give its queue (src/core/router-core.ts), drawn per run. */
const queueOptions = fc.record({
  ordering: fc.constantFrom("start_time" as const, "least_attained" as const),
  yieldOrder: fc.constantFrom("newest_first" as const, "arrival" as const, "next_horizon" as const),
  freshOrder: fc.constantFrom("arrival" as const, "next_horizon" as const),
  yieldShare: fc.constantFrom(0, 0.25),
  newestShare: fc.constantFrom(0, 0.5, 1),
  yieldFirstUnderMs: fc.constantFrom(undefined, 8_000),
});

/** Runs the ops; returns the violations seen (none expected). */
function run(ops: readonly Op[], drawn: Omit<FairQueueOptions, "clock" | "serviceTimeConstantMs">): string[] {
  let now = 100_000;
  const options: FairQueueOptions = { ...drawn, clock: { now: () => now }, serviceTimeConstantMs: 4_000 };
  const queue = new FairQueue(options);
  const waiting = new Map<string, FairEntry & { cls: PriorityClass }>();
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  let next = 0;
  // Batch work (or an entry that yields) may go ahead of interactive work only on the turns its options give it.
  const jumpsAllowed = (drawn.yieldShare ?? 0) > 0 || drawn.yieldFirstUnderMs !== undefined;
  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "offer") {
      const ticket = `t${next++}`;
      const entry: FairEntry = {
        ticket,
        tenant: `tenant-${o.tenant}`,
        weight: o.weight,
        priority: o.batch ? "batch" : "interactive",
        enqueuedAtMs: now - o.agoMs,
        ...(o.yields ? { yields: true, firstRefusedAtMs: now - o.agoMs - 3_000 } : {}),
      };
      const result = queue.offer(entry, o.capacity, o.bound);
      if (result.kind === "queued") {
        if (result.displaced) {
          if (!waiting.delete(result.displaced.ticket)) fail(`displaced ${result.displaced.ticket}, not waiting`);
          if (result.displaced.ticket === ticket) fail(`${ticket} displaced itself`);
        }
        waiting.set(ticket, { ...entry, cls: o.yields || o.batch ? "batch" : "interactive" });
        // A request let in without pushing one out leaves the queue within the larger of its capacity and bound.
        if (!result.displaced && queue.size > Math.max(o.capacity, o.bound))
          fail(`${queue.size} waiting past capacity ${o.capacity} and bound ${o.bound}`);
      }
    } else if (o.kind === "dispatch") {
      const eligible = o.only === undefined ? undefined : (tenant: string) => tenant === `tenant-${o.only}`;
      const named = o.peekFirst ? queue.peek(eligible) : undefined;
      const taken = queue.dispatch(eligible);
      if (o.peekFirst && named?.ticket !== taken?.ticket)
        fail(`peek named ${named?.ticket}, dispatch took ${taken?.ticket}`);
      const candidates = [...waiting.values()].filter((e) => eligible === undefined || eligible(e.tenant));
      if (taken === undefined) {
        // With an eligibility test, a request the router may not place does not let a lower class by.
        const headClass = [...waiting.values()].some((e) => e.cls === "interactive") ? "interactive" : "batch";
        if (candidates.some((e) => e.cls === headClass)) fail("nothing dispatched while an eligible request waited");
        continue;
      }
      const entry = waiting.get(taken.ticket);
      if (!entry) {
        fail(`dispatched ${taken.ticket}, not waiting`);
        continue;
      }
      if (eligible && !eligible(entry.tenant)) fail(`dispatched ${taken.ticket} of an ineligible tenant`);
      if (!jumpsAllowed && entry.cls === "batch" && candidates.some((e) => e.cls === "interactive"))
        fail(`dispatched batch ${taken.ticket} while interactive work of an eligible tenant waited`);
      waiting.delete(taken.ticket);
    } else if (waiting.size > 0) {
      const ticket = [...waiting.keys()][o.pick % waiting.size] as string;
      if (queue.remove(ticket)?.ticket !== ticket) fail(`remove(${ticket}) missed it`);
      waiting.delete(ticket);
      if (queue.remove(ticket) !== undefined) fail(`${ticket} removed twice`);
    }
    if (queue.size !== waiting.size) fail(`size ${queue.size}, ${waiting.size} waiting`);
    const listed = [...queue.entries()].map((e) => e.ticket).sort();
    const expected = [...waiting.keys()].sort();
    if (JSON.stringify(listed) !== JSON.stringify(expected)) fail(`entries ${listed} against ${expected}`);
    for (const ticket of expected) if (!queue.has(ticket)) fail(`has(${ticket}) false`);
    for (let t = 0; t < 4; t++)
      for (const cls of ["interactive", "batch"] as const) {
        const backlog = [...waiting.values()].filter((e) => e.tenant === `tenant-${t}` && e.cls === cls).length;
        if (queue.backlogOf(`tenant-${t}`, cls) !== backlog)
          fail(`tenant-${t} ${cls} backlog ${queue.backlogOf(`tenant-${t}`, cls)}, ${backlog} waiting`);
      }
  }
  // Drained, every request comes out once.
  const drained = new Set<string>();
  for (let e = queue.dispatch(); e !== undefined; e = queue.dispatch()) {
    if (drained.has(e.ticket) || !waiting.has(e.ticket)) fail(`drained ${e.ticket} again or unknown`);
    drained.add(e.ticket);
  }
  if (drained.size !== waiting.size || queue.size !== 0) fail(`drained ${drained.size} of ${waiting.size}`);
  return violations;
}

describe("the fair queue under arbitrary offers, dispatches and removals", () => {
  it("holds exactly what it accepted, hands each out once, and keeps interactive work first", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 120, size: "max" }), queueOptions, (ops, drawn) => {
        expect(run(ops, drawn)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});
