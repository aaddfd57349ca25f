import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withIdleDeadline } from "../../../src/edge/idle-deadline";
import { lastEventEnd, WholeEvents } from "../../../src/edge/sse-framing";
import { propertyRuns } from "../../support/property-runs";

const runs = propertyRuns(200, 20261206);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** An SSE stream as engines write it (data lines, comments, CRLF, LF or CR line ends) cut into arbitrary chunks. */
const streamAndCuts = fc
  .record({
    events: fc.array(
      fc.record({
        lines: fc.array(
          fc.oneof(
            fc.string({ unit: fc.constantFrom("a", "{", '"', ":", " ", "é", "字") }).map((s) => `data: ${s}`),
            fc.constant(": keep-alive"),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        end: fc.constantFrom("\n", "\r\n", "\r"),
      }),
      { maxLength: 6 },
    ),
    tail: fc.string({ unit: fc.constantFrom("d", "a", "t", ":", " ", "x", "\n") }),
    cuts: fc.array(fc.nat(), { maxLength: 8 }),
  })
  .map(({ events, tail, cuts }) => {
    const whole = events.map(({ lines, end }) => lines.map((line) => line + end).join("") + end).join("");
    const bytes = encoder.encode(whole + tail);
    const at = [...new Set(cuts.map((c) => c % (bytes.byteLength + 1)))].sort((a, b) => a - b);
    const chunks = [0, ...at]
      .map((from, i) => bytes.slice(from, at[i] ?? bytes.byteLength))
      .filter((c) => c.byteLength > 0);
    return { complete: encoder.encode(whole).byteLength, bytes, chunks };
  });

/**
 * Runs chunks through the relay's read of a replica's stream (`withIdleDeadline` with `WholeEvents`, as
 * `forwardToReplica` reads one), then ends the stream normally or with an error; what came out, chunk by chunk.
 */
async function framed(chunks: Uint8Array[], fail: boolean, maxHeld?: number): Promise<Uint8Array[]> {
  let next = 0;
  // One chunk a pull: an error raised with chunks still queued would discard them.
  const source = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[next++];
        if (chunk !== undefined) controller.enqueue(chunk);
        else if (fail) controller.error(new Error("cut"));
        else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  const out: Uint8Array[] = [];
  const body = withIdleDeadline(undefined, source.getReader(), 60_000, () => {}, undefined, new WholeEvents(maxHeld));
  const reader = body.getReader();
  for (;;) {
    try {
      const { done, value } = await reader.read();
      if (done) return out;
      out.push(value);
    } catch {
      return out;
    }
  }
}

const joined = (chunks: Uint8Array[]) => decoder.decode(Buffer.concat(chunks));

describe("WholeEvents in the relay's read", () => {
  it("a stream that ends normally comes out byte for byte, however it was cut", async () => {
    await fc.assert(
      fc.asyncProperty(streamAndCuts, async ({ bytes, chunks }) => {
        expect(joined(await framed(chunks, false))).toBe(decoder.decode(bytes));
      }),
      runs,
    );
  });

  it("a stream that fails comes out up to the end of its last whole event, whatever was cut where", async () => {
    await fc.assert(
      fc.asyncProperty(streamAndCuts, async ({ bytes, chunks }) => {
        const out = joined(await framed(chunks, true));
        // Exactly the stream's bytes up to its last blank line: nothing of a half event, no whole event lost.
        expect(out).toBe(decoder.decode(bytes.subarray(0, lastEventEnd(bytes))));
      }),
      runs,
    );
  });

  it("every chunk it passes on ends at an event's end, so nothing after it can glue onto a half line", async () => {
    await fc.assert(
      fc.asyncProperty(streamAndCuts, async ({ chunks }) => {
        const out = await framed(chunks, true);
        for (let i = 1; i <= out.length; i++) {
          const sent = Buffer.concat(out.slice(0, i));
          expect(lastEventEnd(sent)).toBe(sent.byteLength);
        }
      }),
      runs,
    );
  });

  it("a chunk that ends at an event's end passes at once, as it came (engines write one event a chunk)", async () => {
    const events = ['data: {"a":1}\n\n', 'data: {"b":2}\r\n\r\n', "data: [DONE]\r\r"].map((e) => encoder.encode(e));
    const out = await framed(events, false);
    expect(out).toEqual(events);
  });

  it("an upstream that never ends an event is passed on past the hold limit, not held whole", async () => {
    const chunks = Array.from({ length: 4 }, () => encoder.encode("x".repeat(100)));
    const out = await framed(chunks, true, 250);
    // 100 and 200 bytes held; at 300 the limit is passed and all of it goes; the last 100 are held, then dropped.
    expect(out.map((c) => c.byteLength)).toEqual([300]);
  });
});

describe("lastEventEnd", () => {
  it("finds the blank line however lines end, and none inside a CRLF", () => {
    const at = (text: string) => lastEventEnd(encoder.encode(text));
    expect(at("data: a\n\ndata: b")).toBe(9);
    expect(at("data: a\r\n\r\ndata: b")).toBe(11);
    expect(at("data: a\r\rdata: b")).toBe(9);
    expect(at("data: a\r\n")).toBe(0);
    expect(at("data: a\n")).toBe(0);
    expect(at("")).toBe(0);
  });
});
