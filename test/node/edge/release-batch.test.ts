import { describe, expect, it } from "vitest";
import { acquireSlot } from "../../../src/edge/acquire-slot";
import { ReleaseBatch, type ReleasedSlot, type SlotSink } from "../../../src/edge/release-batch";

/** A router whose `releaseAll` calls stay in flight until the test lets them answer (or fail). */
function heldSink() {
  const calls: Array<{ released: ReleasedSlot[]; answer: () => void; fail: () => void }> = [];
  const sink: SlotSink = {
    releaseAll: (released) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ released: [...released], answer: resolve, fail: () => reject(new Error("reset")) });
      }),
  };
  return { calls, sinkOf: () => sink };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("ReleaseBatch", () => {
  it("sends a release at once when none is in flight, and batches those that come while one is", async () => {
    const batch = new ReleaseBatch();
    const { calls, sinkOf } = heldSink();
    const first = batch.release("m#0", ["a", false], sinkOf);
    expect(calls.map((c) => c.released)).toEqual([[["a", false]]]);
    await batch.release("m#0", ["b", true], sinkOf); // settles at once: the first sender carries it
    await batch.release("m#0", ["c", false], sinkOf);
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
    expect(batch.pendingFor("m#0")).toBe(0);
  });

  it("keeps routers apart", () => {
    const batch = new ReleaseBatch();
    const { calls, sinkOf } = heldSink();
    batch.release("m#0", ["a", false], sinkOf);
    batch.release("m#1", ["b", false], sinkOf);
    expect(calls.map((c) => c.released)).toEqual([[["a", false]], [["b", false]]]);
  });

  it("an acquire carries what waits, and a failed acquire hands it back to be sent again", async () => {
    const batch = new ReleaseBatch();
    const { calls, sinkOf } = heldSink();
    batch.release("m#0", ["a", false], sinkOf);
    batch.release("m#0", ["b", false], sinkOf);
    const carriedBy: ReleasedSlot[][] = [];
    const outcome = await acquireSlot(
      () => ({
        acquire: async (_d, _s, _t, _o, released = []) => {
          carriedBy.push([...released]);
          throw new Error("connection reset");
        },
      }),
      { deployment: "m", shard: 0, ticket: "t" },
      Date.now,
      { take: () => batch.takeFor("m#0"), failed: (released) => void batch.putBack("m#0", released, sinkOf) },
    );
    expect(outcome.kind).toBe("unavailable");
    // Each ask carried "b"; the failure handed it back to wait for the sender, so the retry carried it again.
    expect(carriedBy).toEqual([[["b", false]], [["b", false]]]);
    calls[0]?.answer();
    await flush();
    expect(calls.map((c) => c.released)).toEqual([[["a", false]], [["b", false]]]);
  });

  it("a sender that failed goes on with the next batch, and gives up its role after a bounded number of rounds", async () => {
    const batch = new ReleaseBatch();
    const { calls, sinkOf } = heldSink();
    const first = batch.release("m#0", ["r0", false], sinkOf);
    for (let round = 1; round <= 8; round++) {
      batch.release("m#0", [`r${round}`, false], sinkOf);
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
    expect(batch.pendingFor("m#0")).toBe(0);
  });
});
