import type { RequestView } from "../scheduler/index";
import type { Engine } from "./engine";
import { eosAfterTokens, type OutputLengthModel } from "./output-length-model";
import { createTextGenerator, type TextGenerator } from "./text-generator";
import { batchSeconds, type TimingModel } from "./timing-model";

/**
 * A simulated GPU: step times from a {@link TimingModel}, deterministic text from a
 * {@link TextGenerator}, and EOS positions from an {@link OutputLengthModel}. Time passes only through
 * the injected `sleep`, so the server's loop sleeps for real and a virtual-time simulator does not.
 *
 * A request's EOS position is drawn from its prompt (hashed) and the seed: the same request always gets
 * the same text and length, whatever the arrival order.
 *
 * @example
 * ```ts
 * const engine = createSimulatedEngine({ timing: defaultTimingModel, outputLength: defaultOutputLengthModel,
 *   eosTokenId: tokenizer.eosTokenId, sleep: (s) => new Promise((r) => setTimeout(r, s * 1000)) });
 * ```
 */
export function createSimulatedEngine(options: {
  timing: TimingModel;
  outputLength: OutputLengthModel;
  eosTokenId: number;
  /** Waits `seconds` of (real or virtual) time. */
  sleep: (seconds: number) => Promise<void>;
  text?: TextGenerator;
}): Engine {
  const text = options.text ?? createTextGenerator();
  const requests = new Map<string, { seed: number; eosAfter: number | null }>();

  /**
   * The token a request samples this step. Its state is looked up (or made) when the step starts, not when its
   * sleep ends: a request released meanwhile (its client went away) must not get its state back, or every request
   * aborted mid-step would stay in `requests` for the server's lifetime.
   */
  const nextToken = (r: RequestView): number => {
    let state = requests.get(r.id);
    if (!state) {
      const seed = text.seedFor(r.promptTokenIds);
      state = {
        seed,
        eosAfter: r.ignoreEos
          ? null
          : eosAfterTokens(options.outputLength, { requestKey: seed, maxTokens: r.maxNewTokens }),
      };
      requests.set(r.id, state);
    }
    const position = r.outputTokenIds.length;
    if (state.eosAfter !== null && position + 1 === state.eosAfter) return options.eosTokenId;
    return text.tokenAt(state.seed, position);
  };

  return {
    async prefill(batch) {
      const tokens = batch.entries.map((e) => (e.lastChunk ? nextToken(e.request) : -1));
      await options.sleep(batchSeconds(options.timing, batch));
      return tokens;
    },
    async decode(batch) {
      const tokens = batch.requests.map(nextToken);
      await options.sleep(batchSeconds(options.timing, batch));
      return tokens;
    },
    release(id) {
      requests.delete(id);
    },
  };
}
