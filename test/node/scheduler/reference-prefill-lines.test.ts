import { describe, expect, it } from "vitest";
import { formatPrefillBatchLine, type PrefillBatchEvent, Scheduler } from "../../../src/scheduler/index.js";
import { itemsOf, prompt, step } from "./drive.js";

// The reference run's first two prefill lines (SGLang, pool 4096, bench_serving at concurrency 16):
const LINE_1 =
  "Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 255, token usage: 0.06, #running-req: 0, #queue-req: 15, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.80";
const LINE_2 =
  "Prefill batch, #new-seq: 4, #new-token: 896, #cached-token: 0, token usage: 0.28, #running-req: 1, #queue-req: 11, #pending-token: 2808, cuda graph: False, input throughput (token/s): 3889.60";

/** Run the in-flight prefill batch to completion at `now` and return its (only) event. */
function finishPrefill(s: Scheduler, batch: ReturnType<Scheduler["nextBatch"]>, now: number): PrefillBatchEvent {
  const done = s.completeBatch({ tokenIds: itemsOf(batch).map(() => 7), now });
  const [event] = done.events;
  if (event?.type !== "prefill") throw new Error("a prefill batch reports one prefill event");
  return event;
}

describe("the reference run's prefill lines, from its situation", () => {
  it("reproduces both lines: usage after the batch, throughput over the batch's time, SGLang's #pending-token", () => {
    const s = new Scheduler({ maxTotalTokens: 4096 });
    const first = prompt(256, 0);
    // bench_serving's warm-up: the first prompt with min(output_len, 32) tokens; its KV stays in the prefix cache.
    s.submit({ id: "warmup", promptTokenIds: first, maxNewTokens: 32, ignoreEos: true });
    let t = 0;
    const warm = s.nextBatch(t);
    t += 0.07;
    finishPrefill(s, warm, t); // the warm-up's own prefill line: the 1.25 s below are counted from it
    const warmupLineAt = t;
    while (s.get("warmup") !== undefined) {
      t += 0.02;
      step(s, t);
    }
    expect(s.state()).toMatchObject({ running: 0, usedTokens: 0 }); // all of it cached, all evictable

    // The benchmark's first request repeats the warm-up's prompt: 255 tokens come from the cache (the match
    // stops one short of the prompt, as SGLang's does, so that the last position is computed).
    s.submit({ id: "r0", promptTokenIds: first, maxNewTokens: 512, ignoreEos: true });
    const b1 = s.nextBatch(warmupLineAt + 1.2);
    // The other 15 arrive while it runs. The reference run's lines only add up with prompts of 896 tokens for
    // the next four and 2808 for the eleven after them (bench_serving's random dataset sends text that the server
    // tokenizes again, so lengths come out near, not at, 256): 4 x 224, then 8 x 255 and 3 x 256.
    const lengths = [224, 224, 224, 224, 255, 255, 255, 255, 255, 255, 255, 255, 256, 256, 256];
    lengths.forEach((n, i) => {
      s.submit({ id: `r${i + 1}`, promptTokenIds: prompt(n, 10_000 * (i + 1)), maxNewTokens: 512, ignoreEos: true });
    });
    const line1 = finishPrefill(s, b1, warmupLineAt + 1.25); // 1 token over 1.25 s since the last prefill line
    expect(formatPrefillBatchLine(line1)).toBe(LINE_1);

    // Back to back: admission takes four (r0 reserves 511, each newcomer 224 + 512; a fifth would need 255 + 512
    // of the 385 left) and the line comes when their prefill has run.
    const b2 = s.nextBatch(warmupLineAt + 1.25);
    expect(itemsOf(b2).map((r) => r.id)).toEqual(["r1", "r2", "r3", "r4"]);
    const line2 = finishPrefill(s, b2, warmupLineAt + 1.25 + 896 / 3889.6);
    expect(formatPrefillBatchLine(line2)).toBe(LINE_2);
    // Each value, by its definition:
    expect(line2.tokenUsage).toBe((256 + 896) / 4096); // r0's 256 slots and the batch just admitted
    expect(line2.pendingToken).toBe(8 * 255 + 3 * 256); // sum of the waiting requests' seqlen, not 11 x 256
    expect(line2.inputThroughput).toBeCloseTo(3889.6, 6); // 896 tokens over the prefill's 0.2304 s
  });

  it("#pending-token counts a waiting request's cached prefix and its output so far, and a chunk's remainder", () => {
    const s = new Scheduler({ maxTotalTokens: 10_000, chunkedPrefillSize: 64 });
    const shared = prompt(60, 0);
    s.submit({ id: "a", promptTokenIds: shared, maxNewTokens: 1 });
    step(s, 0); // a ends: its 60 tokens are cached
    s.submit({ id: "long", promptTokenIds: prompt(150, 5000), maxNewTokens: 4 });
    s.submit({ id: "hit", promptTokenIds: [...shared, 1, 2], maxNewTokens: 4 });
    const b = s.nextBatch(1); // "long" is chunked: 64 now, 86 left; "hit" waits behind it
    expect(itemsOf(b).map((r) => r.id)).toEqual(["long"]);
    const e = s.completeBatch({ tokenIds: [7], now: 2 }).events[0];
    // 86 left of the chunked prompt + all 62 of "hit" (its 60 cached tokens count: SGLang sums seqlen); the
    // throughput is over the 2 s since "a"'s prefill line.
    expect(e).toMatchObject({ type: "prefill", newToken: 64, pendingToken: 86 + 62, inputThroughput: 64 / 2 });
  });

  it("a prefill line comes from completeBatch, not nextBatch, and is stamped with the batch's end", () => {
    const s = new Scheduler({ maxTotalTokens: 4096 });
    s.submit({ id: "x", promptTokenIds: prompt(100, 0), maxNewTokens: 8 });
    const b = s.nextBatch(10);
    expect(b.events).toEqual([]);
    const e = s.completeBatch({ tokenIds: [7], now: 10.5 }).events[0];
    // First line: the gap runs from the scheduler's first step (SGLang: from its start).
    expect(e).toMatchObject({ type: "prefill", now: 10.5, tokenUsage: 100 / 4096, inputThroughput: 100 / 0.5 });
    // Without a completion time the line is stamped with the batch's start.
    s.submit({ id: "y", promptTokenIds: prompt(50, 500), maxNewTokens: 8 });
    s.nextBatch(11);
    expect(s.completeBatch({ tokenIds: [7] }).events[0]).toMatchObject({ now: 11, inputThroughput: 50 / 0.5 });
  });
});
