import { describe, expect, it } from "vitest";
import { createLlamaEngine } from "../../../src/engine/llama/llama-engine";
import type { ControlledEvaluateItem, LlamaContextSequence } from "../../../src/engine/llama/node-llama-cpp";
import type { DecodeBatch, PrefillBatch, RequestView } from "../../../src/scheduler/index";

// The engine's sequence bookkeeping against fake sequences (no native code): evaluation and clearing are
// asynchronous, as in node-llama-cpp, so releases can land in the middle of a step.
function fakeSequence(): LlamaContextSequence & { evaluated: number[] } {
  let cells = 0;
  const evaluated: number[] = [];
  const later = () => new Promise<void>((r) => setTimeout(r, 1));
  return {
    evaluated,
    get nextTokenIndex() {
      return cells;
    },
    contextSize: 1024,
    async controlledEvaluate(input: ControlledEvaluateItem[]) {
      await later();
      for (const item of input) evaluated.push(Array.isArray(item) ? item[0] : item);
      cells += input.length;
      return input.map((_, i) => (i === input.length - 1 ? { next: { token: 100 + cells } } : undefined));
    },
    async evaluateWithoutGeneratingNewTokens(tokens: number[]) {
      await later();
      cells += tokens.length;
    },
    async eraseContextTokenRanges() {},
    async clearHistory() {
      await later();
      cells = 0;
    },
  };
}

const request = (id: string, prompt: number[], output: number[] = []): RequestView => ({
  id,
  promptTokenIds: prompt,
  outputTokenIds: output,
  maxNewTokens: 100,
  ignoreEos: true,
  status: "running",
  retractions: 0,
});
const prefill = (r: RequestView, start = 0): PrefillBatch => ({
  kind: "prefill",
  entries: [
    {
      request: r,
      extendTokens: r.promptTokenIds.length + r.outputTokenIds.length - start,
      startPosition: start,
      cachedTokens: 0,
      lastChunk: true,
    },
  ],
  events: [],
  ended: [],
});
const decode = (...requests: RequestView[]): DecodeBatch => ({ kind: "decode", requests, events: [], ended: [] });

describe("llama engine sequence bookkeeping", () => {
  it("prefills prompt + output, decodes the last sampled token, and frees the sequence on release", async () => {
    const seqs = [fakeSequence(), fakeSequence()];
    const engine = createLlamaEngine({ sequences: seqs, eosTokenId: 2 });
    const r = request("a", [1, 5, 6]);
    const [first] = await engine.prefill(prefill(r));
    expect(engine.kvCells()).toBe(3);
    const after = request("a", [1, 5, 6], [first as number]);
    await engine.decode(decode(after));
    expect(engine.kvCells()).toBe(4);
    expect(seqs[0]?.evaluated).toEqual([1, 5, 6, first]);
    engine.release("a");
    await engine.settle();
    expect(engine.kvCells()).toBe(0);
    expect(engine.freeSequences()).toBe(2);
  });

  it("a release that lands while the request's first prefill runs still frees its sequence afterwards", async () => {
    const engine = createLlamaEngine({ sequences: [fakeSequence()], eosTokenId: 2 });
    const running = engine.prefill(prefill(request("a", [1, 2, 3, 4])));
    engine.release("a"); // the client went away while the step was in flight
    await running;
    expect(engine.kvCells()).toBe(0);
    expect(engine.freeSequences()).toBe(1);
  });

  it("a retracted request is cleared at once and prefills prompt + output from position 0 later", async () => {
    const engine = createLlamaEngine({ sequences: [fakeSequence()], eosTokenId: 2 });
    await engine.prefill(prefill(request("a", [1, 2, 3])));
    engine.retract?.("a");
    await engine.settle();
    expect(engine.kvCells()).toBe(0);
    await engine.prefill(prefill(request("a", [1, 2, 3], [7, 8])));
    expect(engine.kvCells()).toBe(5);
  });

  it("throws when the engine's cells and the scheduler's count disagree (a bug, never silently resynced)", async () => {
    const engine = createLlamaEngine({ sequences: [fakeSequence()], eosTokenId: 2 });
    await engine.prefill(prefill(request("a", [1, 2, 3])));
    await expect(engine.decode(decode(request("a", [1, 2, 3], [9, 9])))).rejects.toThrow(
      /a's sequence holds 3 cells, the scheduler counts 4/,
    );
    await expect(engine.prefill(prefill(request("b", [1])))).rejects.toThrow(/no free sequence for b/);
  });
});
