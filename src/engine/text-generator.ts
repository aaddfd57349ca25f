import { hashInts } from "./rng";
import { tokenizer as defaultTokenizer, type Tokenizer } from "./tokenizer";

// Words that are one cl100k token each with a leading space, so every generated token decodes to whole
// ASCII text on its own (a streamed delta never splits a UTF-8 character).
const WORDS =
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  );

/**
 * Deterministic "model output": the token at position `i` of a request is a function of its prompt
 * and `i` alone, so the same request always gets the same text (tests and replays compare it), and a
 * re-prefilled request after retraction continues where it left off.
 *
 * @example
 * ```ts
 * const gen = createTextGenerator();
 * const seed = gen.seedFor([15339, 1917]);
 * gen.tokenAt(seed, 0); // e.g. 279 (" the")
 * ```
 */
export interface TextGenerator {
  /** A per-request seed derived from its prompt tokens. */
  seedFor(promptTokens: readonly number[]): number;
  /** The output token at position `position` (0-based). */
  tokenAt(seed: number, position: number): number;
}

/** Builds the generator over the tokenizer's single-token words (see {@link TextGenerator}). */
export function createTextGenerator(tokenizer: Tokenizer = defaultTokenizer): TextGenerator {
  const ids: number[] = [];
  for (const word of WORDS) {
    const encoded = tokenizer.encode(` ${word}`);
    if (encoded.length === 1) ids.push(encoded[0] as number);
  }
  return {
    seedFor: (promptTokens) => {
      // Hashing a bounded sample keeps this O(1) for long prompts while still telling prompts apart.
      const sample = [promptTokens.length];
      const step = Math.max(1, Math.floor(promptTokens.length / 64));
      for (let i = 0; i < promptTokens.length; i += step) sample.push(promptTokens[i] as number);
      return hashInts(sample);
    },
    tokenAt: (seed, position) => ids[hashInts([seed, position]) % ids.length] as number,
  };
}
