import type { Tokenizer } from "../tokenizer";
import type { LlamaModel } from "./node-llama-cpp";

/**
 * The model's own tokenizer as the engine's {@link Tokenizer}, so the scheduler (and its prefix keys and
 * token budgets) sees the model's token ids. A BOS token is prepended when the model asks for one.
 *
 * Special-token text in user input stays text (as with cl100k): a prompt cannot smuggle in a control token.
 * Tokens are decoded one at a time by the engine loop; decoding after a fixed context token keeps
 * SentencePiece's word-boundary spaces (a lone "▁" would otherwise decode to "" as a text's first token).
 *
 * @example
 * ```ts
 * const tokenizer = createLlamaTokenizer(model, summary.vocabSize);
 * tokenizer.encode("hello"); // [1, 259, 331, 328, 335, 335, 338] with the test model
 * ```
 */
export function createLlamaTokenizer(model: LlamaModel, vocabSize: number): Tokenizer {
  const bos = model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
  const context = model.tokenize("x", false).slice(-1);
  return {
    encode: (text) => {
      if (text === "") return [];
      const ids = model.tokenize(text, false);
      return bos === null ? ids : [bos, ...ids];
    },
    decode: (ids) => model.detokenize(ids, false, context),
    // A model without EOS never stops early by itself; -1 matches no sampled token.
    eosTokenId: model.tokens.eos ?? -1,
    // A chat model ends its turn with EOT (or another end-of-generation token), not always with EOS: stopping on
    // EOS alone ran such a model on past its answer into a made-up next turn, to max_tokens.
    isEndOfGeneration: (token) => model.isEogToken(token),
    vocabSize,
  };
}
