import { describe, expect, it } from "vitest";
import {
  checkSchedulerInvariants,
  formatRetractionLine,
  OUT_OF_MEMORY_ABORT_MESSAGE,
  Scheduler,
} from "../../../src/scheduler/index.js";
import { completeAll, prompt, step } from "./drive.js";

describe("the seed's measured case: pool 4096, prompts 256, outputs 512, ignore_eos", () => {
  for (const disableRadixCache of [false, true]) {
    it(`admits exactly five and starts the sixth only when the first five finish (radix cache ${disableRadixCache ? "off" : "on"})`, () => {
      const s = new Scheduler({ maxTotalTokens: 4096, disableRadixCache });
      for (let i = 0; i < 32; i++) {
        s.submit({ id: `r${i}`, promptTokenIds: prompt(256, i * 1000), maxNewTokens: 512, ignoreEos: true });
      }
      const first = s.nextBatch(0);
      expect(first.kind).toBe("prefill");
      if (first.kind !== "prefill") return;
      expect(first.entries.map((e) => e.request.id)).toEqual(["r0", "r1", "r2", "r3", "r4"]);
      s.completeBatch({ tokenIds: [1, 1, 1, 1, 1] });
      const endedAt = new Map<string, number>();
      const startedAt = new Map<string, number>(["r0", "r1", "r2", "r3", "r4"].map((id) => [id, 0]));
      let maxRunning = 0;
      for (let t = 1; endedAt.size < 32 && t < 20_000; t++) {
        const { batch, ended } = step(s, t);
        if (batch.kind === "prefill") for (const e of batch.entries) startedAt.set(e.request.id, t);
        for (const e of ended) endedAt.set(e.id, t);
        maxRunning = Math.max(maxRunning, s.state().running);
        expect(batch.events.some((e) => e.type === "retraction")).toBe(false);
      }
      expect(endedAt.size).toBe(32);
      expect(maxRunning).toBe(5);
      const firstWaveEnd = Math.max(...["r0", "r1", "r2", "r3", "r4"].map((id) => endedAt.get(id) as number));
      expect(startedAt.get("r5")).toBeGreaterThan(firstWaveEnd);
      // Waves of five: requests 5..9 start together.
      expect(new Set(["r5", "r6", "r7", "r8", "r9"].map((id) => startedAt.get(id))).size).toBe(1);
      expect(s.state().counters.retractedRequestsTotal).toBe(0);
      expect(s.state().counters.finishedRequestsTotal).toBe(32);
      checkSchedulerInvariants(s);
    });
  }

  it("charges each request 256 + 512 = 768: five reserve 3840 and a sixth would need 4608", () => {
    const s = new Scheduler({ maxTotalTokens: 4096 });
    for (let i = 0; i < 6; i++) {
      s.submit({ id: `r${i}`, promptTokenIds: prompt(256, i * 1000), maxNewTokens: 512, ignoreEos: true });
    }
    const b = s.nextBatch(0);
    expect(b.kind === "prefill" && b.entries.length).toBe(5);
    s.completeBatch({ tokenIds: [1, 1, 1, 1, 1] });
    // Running: 5 x (256 KV + 511 reserved at ratio 1.0) = 3835; 4096 - 3835 = 261 <= 768: the sixth waits.
    expect(s.nextBatch(1).kind).toBe("decode");
  });
});

describe("the new-token ratio", () => {
  it("goes 0.7 -> 0.098 over 600 decode steps, stays at the floor, and resets when idle", () => {
    const s = new Scheduler({ maxTotalTokens: 100_000 });
    s.submit({ id: "a", promptTokenIds: prompt(10, 0), maxNewTokens: 1000 });
    expect(s.state().newTokenRatio).toBe(0.7);
    step(s); // prefill: no decay
    expect(s.state().newTokenRatio).toBe(0.7);
    for (let i = 0; i < 300; i++) step(s);
    expect(s.state().newTokenRatio).toBeCloseTo(0.7 - (300 * (0.7 - 0.098)) / 600, 12);
    for (let i = 0; i < 300; i++) step(s);
    expect(s.state().newTokenRatio).toBeCloseTo(0.098, 12);
    for (let i = 0; i < 50; i++) step(s);
    expect(s.state().newTokenRatio).toBe(0.7 * 0.14);
    s.finish("a");
    expect(s.nextBatch(1).kind).toBe("idle");
    expect(s.state().newTokenRatio).toBe(0.7);
  });

  it("scales its start with conservativeness and caps it at 1", () => {
    expect(new Scheduler({ maxTotalTokens: 100, scheduleConservativeness: 0.5 }).state().newTokenRatio).toBe(0.35);
    expect(new Scheduler({ maxTotalTokens: 100, scheduleConservativeness: 2 }).state().newTokenRatio).toBe(1);
  });
});

describe("retraction", () => {
  /** Pool 100, reserve nothing for running requests (ratio 0), charge new ones min(maxNew, 30). */
  function overloaded() {
    const s = new Scheduler({ maxTotalTokens: 100, scheduleConservativeness: 0, clipMaxNewTokens: 30 });
    s.submit({ id: "A", promptTokenIds: prompt(10, 0), maxNewTokens: 200 });
    s.submit({ id: "B", promptTokenIds: prompt(20, 100), maxNewTokens: 200 });
    const b1 = step(s).batch; // A: 40 < 100, B: 50 < 60
    expect(b1.kind === "prefill" && b1.entries.map((e) => e.request.id)).toEqual(["A", "B"]);
    for (let i = 0; i < 5; i++) expect(step(s).batch.kind).toBe("decode");
    s.submit({ id: "C", promptTokenIds: prompt(5, 200), maxNewTokens: 200 });
    s.submit({ id: "D", promptTokenIds: prompt(8, 300), maxNewTokens: 200 });
    const b2 = step(s).batch; // C: 35 < 60; D: 38 >= 25
    expect(b2.kind === "prefill" && b2.entries.map((e) => e.request.id)).toEqual(["C"]);
    const b3 = step(s).batch; // D: 38 < 55
    expect(b3.kind === "prefill" && b3.entries.map((e) => e.request.id)).toEqual(["D"]);
    return s;
  }

  it("retracts the fewest-output request, longest prompt among equals, and resets the ratio by the formula", () => {
    const s = overloaded();
    let retraction: ReturnType<Scheduler["nextBatch"]> | undefined;
    for (let i = 0; i < 20 && retraction === undefined; i++) {
      const { batch } = step(s);
      if (batch.events.some((e) => e.type === "retraction")) retraction = batch;
      checkSchedulerInvariants(s);
    }
    expect(retraction?.kind).toBe("decode");
    const event = retraction?.events.find((e) => e.type === "retraction");
    if (event?.type !== "retraction") throw new Error("no retraction");
    // Outputs then: A 17, B 17, C 12, D 12 -> D (12, prompt 8) before C (12, prompt 5); one is enough.
    expect(event.retractedIds).toEqual(["D"]);
    expect(event.oldRatio).toBe(0);
    expect(event.newRatio).toBeCloseTo((17 + 17 + 12 + 20 * 3) / (600 + 1), 12);
    expect(s.state().newTokenRatio).toBe(event.newRatio);
    expect(formatRetractionLine(event)).toBe(
      "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.0000 -> 0.1764",
    );
    // D keeps its output and waits again.
    expect(s.get("D")?.status).toBe("waiting");
    expect(s.get("D")?.outputTokenIds.length).toBe(12);
    expect(s.state().counters.retractedRequestsTotal).toBe(1);
    expect(s.state().counters.retractedOutputTokensTotal).toBe(12);
  });

  it("frees a victim's KV at once without caching its output, counts its prompt and output, and re-prefills both", () => {
    // A, B, C (prompts 10, 10, 9: 29 tokens cached and locked) are prefilled together and decode until 2 slots are
    // left for 3. B (outputs equal, the later of the longest prompts) is retracted; A's and C's decode then fits in
    // the 2 free slots, so nothing is evicted: whatever B's KV became is still to be seen.
    const s = new Scheduler({ maxTotalTokens: 100, scheduleConservativeness: 0, clipMaxNewTokens: 5 });
    s.submit({ id: "A", promptTokenIds: prompt(10, 0), maxNewTokens: 50 });
    s.submit({ id: "B", promptTokenIds: prompt(10, 100), maxNewTokens: 50 });
    s.submit({ id: "C", promptTokenIds: prompt(9, 200), maxNewTokens: 50 });
    let retraction: ReturnType<Scheduler["nextBatch"]> | undefined;
    for (let i = 0; i < 100 && retraction === undefined; i++) {
      const batch = s.nextBatch(i);
      if (batch.events.some((e) => e.type === "retraction")) retraction = batch;
      else completeAll(s, batch);
    }
    expect(retraction?.kind).toBe("decode");
    expect(retraction?.events.find((e) => e.type === "retraction")).toMatchObject({
      retractedIds: ["B"],
      inputTokens: 10,
      outputTokens: 24,
    });
    // B's 23 owned slots are free at once (2 + 23, less A's and C's decode slots); only its prompt stays cached,
    // now evictable. Inserting its output in the cache would have left 0 free and 52 cached.
    expect(s.state()).toMatchObject({ freeTokens: 23, evictableTokens: 10, cachedTokens: 29 });
    expect(s.state().counters).toMatchObject({
      retractionsTotal: 1,
      retractedRequestsTotal: 1,
      retractedInputTokensTotal: 10,
      retractedOutputTokensTotal: 24,
    });
    expect(s.get("B")).toMatchObject({ status: "waiting", retractions: 1 });
    expect(s.get("B")?.outputTokenIds).toHaveLength(24);
    // Readmitted, B prefills prompt + output so far (34 tokens; its prompt was evicted meanwhile, A and C grew).
    if (retraction !== undefined) completeAll(s, retraction);
    let back: ReturnType<Scheduler["nextBatch"]> | undefined;
    for (let i = 0; i < 100 && back === undefined; i++) {
      const batch = s.nextBatch(100 + i);
      if (batch.kind === "prefill") back = batch;
      else completeAll(s, batch);
    }
    expect(
      back?.kind === "prefill" && back.entries.map((e) => [e.request.id, e.cachedTokens + e.extendTokens]),
    ).toEqual([["B", 34]]);
    checkSchedulerInvariants(s);
  });

  it("aborts the last request with SGLang's message instead of looping", () => {
    const s = new Scheduler({ maxTotalTokens: 64, clipMaxNewTokens: 8 });
    s.submit({ id: "only", promptTokenIds: prompt(8, 0), maxNewTokens: 100 });
    let steps = 0;
    let last: ReturnType<typeof step> | undefined;
    for (; steps < 200; steps++) {
      last = step(s);
      if (last.ended.length > 0) break;
    }
    // prefill, then 56 decode steps fill the pool; the 58th call finds no slot for the only request.
    expect(steps).toBe(57);
    expect(last?.batch.kind).toBe("idle");
    expect(last?.ended).toEqual([
      {
        id: "only",
        reason: "abort",
        outputTokenIds: expect.any(Array),
        message: OUT_OF_MEMORY_ABORT_MESSAGE,
        status: 500,
      },
    ]);
    expect(last?.batch.events.map((e) => e.type)).toEqual(["retraction", "abort"]);
    expect(s.nextBatch(1).kind).toBe("idle");
    expect(s.state().counters.abortedRequestsTotal).toBe(1);
    checkSchedulerInvariants(s);
  });
});
