import fc from "fast-check";
import cl100k from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it } from "vitest";
import { IncrementalDecoder } from "../../../src/engine/incremental-decoder";
import { tokenizer } from "../../../src/engine/tokenizer";
import { propertyRuns } from "../../support/property-runs";

/**
 * The engine's streaming detokenizer (one `push` per generated token, `flush` at the end, as the engine loop does)
 * on the engine's own byte-level tokenizer (cl100k), for arbitrary token sequences: text of arbitrary Unicode
 * (emoji, CJK, astral characters) encoded as the tokenizer does or one byte per token (every multi-byte character
 * split at every byte), tokens that are parts of characters in any order (invalid UTF-8), the U+FFFD token, a BOM,
 * and ids outside the vocabulary. Held:
 *
 * - complete: the increments, flush included, concatenate to the one-shot `tokenizer.decode` of the whole sequence;
 * - never retracted: after every push, the text emitted so far is a prefix of that one-shot decode, so no increment
 *   holds a U+FFFD (or any character) that the full decode does not have at that place;
 * - prompt, as the JSDoc promises ("" only while a character is incomplete): after every push whose tokens so far
 *   decode to a text that does not end in U+FFFD, all of that text has been emitted. (Text ending in U+FFFD may be
 *   held back until the next token: the decoder cannot tell a cut character from a finished one there.)
 * - for valid text, no increment holds a U+FFFD at all.
 */

/** Each id's bytes (a part of a character for some), read as the engine's tokenizer reads them. */
const core = (
  cl100k as unknown as {
    bytePairEncodingCoreProcessor: { tryDecodeToken(token: number): string | Uint8Array | undefined };
  }
).bytePairEncodingCoreProcessor;
const utf8 = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

/** The id of each single-byte token, by byte; ids whose bytes are not whole characters. */
const byteToken = new Map<number, number>();
const partialIds: number[] = [];
for (let id = 0; id < tokenizer.vocabSize; id++) {
  let piece: string | Uint8Array | undefined;
  try {
    piece = core.tryDecodeToken(id);
  } catch {
    piece = undefined;
  }
  if (piece === undefined) continue;
  const bytes = typeof piece === "string" ? utf8.encode(piece) : piece;
  if (bytes.length === 1) byteToken.set(bytes[0] as number, id);
  try {
    strict.decode(bytes);
  } catch {
    partialIds.push(id);
  }
}

/** Text of any code points (astral ones, emoji and combining marks often), without the replacement character or a BOM. */
const text = fc.string({
  unit: fc
    .oneof(
      fc.constantFrom("a", " ", "é", "ü", "日", "語", "🎉", "🚀", "👩‍💻", "🇯🇵", "\u0301", "\n"),
      fc
        .integer({ min: 0x20, max: 0x10ffff })
        .filter((c) => (c < 0xd800 || c > 0xdfff) && c !== 0xfffd && c !== 0xfeff),
    )
    .map((u) => (typeof u === "number" ? String.fromCodePoint(u) : u)),
  maxLength: 24,
});

/** One token per UTF-8 byte of the text. */
const byteTokens = (s: string): number[] => [...utf8.encode(s)].map((b) => byteToken.get(b) as number);

/** A run of token ids: parts of a generated sequence. */
const segment: fc.Arbitrary<number[]> = fc.oneof(
  { weight: 4, arbitrary: text.map((s) => tokenizer.encode(s)) },
  { weight: 3, arbitrary: text.map(byteTokens) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom(...partialIds), { minLength: 1, maxLength: 4 }) },
  { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: tokenizer.vocabSize - 1 }), { maxLength: 3 }) },
  {
    weight: 1,
    // The replacement character and the BOM as text; ids that decode to nothing (outside the vocabulary, gaps).
    arbitrary: fc.constantFrom(
      tokenizer.encode("\uFFFD"),
      tokenizer.encode("\uFEFF"),
      [tokenizer.vocabSize + 7],
      [100_256],
      [-1],
    ),
  },
);
const tokenSequence = fc.array(segment, { maxLength: 8 }).map((segments) => segments.flat());

interface Streamed {
  /** What each push returned, then what flush returned. */
  deltas: string[];
  /** Problems seen along the way (none expected). */
  violations: string[];
}

/** Streams the ids through a fresh decoder, checking after every push what must hold. */
function stream(ids: readonly number[]): Streamed {
  const full = tokenizer.decode(ids);
  const decoder = new IncrementalDecoder((window) => tokenizer.decode(window));
  const deltas: string[] = [];
  const violations: string[] = [];
  let emitted = "";
  ids.forEach((id, k) => {
    const delta = decoder.push(id);
    deltas.push(delta);
    emitted += delta;
    if (!full.startsWith(emitted))
      violations.push(`after token ${k} (${id}): emitted ${JSON.stringify(emitted)}, not a prefix of the full text`);
    const soFar = tokenizer.decode(ids.slice(0, k + 1));
    if (!soFar.endsWith("\uFFFD") && emitted !== soFar)
      violations.push(
        `after token ${k} (${id}): ${JSON.stringify(soFar)} is whole but only ${JSON.stringify(emitted)} is out`,
      );
  });
  deltas.push(decoder.flush());
  if (deltas.join("") !== full)
    violations.push(`increments ${JSON.stringify(deltas)} join to other than ${JSON.stringify(full)}`);
  return { deltas, violations };
}

const runs = propertyRuns(200, 20261205);

describe("IncrementalDecoder on arbitrary token sequences", () => {
  it("the byte tables cover every byte (so the byte-per-token sequences are what they say)", () => {
    expect(byteToken.size).toBe(256);
    expect(partialIds.length).toBeGreaterThan(0);
  });

  it("emits the one-shot decode, in prefixes never retracted, and all of it once it is whole", () => {
    fc.assert(
      fc.property(tokenSequence, (ids) => {
        expect(stream(ids).violations).toEqual([]);
      }),
      runs,
    );
  });

  it("streams valid text, split anywhere by the tokens, without a replacement character", () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 4 }), fc.array(fc.boolean(), { maxLength: 4 }), (parts, asBytes) => {
        const ids = parts.flatMap((s, i) => (asBytes[i] ? byteTokens(s) : tokenizer.encode(s)));
        const { deltas, violations } = stream(ids);
        expect(violations).toEqual([]);
        expect(deltas.join("")).toBe(parts.join(""));
        expect(deltas.filter((d) => d.includes("\uFFFD"))).toEqual([]);
      }),
      runs,
    );
  });
});
