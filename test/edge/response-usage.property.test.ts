import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sseData } from "../../src/bench/sse";
import { tapEventStreamUsage } from "../../src/edge/response-usage";
import { propertyRuns } from "../support/property-runs";

/**
 * The SSE paths that read a streamed answer, on arbitrary OpenAI-style event streams (content chunks with
 * `"usage":null` or without it, text of any Unicode, comments and keep-alives, `event:`/`id:` fields, `data:` with
 * or without its space, a final usage chunk or none, `data: [DONE]`, lines ending in LF, CRLF or CR, or a mix of LF
 * and CRLF, as the SSE spec allows) cut into arbitrary byte chunks: inside multi-byte characters, between `\r` and `\n`, empty
 * chunks, a byte at a time. Held:
 *
 * - the edge's usage tap (`tapEventStreamUsage`) relays every chunk as
 *   it comes, before the next one arrives, with exactly its bytes, in order; reports once, only when the stream
 *   ends, the `usage.total_tokens` of the stream's last usage event: the same as when the stream arrives in one
 *   chunk, and the one the events carry, whatever the client then does with the chunks it got (keeps, overwrites,
 *   transfers their buffers);
 * - a stream that fails upstream or that the client cancels, after any chunk, reports `undefined`, once;
 * - the bench client's reader (`sseData`) yields the `data` of every event, in order, whatever the chunking.
 *
 * The tap keeps only the stream's last 8 KiB for its usage event (the usage chunk is the last but one event), so
 * what follows the usage event here is small, as in OpenAI's streams; what precedes it may be far longer.
 */

const encoder = new TextEncoder();

/** Text of any Unicode, with multi-byte characters often. */
const text = fc.string({
  unit: fc
    .oneof(
      fc.constantFrom("a", " ", "é", "日", "語", "🎉", "👩‍💻", '"', "\\", "\n", "\r", "data: ", "\u2028"),
      fc.integer({ min: 0, max: 0x10ffff }).filter((c) => c < 0xd800 || c > 0xdfff),
    )
    .map((u) => (typeof u === "number" ? String.fromCodePoint(u) : u)),
  maxLength: 30,
});

type Line = string;
interface Event {
  /** Comment and field lines before the data line (none carry data). */
  before: Line[];
  /** The one `data:` line's value; none for an event of comments only (a keep-alive). */
  data?: string;
}

const extra: fc.Arbitrary<Line> = fc.oneof(
  fc.constantFrom(": keep-alive", ":", "event: message", "id: 42", "retry: 3000"),
  text.map((t) => `: ${t.replace(/[\r\n]/g, " ")}`),
);

const contentEvent: fc.Arbitrary<Event> = fc
  .record({
    before: fc.array(extra, { maxLength: 2 }),
    content: text,
    // Now and then a long chunk, so that what precedes the usage event often exceeds the tap's 8 KiB tail.
    repeat: fc.oneof(
      { weight: 4, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.integer({ min: 100, max: 800 }) },
    ),
    usageNull: fc.boolean(),
    chat: fc.boolean(),
  })
  .map(({ before, content, repeat, usageNull, chat }) => ({
    before,
    data: JSON.stringify({
      id: "cmpl-1",
      object: chat ? "chat.completion.chunk" : "text_completion",
      choices: [
        chat ? { index: 0, delta: { content: content.repeat(repeat) } } : { index: 0, text: content.repeat(repeat) },
      ],
      ...(usageNull ? { usage: null } : {}),
    }),
  }));

const keepAlive: fc.Arbitrary<Event> = fc.array(extra, { minLength: 1, maxLength: 2 }).map((before) => ({ before }));

/** The final usage chunk's total_tokens (and what else it carries). */
const usageEvent = fc
  .record({
    before: fc.array(extra, { maxLength: 1 }),
    prompt: fc.nat({ max: 100_000 }),
    completion: fc.nat({ max: 100_000 }),
    model: fc.constantFrom("demo", "模型-🚀", "ü"),
  })
  .map(({ before, prompt, completion, model }) => ({
    total: prompt + completion,
    event: {
      before,
      data: JSON.stringify({
        id: "cmpl-1",
        model,
        choices: [],
        usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      }),
    } satisfies Event,
  }));

interface Stream {
  /** The stream's bytes. */
  bytes: Uint8Array;
  /** The `data` of each event, in order (what an SSE reader dispatches). */
  data: string[];
  /** The final usage event's total_tokens; undefined when the stream carries none. */
  usage: number | undefined;
  /** Where the stream is cut into chunks (sorted; a repeated cut makes an empty chunk). */
  cuts: number[];
}

const eolMode = fc.constantFrom("\n", "\r\n", "\r", "mixed");

/** An OpenAI-style event stream and where to cut it. */
const stream: fc.Arbitrary<Stream> = fc
  .record({
    events: fc.array(fc.oneof({ weight: 6, arbitrary: contentEvent }, { weight: 1, arbitrary: keepAlive }), {
      maxLength: 40,
    }),
    usage: fc.option(usageEvent, { nil: undefined }),
    trailing: fc.array(keepAlive, { maxLength: 2 }),
    eol: eolMode,
    eolDraws: fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
    space: fc.boolean(),
    cutting: fc.oneof(
      fc.record({
        kind: fc.constant("anywhere" as const),
        random: fc.array(fc.nat(), { maxLength: 40 }),
        tricky: fc.array(fc.nat(), { maxLength: 12 }),
        empties: fc.boolean(),
      }),
      fc.record({ kind: fc.constant("every" as const), size: fc.integer({ min: 1, max: 9 }) }),
      // One long read, then the last KiB (the usage event, [DONE]) in a few pieces, as a network often gives them.
      fc.record({
        kind: fc.constant("end" as const),
        last: fc.array(fc.integer({ min: 1, max: 1024 }), { minLength: 1, maxLength: 3 }),
      }),
    ),
  })
  .map(({ events, usage, trailing, eol, eolDraws, space, cutting }) => {
    const all: Event[] = [...events, ...(usage ? [usage.event] : []), ...trailing, { before: [], data: "[DONE]" }];
    let n = 0;
    const end = () => (eol === "mixed" ? (eolDraws[n++ % eolDraws.length] ? "\r\n" : "\n") : eol);
    let body = "";
    for (const event of all) {
      for (const line of event.before) body += line + end();
      if (event.data !== undefined) body += `data:${space ? " " : ""}${event.data}${end()}`;
      body += end();
    }
    const bytes = encoder.encode(body);
    let cuts: number[];
    if (cutting.kind === "every") {
      // A byte (or a few) at a time, within reason for a long stream.
      const size = Math.max(cutting.size, Math.ceil(bytes.length / 400));
      cuts = [];
      for (let at = size; at < bytes.length; at += size) cuts.push(at);
    } else if (cutting.kind === "end") {
      cuts = [...new Set(cutting.last.map((r) => Math.max(0, bytes.length - r)))].sort((a, b) => a - b);
    } else {
      // Cuts inside a multi-byte character or between `\r` and `\n`, and anywhere.
      const tricky: number[] = [];
      for (let i = 1; i < bytes.length; i++)
        if (((bytes[i] as number) & 0xc0) === 0x80 || (bytes[i - 1] === 13 && bytes[i] === 10)) tricky.push(i);
      cuts = [
        ...cutting.random.map((r) => r % (bytes.length + 1)),
        ...(tricky.length ? cutting.tricky.map((r) => tricky[r % tricky.length] as number) : []),
      ].sort((a, b) => a - b);
      if (!cutting.empties) cuts = [...new Set(cuts)];
    }
    return {
      bytes,
      data: all.flatMap((e) => (e.data === undefined ? [] : [e.data])),
      usage: usage?.total,
      cuts,
    };
  });

/** The stream's chunks, each in a buffer of its own (as a network read gives them). */
function chunksOf({ bytes, cuts }: Stream): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    chunks.push(bytes.slice(at, cut));
    at = cut;
  }
  return chunks;
}

/** What a client holding the relayed chunks does with them afterwards. */
const clientUse = fc.constantFrom("keep", "overwrite", "transfer");

/** The usage the tap reports for the stream arriving in one chunk. */
async function oneChunkUsage(bytes: Uint8Array): Promise<Array<number | undefined>> {
  const reports: Array<number | undefined> = [];
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes.slice());
      controller.close();
    },
  });
  await new Response(tapEventStreamUsage(body, (tokens) => reports.push(tokens))).arrayBuffer();
  return reports;
}

/** A tap on an upstream the test feeds chunk by chunk: the upstream's controller, the client's reader, the reports. */
function openTap() {
  const reports: Array<number | undefined> = [];
  let upstream!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      upstream = controller;
    },
  });
  const reader = tapEventStreamUsage(body, (tokens) => reports.push(tokens)).getReader();
  return { upstream, reader, reports };
}

/** Byte equality, without the matchers' deep equality (slow on long arrays). */
const same = (a: Uint8Array | undefined, b: Uint8Array) =>
  a !== undefined && a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);

const concat = (chunks: readonly Uint8Array[]) => {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
};

// VITE_RUNS / VITE_SEED search deeper or elsewhere (see propertyRuns).
const runs = propertyRuns(200, 20261205);
/** Long streams through web streams: about 10 ms a run, so deeper runs (VITE_RUNS=3000) get the time they need. */
const timeout = 30_000 + 20 * runs.numRuns;

describe("tapEventStreamUsage on arbitrary event streams in arbitrary chunks", () => {
  it(
    "relays each chunk untouched as it comes and reports the stream's usage once at the end, as in one chunk",
    async () => {
      await fc.assert(
        fc.asyncProperty(stream, clientUse, async (s, use) => {
          const chunks = chunksOf(s);
          const { upstream, reader, reports } = openTap();
          const relayed: Uint8Array[] = [];
          for (const [i, chunk] of chunks.entries()) {
            upstream.enqueue(chunk.slice());
            // The chunk reaches the client before the next one leaves upstream.
            const { value, done } = await reader.read();
            expect(done).toBe(false);
            expect(same(value, chunk), `chunk ${i} relayed as other bytes`).toBe(true);
            expect(reports, `usage reported before the end, at chunk ${i}`).toEqual([]);
            relayed.push((value as Uint8Array).slice());
            // The client may reuse or take the buffer it was handed.
            if (use === "overwrite") (value as Uint8Array).fill(0x22);
            else if (use === "transfer") {
              const buffer = (value as Uint8Array).buffer as ArrayBuffer;
              structuredClone(buffer, { transfer: [buffer] });
            }
          }
          upstream.close();
          expect((await reader.read()).done).toBe(true);
          expect(same(concat(relayed), s.bytes)).toBe(true);
          expect(reports).toEqual(await oneChunkUsage(s.bytes));
          expect(reports).toEqual([s.usage]);
        }),
        runs,
      );
    },
    timeout,
  );

  it(
    "reports undefined, once, for a stream that fails upstream or that the client cancels, after any chunk",
    async () => {
      await fc.assert(
        fc.asyncProperty(stream, fc.nat(), fc.constantFrom("fails", "cancelled"), async (s, at, how) => {
          const chunks = chunksOf(s);
          const stop = at % (chunks.length + 1);
          const { upstream, reader, reports } = openTap();
          for (const chunk of chunks.slice(0, stop)) {
            upstream.enqueue(chunk.slice());
            expect(same((await reader.read()).value, chunk)).toBe(true);
          }
          if (how === "fails") {
            upstream.error(new Error("upstream reset"));
            await expect(reader.read()).rejects.toThrow("upstream reset");
          } else await reader.cancel();
          expect(reports).toEqual([undefined]);
        }),
        runs,
      );
    },
    timeout,
  );
});

describe("sseData (the bench client's reader) on arbitrary event streams in arbitrary chunks", () => {
  it(
    "yields every event's data, in order, as in one chunk",
    async () => {
      const read = async (chunks: readonly Uint8Array[]) => {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(chunk.slice());
            controller.close();
          },
        });
        const data: string[] = [];
        for await (const d of sseData(body)) data.push(d);
        return data;
      };
      await fc.assert(
        fc.asyncProperty(stream, async (s) => {
          const data = await read(chunksOf(s));
          expect(data).toEqual(await read([s.bytes]));
          expect(data).toEqual(s.data);
        }),
        runs,
      );
    },
    timeout,
  );
});
