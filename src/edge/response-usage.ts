const TAIL_CHARS = 8192;
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
  for (const line of text.split("\n")) {
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
 * Passes an SSE body through untouched, keeping only its last few KiB, and reports the stream's final usage
 * when it ends (`undefined` when it carried none, failed or was cancelled).
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
  const streamDecoder = new TextDecoder();
  let tail = "";
  let reported = false;
  const report = (tokens: number | undefined) => {
    if (reported) return;
    reported = true;
    onUsage(tokens);
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        tail = (tail + streamDecoder.decode(chunk, { stream: true })).slice(-TAIL_CHARS);
        controller.enqueue(chunk);
      },
      flush() {
        report(usageOfEventStream(tail));
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
