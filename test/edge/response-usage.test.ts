import { describe, expect, it } from "vitest";
import { tapEventStreamUsage } from "../../src/edge/response-usage";

const encoder = new TextEncoder();

/** A stream of `text` cut into chunks of `size` bytes (so events, and multi-byte characters, straddle chunks). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

/** Reads a tapped stream to its end: what the client got, and what the tap reported (and how often). */
async function tapped(body: ReadableStream<Uint8Array>) {
  const reports: Array<number | undefined> = [];
  const text = await new Response(tapEventStreamUsage(body, (tokens) => reports.push(tokens))).text();
  return { text, reports };
}

const tokenEvents = (n: number) =>
  Array.from({ length: n }, (_, i) => `data: {"choices":[{"delta":{"content":"é ${i}"}}]}\n\n`).join("");

describe("tapEventStreamUsage", () => {
  it("reports the final usage chunk's total_tokens exactly, whatever the chunking, and passes every byte on", async () => {
    // More than the kept tail (8 KiB) of token events before the usage event, with two-byte characters.
    const stream = `${tokenEvents(400)}data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":400,"total_tokens":412}}\n\ndata: [DONE]\n\n`;
    expect(encoder.encode(stream).length).toBeGreaterThan(16_384);
    for (const size of [1, 7, 100, 4096, 1 << 20]) {
      const { text, reports } = await tapped(chunked(stream, size));
      expect(text).toBe(stream);
      expect(reports).toEqual([412]);
    }
  });

  it("the last usage event wins; a stream without one, or a cut one, reports undefined", async () => {
    const twice = 'data: {"usage":{"total_tokens":5}}\n\ndata: {"usage":{"total_tokens":9}}\n\ndata: [DONE]\n\n';
    expect((await tapped(chunked(twice, 3))).reports).toEqual([9]);
    expect((await tapped(chunked(`${tokenEvents(300)}data: [DONE]\n\n`, 50))).reports).toEqual([undefined]);
    expect((await tapped(chunked('data: {"usage":{"total_tok', 4))).reports).toEqual([undefined]);
  });

  it("a stream the client cancels reports undefined, once", async () => {
    const reports: Array<number | undefined> = [];
    const body = tapEventStreamUsage(chunked(tokenEvents(100), 64), (tokens) => reports.push(tokens));
    const reader = body.getReader();
    await reader.read();
    await reader.cancel();
    expect(reports).toEqual([undefined]);
  });
});
