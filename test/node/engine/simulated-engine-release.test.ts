import { describe, expect, it } from "vitest";
import { defaultOutputLengthModel } from "../../../src/engine/output-length-model";
import { createSimulatedEngine } from "../../../src/engine/simulated-engine";
import { defaultTimingModel } from "../../../src/engine/timing-model";
import type { DecodeBatch, PrefillBatch, RequestView } from "../../../src/scheduler/index";

// The simulated GPU keeps a little state per request (its text seed) until `release(id)`. The engine loop calls
// `release` when a client goes away, which may be while a step holding that request is running (the step's sleep):
// the state must not come back when the step ends, or every request aborted mid-step stays in memory for good.
// Observed through the public Engine interface: a generator whose token is its seed shows whose state a request
// id is served from, so state outliving `release` shows up as a later request under the same id continuing the old one.
function engineWith(duringStep: { call?: () => void }) {
  return createSimulatedEngine({
    timing: defaultTimingModel,
    outputLength: defaultOutputLengthModel,
    eosTokenId: 0,
    sleep: async () => {
      const call = duringStep.call;
      duringStep.call = undefined;
      call?.();
    },
    // The token at position i of a prompt starting with p is p * 1000 + i.
    text: { seedFor: (prompt) => prompt[0] as number, tokenAt: (seed, position) => seed * 1000 + position },
  });
}

const view = (id: string, prompt: number[], output: number[] = []): RequestView => ({
  id,
  promptTokenIds: prompt,
  outputTokenIds: output,
  maxNewTokens: 64,
  ignoreEos: true,
  status: "running",
  retractions: 0,
});

const prefill = (r: RequestView): PrefillBatch => ({
  kind: "prefill",
  entries: [{ request: r, extendTokens: r.promptTokenIds.length, startPosition: 0, cachedTokens: 0, lastChunk: true }],
  events: [],
  ended: [],
});

const decode = (r: RequestView): DecodeBatch => ({ kind: "decode", requests: [r], events: [], ended: [] });

describe("simulated engine: release during a step", () => {
  it("a request released while its prefill runs leaves no state behind", async () => {
    const duringStep: { call?: () => void } = {};
    const engine = engineWith(duringStep);
    duringStep.call = () => engine.release("r");
    await engine.prefill(prefill(view("r", [1])));
    // Had the step re-created r's state after the release, this request would continue prompt 1 (1000).
    expect(await engine.prefill(prefill(view("r", [2])))).toEqual([2000]);
  });

  it("a request released while its decode step runs leaves no state behind", async () => {
    const duringStep: { call?: () => void } = {};
    const engine = engineWith(duringStep);
    expect(await engine.prefill(prefill(view("r", [1])))).toEqual([1000]);
    duringStep.call = () => engine.release("r");
    await engine.decode(decode(view("r", [1], [1000])));
    expect(await engine.prefill(prefill(view("r", [2])))).toEqual([2000]);
  });

  it("a request not released keeps its state through its steps", async () => {
    const engine = engineWith({});
    expect(await engine.prefill(prefill(view("r", [1])))).toEqual([1000]);
    expect(await engine.decode(decode(view("r", [1], [1000])))).toEqual([1001]);
    engine.release("r");
    expect(await engine.prefill(prefill(view("r", [2])))).toEqual([2000]);
  });
});
