import { describe, expect, it } from "vitest";
import {
  formatAbortLine,
  formatDecodeBatchLine,
  formatEventLine,
  formatPrefillBatchLine,
  formatRetractionLine,
  OUT_OF_MEMORY_ABORT_MESSAGE,
  pythonFixed,
  Scheduler,
} from "../../../src/scheduler/index.js";
import { prompt, step } from "./drive.js";

describe("SGLang's log lines", () => {
  it("prefill line, as in the spec", () => {
    expect(
      formatPrefillBatchLine({
        type: "prefill",
        now: 0,
        newSeq: 4,
        newToken: 896,
        cachedToken: 0,
        tokenUsage: 0.28,
        runningReq: 1,
        queueReq: 11,
        pendingToken: 2808,
        inputThroughput: 3889.6,
      }),
    ).toBe(
      "Prefill batch, #new-seq: 4, #new-token: 896, #cached-token: 0, token usage: 0.28, #running-req: 1, #queue-req: 11, #pending-token: 2808, cuda graph: False, input throughput (token/s): 3889.60",
    );
  });

  it("decode line, as in the spec (token usage = 1517 / 4096)", () => {
    const line = formatDecodeBatchLine({
      type: "decode",
      now: 0,
      runningReq: 5,
      token: 1517,
      tokenUsage: 1517 / 4096,
      genThroughput: 170.33,
      queueReq: 11,
    });
    expect(line).toBe(
      "Decode batch, #running-req: 5, #token: 1517, token usage: 0.37, cuda graph: False, gen throughput (token/s): 170.33, #queue-req: 11",
    );
  });

  it("retraction and abort lines", () => {
    const retraction = {
      type: "retraction",
      now: 0,
      retractedIds: ["a", "b"],
      inputTokens: 0,
      outputTokens: 0,
      oldRatio: 0.5,
      newRatio: 0.123456,
    } as const;
    expect(formatRetractionLine(retraction)).toBe(
      "KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.5000 -> 0.1235",
    );
    const abort = { type: "abort", now: 0, id: "r7", status: 500, message: OUT_OF_MEMORY_ABORT_MESSAGE } as const;
    expect(formatAbortLine(abort)).toBe(
      "Abort request r7, status: 500, message: Out of memory even after retracting all other requests in the decode batch. Aborting the last request.",
    );
    expect(formatEventLine(retraction)).toBe(formatRetractionLine(retraction));
  });

  it("formats floats as Python does: exact ties round half to even", () => {
    expect(pythonFixed(0.125, 2)).toBe("0.12");
    expect(pythonFixed(0.375, 2)).toBe("0.38");
    expect(pythonFixed(512 / 4096, 2)).toBe("0.12");
    expect(pythonFixed(0.03125, 4)).toBe("0.0312");
    expect(pythonFixed(0.145, 2)).toBe("0.14"); // 0.145 is below the tie in binary, as in Python
    expect(pythonFixed(2.5, 0)).toBe("2");
    expect(pythonFixed(0, 2)).toBe("0.00");
  });

  it("every float field of every line is formatted as SGLang's f-strings do: exact ties round half to even", () => {
    // 512 / 4096 = 0.125 and 0.03125 are exact in binary: Python prints 0.12 and 0.0312, toFixed 0.13 and 0.0313.
    const prefill = formatPrefillBatchLine({
      type: "prefill",
      now: 0,
      newSeq: 1,
      newToken: 1,
      cachedToken: 0,
      tokenUsage: 512 / 4096,
      runningReq: 0,
      queueReq: 0,
      pendingToken: 0,
      inputThroughput: 0.125,
    });
    expect(prefill).toContain("token usage: 0.12,");
    expect(prefill).toMatch(/input throughput \(token\/s\): 0\.12$/);
    const decode = formatDecodeBatchLine({
      type: "decode",
      now: 0,
      runningReq: 1,
      token: 512,
      tokenUsage: 512 / 4096,
      genThroughput: 2.125,
      queueReq: 0,
    });
    expect(decode).toContain("token usage: 0.12,");
    expect(decode).toContain("gen throughput (token/s): 2.12,");
    const retraction = formatRetractionLine({
      type: "retraction",
      now: 0,
      retractedIds: ["a"],
      inputTokens: 0,
      outputTokens: 0,
      oldRatio: 0.03125,
      newRatio: 0.15625,
    });
    expect(retraction).toContain("#new_token_ratio: 0.0312 -> 0.1562");
  });

  it("the scheduler reports a prefill event per batch once it ran, and decode events every decodeLogInterval steps", () => {
    const s = new Scheduler({ maxTotalTokens: 4096, decodeLogInterval: 40 });
    for (let i = 0; i < 6; i++)
      s.submit({ id: `r${i}`, promptTokenIds: prompt(256, i * 1000), maxNewTokens: 512, ignoreEos: true });
    const first = s.nextBatch(0);
    expect(first.events).toEqual([]);
    expect(s.completeBatch({ tokenIds: [1, 1, 1, 1, 1], now: 0.4 }).events).toEqual([
      {
        type: "prefill",
        now: 0.4,
        newSeq: 5,
        newToken: 1280,
        cachedToken: 0,
        tokenUsage: 1280 / 4096,
        runningReq: 0,
        queueReq: 1,
        pendingToken: 256,
        inputThroughput: 1280 / 0.4,
      },
    ]);
    const decodeEvents = [];
    for (let t = 1; t <= 80; t++) decodeEvents.push(...step(s, t * 0.025).batch.events);
    expect(decodeEvents.map((e) => e.type)).toEqual(["decode", "decode"]);
    const e = decodeEvents[1];
    if (e?.type !== "decode") throw new Error("unreachable");
    // 40 steps x 5 tokens over 40 x 25 ms; 5 x (256 + 80) slots in use.
    expect(e.genThroughput).toBeCloseTo(200, 6);
    expect(formatDecodeBatchLine(e)).toBe(
      "Decode batch, #running-req: 5, #token: 1680, token usage: 0.41, cuda graph: False, gen throughput (token/s): 200.00, #queue-req: 1",
    );
  });
});
