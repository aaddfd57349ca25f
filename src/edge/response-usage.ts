import { concatenated } from "./read-limited";

/** The stream's last bytes searched for its usage event (a usage chunk is a few hundred bytes). */
const TAIL_BYTES = 8192;
const decoder = new TextDecoder();

/**
 * The `usage.total_tokens` of a whole JSON answer; `undefined` when it has none (or is not JSON).
 *
 * @example
 * ```ts
 * usageOfJson(new TextEncoder().encode('{"usage":{"total_tokens":42}}')); // 42
 * ```
 */
export function usageOfJson(bytes: ArrayBuffer | Uint8Array): number | undefined {
  try {
    return totalTokens(JSON.parse(decoder.decode(bytes)));
  } catch {
    return undefined;
  }
}

/**
 * The `usage.total_tokens` of the last SSE event carrying one (OpenAI's final usage chunk, sent when the
 * request sets `stream_options.include_usage`); `undefined` when there is none.
 *
 * @example
 * ```ts
 * usageOfEventStream('data: {"choices":[]}\n\ndata: {"usage":{"total_tokens":7}}\n\ndata: [DONE]\n\n'); // 7
 * ```
 */
export function usageOfEventStream(text: string): number | undefined {
  let found: number | undefined;
  // Lines end in CRLF, LF or CR (the SSE spec); a CR left before LF would be JSON whitespace, a bare CR is not.
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!line.startsWith("data:") || !line.includes('"usage"')) continue;
    try {
      found = totalTokens(JSON.parse(line.slice(5))) ?? found;
    } catch {
      // A line cut at the start of the kept tail, or not JSON: skip it.
    }
  }
  return found;
}

/**
 * Passes an SSE body through untouched and reports the stream's final usage when it ends (`undefined` when it
 * carried none, failed or was cancelled). Behind the edge's relay a replica's stream that fails ends normally with
 * spillway's error event, so a usage event that arrived before the failure is still reported (and charged). Only the last chunks covering the final usage event are kept (copies,
 * by reference, at least {@link TAIL_BYTES} of them) and nothing is decoded until the stream ends: the usage
 * chunk is the last but one event, so decoding every chunk and re-slicing a tail string per chunk (as this did)
 * cost a few microseconds per token for nothing.
 *
 * @example
 * ```ts
 * const body = tapEventStreamUsage(upstream.body, (tokens) => charge.settle(tokens));
 * ```
 */
export function tapEventStreamUsage(
  body: ReadableStream<Uint8Array>,
  onUsage: (totalTokens: number | undefined) => void,
): ReadableStream<Uint8Array> {
  const tail: Uint8Array[] = [];
  let tailBytes = 0;
  let reported = false;
  const report = (tokens: number | undefined) => {
    if (reported) return;
    reported = true;
    onUsage(tokens);
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        // A copy (of at most the tail's size): the chunk itself goes on to the client, whose side may take its buffer.
        tail.push(chunk.slice(-TAIL_BYTES));
        tailBytes += (tail.at(-1) as Uint8Array).byteLength;
        while (tailBytes - (tail[0] as Uint8Array).byteLength >= TAIL_BYTES) {
          tailBytes -= (tail.shift() as Uint8Array).byteLength;
        }
        controller.enqueue(chunk);
      },
      flush() {
        // Decoded together, so a character split between two chunks stays whole.
        report(usageOfEventStream(decoder.decode(concatenated(tail, tailBytes))));
      },
      cancel() {
        report(undefined);
      },
    }),
  );
}

function totalTokens(value: unknown): number | undefined {
  const usage = (value as { usage?: { total_tokens?: unknown } } | null)?.usage;
  const total = usage?.total_tokens;
  return typeof total === "number" && Number.isFinite(total) && total >= 0 ? total : undefined;
}
