import type { Tokenizer } from "./tokenizer";

/**
 * Whether `token` ends a generation (unless the request ignores EOS): the tokenizer's EOS or one of its other
 * end-of-generation tokens.
 *
 * @example
 * ```ts
 * endsGeneration(tokenizer, tokenizer.eosTokenId); // true
 * ```
 */
export function endsGeneration(tokenizer: Tokenizer, token: number): boolean {
  return token === tokenizer.eosTokenId || tokenizer.isEndOfGeneration?.(token) === true;
}
