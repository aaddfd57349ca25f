import cl100k, { EndOfText, encode, vocabularySize } from "gpt-tokenizer/encoding/cl100k_base";

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
  /**
   * Token ids to text (ids outside the vocabulary decode to nothing). Stateless: bytes of a character cut by
   * the end of `ids` decode to U+FFFD, never into the next call's text.
   */
  decode(ids: readonly number[]): string;
  /** The end-of-sequence token the engine emits when a request stops early. */
  readonly eosTokenId: number;
  /**
   * Whether a sampled token ends the generation besides `eosTokenId`: a chat model's end of turn (Llama 3's
   * `<|eot_id|>`, ChatML's `<|im_end|>`), which llama.cpp calls end-of-generation tokens. Absent: EOS alone.
   */
  isEndOfGeneration?(token: number): boolean;
  /** Ids in [0, vocabSize) are valid prompt tokens. */
  readonly vocabSize: number;
}

const EOS_ID = encode(EndOfText, { allowedSpecial: new Set([EndOfText]) })[0] as number;

/** The cl100k_base tokenizer (see {@link Tokenizer}). */
export const tokenizer: Tokenizer = {
  encode: (text) => encode(text, { disallowedSpecial: new Set() }),
  decode: decodeIds,
  eosTokenId: EOS_ID,
  vocabSize: vocabularySize,
};

/**
 * gpt-tokenizer's own `decode` shares one streaming TextDecoder across every call: bytes of a character split
 * over tokens stay inside it and come out at the start of the next call, whichever request makes it. Two
 * requests decoding in one engine would trade bytes. So the tokens' bytes are gathered here and decoded with
 * a fresh, non-streaming decoder per call.
 */
const core = (
  cl100k as unknown as {
    bytePairEncodingCoreProcessor: { tryDecodeToken(token: number): string | Uint8Array | undefined };
  }
).bytePairEncodingCoreProcessor;
const utf8 = new TextEncoder();

function decodeIds(ids: readonly number[]): string {
  const parts: Uint8Array[] = [];
  let length = 0;
  for (const id of ids) {
    let piece: string | Uint8Array | undefined;
    try {
      piece = core.tryDecodeToken(id);
    } catch {
      piece = undefined; // ids the BPE table lacks (gaps, specials) decode to nothing
    }
    if (piece === undefined) continue;
    const bytes = typeof piece === "string" ? utf8.encode(piece) : piece;
    parts.push(bytes);
    length += bytes.byteLength;
  }
  const all = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.byteLength;
  }
  return new TextDecoder("utf-8").decode(all);
}
