import { decode, EndOfText, encode, vocabularySize } from "gpt-tokenizer/encoding/cl100k_base";

/**
 * The engine's tokenizer: OpenAI's cl100k_base BPE (gpt-tokenizer, pure JS, offline).
 *
 * Special-token text in user input is encoded as ordinary text (never as a control token), so a prompt
 * cannot smuggle in an end-of-text token.
 *
 * @example
 * ```ts
 * const ids = tokenizer.encode("hello world"); // [15339, 1917]
 * tokenizer.decode(ids); // "hello world"
 * ```
 */
export interface Tokenizer {
  /** Text to token ids. */
  encode(text: string): number[];
  /** Token ids to text (ids outside the vocabulary decode to nothing). */
  decode(ids: readonly number[]): string;
  /** The end-of-sequence token the engine emits when a request stops early. */
  readonly eosTokenId: number;
  /** Ids in [0, vocabSize) are valid prompt tokens. */
  readonly vocabSize: number;
}

const EOS_ID = encode(EndOfText, { allowedSpecial: new Set([EndOfText]) })[0] as number;

/** The cl100k_base tokenizer (see {@link Tokenizer}). */
export const tokenizer: Tokenizer = {
  encode: (text) => encode(text, { disallowedSpecial: new Set() }),
  decode: (ids) => {
    // Token-id prompts may contain ids the BPE table lacks (gaps, specials); decode what it knows.
    try {
      return decode(ids as number[]);
    } catch {
      return ids.map((id) => safeDecodeOne(id)).join("");
    }
  },
  eosTokenId: EOS_ID,
  vocabSize: vocabularySize,
};

function safeDecodeOne(id: number): string {
  try {
    return decode([id]);
  } catch {
    return "";
  }
}
