/** SSE line endings (the spec allows CRLF, LF and CR). */
const LINE_END = /\r\n|\r|\n/g;

/**
 * The complete lines of `text` and what follows the last of them. A CR last may be half of a CRLF cut between two
 * chunks: unless the stream has ended (`final`), it stays in the rest until the next chunk says.
 */
function completeLines(text: string, final: boolean): { lines: string[]; rest: string } {
  const lines: string[] = [];
  let start = 0;
  for (const end of text.matchAll(LINE_END)) {
    if (end[0] === "\r" && end.index === text.length - 1 && !final) break;
    lines.push(text.slice(start, end.index));
    start = end.index + end[0].length;
  }
  return { lines, rest: text.slice(start) };
}

/**
 * Reads a `text/event-stream` body as the `data:` payloads of its events, in order (lines may end in CRLF, LF or
 * CR, as the SSE spec allows; an event's `data` lines are joined with LF; an event left unfinished at the end of
 * the stream is dropped, as the spec says).
 *
 * @example
 * ```ts
 * for await (const data of sseData(res.body!)) if (data !== "[DONE]") console.log(JSON.parse(data));
 * ```
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  // One line of the stream: a blank one ends the event (dispatched when it carried data).
  const line = (text: string): string | undefined => {
    if (text === "") {
      const event = data.join("\n");
      data = [];
      return event === "" ? undefined : event;
    }
    if (text.startsWith("data:")) data.push(text.slice(text.startsWith("data: ") ? 6 : 5));
    return undefined;
  };
  // The events the lines complete.
  const events = function* (lines: readonly string[]) {
    for (const text of lines) {
      const event = line(text);
      if (event !== undefined) yield event;
    }
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const { lines, rest } = completeLines(buffer, false);
    buffer = rest;
    yield* events(lines);
  }
  yield* events(completeLines(buffer + decoder.decode(), true).lines);
}
