/**
 * Turns a stream of token ids into text deltas without breaking characters. A byte-level tokenizer (BPE like
 * cl100k, SentencePiece byte tokens) may split one UTF-8 character over several tokens: decoding token by token
 * would emit U+FFFD for each part. This keeps a short window of ids, decodes it whole, and emits only text
 * that does not end in an incomplete character (the method of Hugging Face's and vLLM's detokenizers).
 *
 * @example
 * ```ts
 * const decoder = new IncrementalDecoder((ids) => tokenizer.decode(ids));
 * decoder.push(id1); // "" while the character is incomplete
 * decoder.push(id2); // "é"
 * decoder.flush();   // whatever is left when the request ends
 * ```
 */
export class IncrementalDecoder {
  private ids: number[] = [];
  /** Start of the window decoded for context (so word-boundary spaces decode as in the full text). */
  private prefixOffset = 0;
  /** Tokens whose text has been emitted. */
  private readOffset = 0;

  constructor(private readonly decode: (ids: readonly number[]) => string) {}

  /** Adds one token; returns the text that can be emitted now ("" while a character is incomplete). */
  push(id: number): string {
    this.ids.push(id);
    const emitted = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const all = this.decode(this.ids.slice(this.prefixOffset));
    if (all.length <= emitted.length || all.endsWith("\uFFFD")) return "";
    // Keep the window short: the ids before the new prefix are never decoded again.
    this.ids = this.ids.slice(this.readOffset);
    this.prefixOffset = 0;
    this.readOffset = this.ids.length;
    return all.slice(emitted.length);
  }

  /** The text still held back (an incomplete character stays a replacement character), at the end. */
  flush(): string {
    const emitted = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const all = this.decode(this.ids.slice(this.prefixOffset));
    this.ids = [];
    this.prefixOffset = 0;
    this.readOffset = 0;
    return all.length > emitted.length ? all.slice(emitted.length) : "";
  }
}
