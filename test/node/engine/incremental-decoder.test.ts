import { describe, expect, it } from "vitest";
import { IncrementalDecoder } from "../../../src/engine/incremental-decoder";
import { tokenizer } from "../../../src/engine/tokenizer";

describe("IncrementalDecoder", () => {
  const text = "héllo wörld, 日本語のテキスト 🎉🚀 done";

  it("streams a text split across byte-level tokens without replacement characters", () => {
    const ids = tokenizer.encode(text);
    // The tokenizer really splits characters here: token by token, some decode to U+FFFD.
    expect(ids.some((id) => tokenizer.decode([id]).includes("\uFFFD"))).toBe(true);
    const decoder = new IncrementalDecoder((window) => tokenizer.decode(window));
    const deltas = ids.map((id) => decoder.push(id));
    deltas.push(decoder.flush());
    expect(deltas.join("")).toBe(text);
    expect(deltas.some((d) => d.includes("\uFFFD"))).toBe(false);
  });

  it("releases an incomplete character at the end as it is", () => {
    const ids = tokenizer.encode("🎉");
    const decoder = new IncrementalDecoder((window) => tokenizer.decode(window));
    const first = decoder.push(ids[0] as number);
    expect(first + decoder.flush()).toBe(tokenizer.decode([ids[0] as number]));
  });
});

describe("tokenizer.decode", () => {
  it("is stateless: bytes of a cut character never leak into the next call (another request's text)", () => {
    const [, , partial] = tokenizer.encode("日本語"); // the first two bytes of 語
    const hello = tokenizer.encode("ü hello");
    expect(tokenizer.decode([partial as number])).toBe("\uFFFD");
    expect(tokenizer.decode(hello)).toBe("ü hello");
    expect(tokenizer.decode(hello)).toBe("ü hello");
  });
});
