import { describe, expect, it } from "vitest";
import {
  checkSchedulerInvariants,
  formatRetractionLine,
  OUT_OF_MEMORY_ABORT_MESSAGE,
  Scheduler,
} from "../../../src/scheduler/index.js";
import { prompt, step } from "./drive.js";

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
