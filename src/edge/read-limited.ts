/**
 * Reading a body that may be larger than the edge can afford to hold: a client's request, or a replica's page
 * that a probe reads in a Durable Object shared by every request of a deployment.
 */

/**
 * Reads at most `maxBytes` of a body, in one piece; `undefined` (the rest cancelled, never read) if it is larger.
 * A missing body reads as empty.
 *
 * @example
 * ```ts
 * const bytes = await readLimited(response.body, 4 * 1024 * 1024);
 * if (bytes === undefined) return "too large";
 * ```
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return concatenated(chunks, size);
}

/**
 * Chunks as one byte array (`byteLength`: their total), the one chunk itself when there is only one.
 *
 * @example
 * ```ts
 * concatenated([new Uint8Array([1]), new Uint8Array([2, 3])], 3); // Uint8Array [1, 2, 3]
 * ```
 */
export function concatenated(chunks: readonly Uint8Array[], byteLength: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(byteLength);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
