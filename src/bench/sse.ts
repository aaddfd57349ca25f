/**
 * Reads a `text/event-stream` body as the `data:` payloads of its events, in order.
 *
 * @example
 * ```ts
 * for await (const data of sseData(res.body!)) if (data !== "[DONE]") console.log(JSON.parse(data));
 * ```
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
        .join("\n");
      if (data !== "") yield data;
      end = buffer.indexOf("\n\n");
    }
  }
}
