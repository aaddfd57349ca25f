import { afterEach, describe, expect, it, vi } from "vitest";
import { acquireSlot } from "../../../src/edge/acquire-slot";
import {
  type CarriedSlots,
  type HandedOffSlot,
  type HandoffLeave,
  PARK_MS,
  REPORT_BATCH,
  REPORT_MAX_AGE_MS,
  type ReleasedSlot,
  SENDER_LOST_MS,
  SlotBatch,
  type SlotSink,
  SWEEP_ROUNDS_MAX,
} from "../../../src/edge/slot-batch";

/** A router whose `releaseAll` calls stay in flight until the test lets them answer (or fail). */
function heldSink() {
  const calls: Array<{
    released: ReleasedSlot[];
    handedOff: HandedOffSlot[];
    answer: (leave?: HandoffLeave) => void;
    fail: () => void;
  }> = [];
  const sink: SlotSink = {
    releaseAll: (released, handedOff = []) =>
      new Promise<HandoffLeave | undefined>((resolve, reject) => {
        calls.push({
          released: [...released],
          handedOff: [...handedOff],
          answer: (leave) => resolve(leave ?? {}),
          fail: () => reject(new Error("reset")),
        });
      }),
  };
  return { calls, sinkOf: () => sink };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
const slot = (ticket: string, replica = "r1") => ({ ticket, replica });

afterEach(() => {
  vi.useRealTimers();
});

describe("SlotBatch: releases", () => {
  it("sends a release at once when none is in flight, and batches those that come while one is", async () => {
    const batch = new SlotBatch();
    const { calls, sinkOf } = heldSink();
    const first = batch.end("m#0", slot("a"), false, sinkOf);
    expect(calls.map((c) => c.released)).toEqual([[["a", false]]]);
    await batch.end("m#0", slot("b"), true, sinkOf); // settles at once: the first sender carries it
    await batch.end("m#0", slot("c"), false, sinkOf);
    expect(calls).toHaveLength(1);
    calls[0]?.answer();
    await flush();
    expect(calls.map((c) => c.released)).toEqual([
      [["a", false]],
      [
        ["b", true],
        ["c", false],
      ],
    ]);
    calls[1]?.answer();
    await first; // the first request's waitUntil ends once nothing waits
    expect(batch.pendingFor("m#0")).toEqual({ released: 0, handedOff: 0, parked: 0 });
  });

  it("keeps routers apart", () => {
    const batch = new SlotBatch();
    const { calls, sinkOf } = heldSink();
    batch.end("m#0", slot("a"), false, sinkOf);
    batch.end("m#1", slot("b"), false, sinkOf);
    expect(calls.map((c) => c.released)).toEqual([[["a", false]], [["b", false]]]);
  });

  it("an acquire carries what waits, and a failed acquire hands it back to be sent again", async () => {
    const batch = new SlotBatch();
    const { calls, sinkOf } = heldSink();
    batch.end("m#0", slot("a"), false, sinkOf);
    batch.end("m#0", slot("b"), false, sinkOf);
    const carriedBy: CarriedSlots[] = [];
    const outcome = await acquireSlot(
      () => ({
        acquire: async (_d, _s, _t, _o, carried) => {
          carriedBy.push(structuredClone(carried ?? { released: [], handedOff: [] }));
          throw new Error("connection reset");
        },
      }),
      { deployment: "m", shard: 0, ticket: "t" },
      Date.now,
      { take: () => batch.takeFor("m#0"), failed: (carried) => void batch.putBack("m#0", carried, sinkOf) },
    );
    expect(outcome.kind).toBe("unavailable");
    // Each ask carried "b"; the failure handed it back to wait for the sender, so the retry carried it again.
    expect(carriedBy.map((c) => c.released)).toEqual([[["b", false]], [["b", false]]]);
    calls[0]?.answer();
    await flush();
    expect(calls.map((c) => c.released)).toEqual([[["a", false]], [["b", false]]]);
  });

  it("a sender that failed goes on with the next batch, and gives up its role after a bounded number of rounds", async () => {
    const batch = new SlotBatch();
    const { calls, sinkOf } = heldSink();
    const first = batch.end("m#0", slot("r0"), false, sinkOf);
    for (let round = 1; round <= 8; round++) {
      batch.end("m#0", slot(`r${round}`), false, sinkOf);
      calls[round - 1]?.fail();
      await flush();
    }
    // Eight rounds sent (r0 .. r7): the eighth gave up the role before its call, so r8 started its own sender.
    expect(calls.map((c) => c.released.map(([t]) => t))).toEqual([
      ["r0"],
      ["r1"],
      ["r2"],
      ["r3"],
      ["r4"],
      ["r5"],
      ["r6"],
      ["r7"],
      ["r8"],
    ]);
    await first;
    calls[8]?.answer();
    await flush();
    expect(batch.pendingFor("m#0").released).toBe(0);
  });
});

describe("SlotBatch: a sender whose call never answers", () => {
  // workerd never settles a call whose request's waitUntil has ended (30 s after its response): the sender waiting
  // on it would keep the role for the isolate's life, and every later release and hand-off report pile up unsent.
  it("is taken for lost after SENDER_LOST_MS: the next release sends all that waits, and the lost one stops", async () => {
    let now = 0;
    const batch = new SlotBatch(() => now);
    const { calls, sinkOf } = heldSink();
    batch.end("m#0", slot("lost"), false, sinkOf); // calls[0]: never answered
    for (let i = 0; i < 100; i++) {
      now += 1;
      batch.end("m#0", slot(`r${i}`), false, sinkOf);
      batch.handedOff("m#0", [`h${i}`, undefined, 1, "interactive"], sinkOf);
    }
    expect(calls).toHaveLength(1);
    expect(batch.pendingFor("m#0")).toMatchObject({ released: 100, handedOff: 100 });
    now = SENDER_LOST_MS;
    const keep = batch.end("m#0", slot("z"), false, sinkOf);
    expect(keep).toBeDefined();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.released).toHaveLength(101);
    expect(calls[1]?.handedOff).toHaveLength(100);
    expect(batch.pendingFor("m#0")).toMatchObject({ released: 0, handedOff: 0 });
    // The lost call answers after all: its sender does not take the role back (no call of its own follows).
    batch.end("m#0", slot("y"), false, sinkOf);
    calls[0]?.answer();
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]?.answer();
    await flush();
    // "y" waited for the sender that holds the role, which sends it next.
    expect(calls.map((c) => c.released.map(([t]) => t).at(-1))).toEqual(["lost", "z", "y"]);
    calls[2]?.answer();
    await keep;
    expect(batch.pendingFor("m#0")).toMatchObject({ released: 0, handedOff: 0 });
  });
});

describe("SlotBatch: hand-offs (slotHandoffMs)", () => {
  it("without the router's leave a slot is released, and none is there to take", () => {
    const batch = new SlotBatch();
    const { calls, sinkOf } = heldSink();
    batch.end("m#0", slot("a"), false, sinkOf);
    expect(batch.take("m#0")).toBeUndefined();
    expect(calls.map((c) => c.released)).toEqual([[["a", false]]]);
  });

  it("with it, a finished request's slot is parked and taken by the next request, which the router hears of", async () => {
    vi.useFakeTimers();
    let now = 0;
    const batch = new SlotBatch(() => now);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    const sweep = batch.end("m#0", slot("a", "r2"), false, sinkOf);
    expect(calls).toHaveLength(0);
    expect(batch.take("m#0")).toEqual({ ticket: "a", replica: "r2" });
    expect(batch.take("m#0")).toBeUndefined();
    // The report waits for a call that goes anyway: here the sweep that finds nothing parked any more.
    batch.handedOff("m#0", ["a", "beta", 1, "interactive"], sinkOf);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(PARK_MS);
    expect(calls.map((c) => c.handedOff)).toEqual([[["a", "beta", 1, "interactive"]]]);
    // The router's answer renews the leave; one without it ends it.
    now = 900;
    calls[0]?.answer({ handoffMs: 1000 });
    await sweep;
    now = 1800;
    batch.end("m#0", slot("a", "r2"), false, sinkOf);
    expect(batch.take("m#0")).toEqual({ ticket: "a", replica: "r2" });
    batch.heard("m#0", {});
    batch.end("m#0", slot("a", "r2"), false, sinkOf);
    expect(batch.take("m#0")).toBeUndefined();
  });

  it("hand-off reports go with the next release, or on their own once REPORT_BATCH wait", () => {
    const batch = new SlotBatch(() => 0);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    batch.handedOff("m#0", ["a", undefined, 1, "interactive"], sinkOf);
    batch.end("m#0", slot("b"), true, sinkOf);
    expect(calls.map((c) => [c.released, c.handedOff])).toEqual([
      [[["b", true]], [["a", undefined, 1, "interactive"]]],
    ]);
    calls[0]?.answer({ handoffMs: 1000 });
    const other = new SlotBatch(() => 0);
    const second = heldSink();
    for (let i = 0; i < REPORT_BATCH - 1; i++) other.handedOff("m#0", [`t${i}`, undefined, 1, "batch"], second.sinkOf);
    expect(second.calls).toHaveLength(0);
    other.handedOff("m#0", ["last", undefined, 1, "batch"], second.sinkOf);
    expect(second.calls.map((c) => c.handedOff.length)).toEqual([REPORT_BATCH]);
  });

  it("a report older than REPORT_MAX_AGE_MS is sent with the next one", () => {
    let now = 0;
    const batch = new SlotBatch(() => now);
    const { calls, sinkOf } = heldSink();
    batch.handedOff("m#0", ["a", undefined, 1, "interactive"], sinkOf);
    now = REPORT_MAX_AGE_MS;
    batch.handedOff("m#0", ["b", undefined, 1, "interactive"], sinkOf);
    expect(calls.map((c) => c.handedOff.map(([t]) => t))).toEqual([["a", "b"]]);
  });

  it("one sweep ends after SWEEP_ROUNDS_MAX rounds, giving back what is parked; the next end starts another", async () => {
    vi.useFakeTimers();
    let now = 0;
    const batch = new SlotBatch(() => now);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 60_000 });
    const first = batch.end("m#0", slot("a"), false, sinkOf);
    expect(first).toBeDefined();
    // Traffic: the slot is taken and parked again every half sweep, so it is never stale.
    for (let t = 0; t < SWEEP_ROUNDS_MAX * PARK_MS - PARK_MS / 2; t += PARK_MS / 2) {
      now += PARK_MS / 2;
      const taken = batch.take("m#0");
      if (taken) expect(batch.end("m#0", taken, false, sinkOf)).toBeUndefined(); // the running sweep covers it
      await vi.advanceTimersByTimeAsync(PARK_MS / 2);
    }
    expect(calls).toHaveLength(0);
    now += PARK_MS / 2;
    await vi.advanceTimersByTimeAsync(PARK_MS / 2);
    expect(calls.map((c) => c.released)).toEqual([[["a", false]]]);
    calls[0]?.answer({ handoffMs: 60_000 });
    await first;
    expect(batch.end("m#0", slot("b"), false, sinkOf)).toBeDefined(); // a new sweep
  });

  it("the leave ends when a call fails", async () => {
    const batch = new SlotBatch(() => 0);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    batch.end("m#0", slot("x", "r9"), true, sinkOf);
    calls[0]?.fail();
    await flush();
    batch.end("m#0", slot("b"), false, sinkOf);
    expect(batch.take("m#0")).toBeUndefined();
    expect(calls.map((c) => c.released)).toEqual([[["x", true]], [["b", false]]]);
  });

  it("a replica that failed takes its parked slots with it: they are released, not handed on", () => {
    const batch = new SlotBatch(() => 0);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    batch.end("m#0", slot("a", "r1"), false, sinkOf);
    batch.end("m#0", slot("b", "r2"), false, sinkOf);
    batch.end("m#0", slot("c", "r1"), true, sinkOf);
    expect(calls.map((c) => c.released)).toEqual([
      [
        ["a", false],
        ["c", true],
      ],
    ]);
    expect(batch.take("m#0")).toEqual({ ticket: "b", replica: "r2" });
  });

  it('a replica that answered 429 itself (released "full") is not handed a request either: its slots go back', () => {
    const batch = new SlotBatch(() => 0);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    batch.end("m#0", slot("a", "r1"), false, sinkOf);
    batch.end("m#0", slot("b", "r2"), false, sinkOf);
    batch.end("m#0", slot("c", "r1"), "full", sinkOf);
    // The parked slot's plain release goes first: it cannot undo the router's "full".
    expect(calls.map((c) => c.released)).toEqual([
      [
        ["a", false],
        ["c", "full"],
      ],
    ]);
    expect(batch.take("m#0")).toEqual({ ticket: "b", replica: "r2" });
    expect(batch.take("m#0")).toBeUndefined();
  });

  it("a failed slot whose request asks again at once rides on that acquire, after its replica's parked slots", () => {
    const batch = new SlotBatch(() => 0);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    batch.end("m#0", slot("a", "r1"), false, sinkOf);
    batch.end("m#0", slot("b", "r2"), false, sinkOf);
    const { carry, keep } = batch.endBeforeRetry("m#0", slot("c", "r1"), true, sinkOf);
    // Nothing goes out on its own (another stub, not ordered before the acquire): all of it is the acquire's to carry.
    expect(keep).toBeUndefined();
    expect(calls).toHaveLength(0);
    expect(carry).toEqual([
      ["a", false],
      ["c", true],
    ]);
    expect(batch.take("m#0")).toEqual({ ticket: "b", replica: "r2" });
    expect(batch.pendingFor("m#0")).toEqual({ released: 0, handedOff: 0, parked: 0 });
  });

  it("a failed slot whose hand-off report still waits goes with the batch instead: the report reaches the router first", () => {
    const batch = new SlotBatch(() => 0);
    const { calls, sinkOf } = heldSink();
    batch.heard("m#0", { handoffMs: 1000 });
    batch.handedOff("m#0", ["c", "beta", 1, "interactive"], sinkOf);
    const { carry, keep } = batch.endBeforeRetry("m#0", slot("c", "r1"), true, sinkOf);
    expect(carry).toEqual([]);
    expect(keep).toBeInstanceOf(Promise);
    expect(calls.map((c) => [c.released, c.handedOff])).toEqual([[[["c", true]], [["c", "beta", 1, "interactive"]]]]);
  });
});
