import { seededRandom } from "../engine/rng";

/** One benchmark prompt: token ids or text, and its expected lengths. */
export interface BenchPrompt {
  prompt: number[] | string;
  promptLen: number;
  outputLen: number;
}

// Common English words; with a leading space each is one cl100k token, so a text prompt of N words is
// about N tokens (the server's usage gives the exact count).
const WORDS =
  "time year people way day man thing woman life child world school state family student group country problem hand part place case week company system program question work government number night point home water room mother area money story fact month lot right study book eye job word business issue side kind head house service friend father power hour game line end member law car city community name president team minute idea kid body information back parent face others level office door health person art war history party result change morning reason research girl guy moment air teacher force education".split(
    " ",
  );

/**
 * bench_serving's `random` dataset: input and output lengths drawn uniformly from
 * [len * rangeRatio, len], prompts of random token ids (`ids`, exact lengths) or random words (`text`).
 * Seeded, so the same seed gives the same prompts.
 *
 * @example
 * ```ts
 * const prompts = randomDataset({ numPrompts: 32, inputLen: 256, outputLen: 512, rangeRatio: 1, seed: 1,
 *   format: "ids" });
 * prompts[0].promptLen; // 256
 * ```
 */
export function randomDataset(options: {
  numPrompts: number;
  inputLen: number;
  outputLen: number;
  rangeRatio: number;
  seed: number;
  format: "ids" | "text";
  /** Token ids are drawn from [0, vocabSize); 100000 stays inside cl100k's ordinary tokens. */
  vocabSize?: number;
}): BenchPrompt[] {
  const rng = seededRandom(options.seed);
  const vocab = options.vocabSize ?? 100_000;
  const draw = (len: number) => {
    const lo = Math.max(1, Math.floor(len * options.rangeRatio));
    return lo + Math.floor(rng() * (len - lo + 1));
  };
  const prompts: BenchPrompt[] = [];
  for (let i = 0; i < options.numPrompts; i++) {
    const promptLen = draw(options.inputLen);
    const outputLen = draw(options.outputLen);
    let prompt: number[] | string;
    if (options.format === "ids") {
      prompt = Array.from({ length: promptLen }, () => Math.floor(rng() * vocab));
    } else {
      prompt = Array.from({ length: promptLen }, () => WORDS[Math.floor(rng() * WORDS.length)]).join(" ");
    }
    prompts.push({ prompt, promptLen, outputLen });
  }
  return prompts;
}
