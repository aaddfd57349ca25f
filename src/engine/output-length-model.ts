import { hashInts, seededRandom } from "./rng";

/**
 * When a request without `ignore_eos` emits its end-of-sequence token. Pure and seeded: the same seed
 * and request key give the same length, so a run (or a simulator) replays exactly. The key is any
 * integer naming the request: the simulated engine uses a hash of the prompt (the same request always
 * gets the same answer); a simulator without prompts can use the arrival number.
 *
 * - `uniform`: the EOS comes after `round(maxTokens * f)` tokens, `f` uniform in
 *   [`minFraction`, `maxFraction`] (at least 1 token).
 * - `exponential`: after a length drawn from an exponential with mean `meanTokens` (at least 1).
 * - `never`: no EOS; the request runs to `max_tokens` as if `ignore_eos` were set.
 * A drawn length at or beyond `maxTokens` means the request ends by length, not by EOS.
 *
 * @example
 * ```ts
 * const model: OutputLengthModel = { kind: "uniform", minFraction: 0.05, maxFraction: 0.6, seed: 1 };
 * eosAfterTokens(model, { requestKey: 0, maxTokens: 512 }); // e.g. 181: the 181st token is the EOS
 * ```
 */
export type OutputLengthModel =
  | { kind: "uniform"; minFraction: number; maxFraction: number; seed: number }
  | { kind: "exponential"; meanTokens: number; seed: number }
  | { kind: "never"; seed: number };

/** The default: EOS uniformly between 5% and 60% of max_tokens, so real-traffic ratio decay shows. */
export const defaultOutputLengthModel: OutputLengthModel = {
  kind: "uniform",
  minFraction: 0.05,
  maxFraction: 0.6,
  seed: 0,
};

/**
 * The number of output tokens after which the request emits EOS (the EOS token is the last of them),
 * or `null` when it runs to `maxTokens`. See {@link OutputLengthModel}.
 */
export function eosAfterTokens(
  model: OutputLengthModel,
  request: { requestKey: number; maxTokens: number },
): number | null {
  const rng = seededRandom(hashInts([model.seed, request.requestKey]));
  let length: number;
  switch (model.kind) {
    case "never":
      return null;
    case "uniform": {
      const f = model.minFraction + (model.maxFraction - model.minFraction) * rng();
      length = Math.round(request.maxTokens * f);
      break;
    }
    case "exponential":
      length = Math.round(-Math.log(1 - rng()) * model.meanTokens);
      break;
  }
  length = Math.max(1, length);
  return length >= request.maxTokens ? null : length;
}
