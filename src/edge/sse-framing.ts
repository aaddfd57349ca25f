/**
 * The most bytes of one unfinished event held back: past it the bytes go on unframed (an upstream that never ends an
 * event is not sending SSE as the edge knows it, and holding all of it would hold the whole answer).
 */
export const MAX_HELD_EVENT_BYTES = 1 << 20;

const LF = 0x0a;
const CR = 0x0d;
/** How far before a new byte a blank line that ends in it may begin: two CRLFs. */
const LOOK_BACK = 3;

/**
 * Passes an SSE body on in whole events: the bytes after the last blank line of what has arrived (an event whose end
 * has not come yet) are held back until it comes. So a stream that breaks mid-event leaves the client at an event
 * boundary, where the relay's error event reads as one event; sent after half an event, it was glued to that
 * event's last line and the client read one malformed `data:` line (openai-node: a JSON parse error, not the
 * replica's failure). When the body ends normally the held bytes go out (its last event may lack its blank line);
 * when it fails they are dropped. A chunk that ends at an event's end, as every engine's chunk does, passes at once:
 * nothing is delayed that the client could already use.
 *
 * @example
 * ```ts
 * const framed = upstream.body.pipeThrough(wholeEvents());
 * ```
 */
export function wholeEvents(maxHeldBytes = MAX_HELD_EVENT_BYTES): TransformStream<Uint8Array, Uint8Array> {
  // Bytes not passed on yet: the start of an event whose end has not come.
  let held: Uint8Array | undefined;
  // The last bytes passed on: a blank line may begin in them (a CR sent, its LF in the next chunk).
  let sentTail = new Uint8Array(0);
  const pass = (controller: TransformStreamDefaultController<Uint8Array>, bytes: Uint8Array) => {
    controller.enqueue(bytes);
    sentTail = bytes.byteLength >= LOOK_BACK ? bytes.slice(-LOOK_BACK) : joined(sentTail, bytes).slice(-LOOK_BACK);
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (chunk.byteLength === 0) return;
      // As engines write: a chunk of whole events, passed on without a copy.
      if (held === undefined && lastEventEnd(chunk, chunk.byteLength - 1) === chunk.byteLength) {
        pass(controller, chunk);
        return;
      }
      // Held bytes hold no blank line (nor begin one with what went out before them: that would have ended there).
      const before = held ?? sentTail;
      const sent = held === undefined ? sentTail.byteLength : 0;
      const bytes = joined(before, chunk);
      const end = lastEventEnd(bytes, before.byteLength);
      if (end === bytes.byteLength || bytes.byteLength > maxHeldBytes) {
        held = undefined;
        pass(controller, bytes.subarray(sent));
        return;
      }
      if (end > sent) pass(controller, bytes.subarray(sent, end));
      // A copy: what is passed on is the client's, and a chunk is not the transform's to keep.
      held = bytes.slice(Math.max(end, sent));
    },
    flush(controller) {
      if (held !== undefined) controller.enqueue(held);
    },
  });
}

/**
 * The index just past the last blank line in `bytes` that ends after `from` (0 when none does): where an SSE event
 * ends. Lines end in CRLF, LF or CR (the SSE spec), so a blank line is two line ends in a row. Searched from the end,
 * so a chunk that ends at an event's end costs two or four byte reads.
 *
 * @example
 * ```ts
 * lastEventEnd(new TextEncoder().encode('data: {"a":1}\n\ndata: {"b"'), 0); // 15
 * ```
 */
export function lastEventEnd(bytes: Uint8Array, from = 0): number {
  for (let end = bytes.byteLength; end > from; end--) {
    const last = lineEndBefore(bytes, end);
    if (last > 0 && lineEndBefore(bytes, end - last) > 0) return end;
  }
  return 0;
}

/** The length (1 or 2) of the line end that finishes just before `end`, or 0 when `bytes[end - 1]` ends no line. */
function lineEndBefore(bytes: Uint8Array, end: number): number {
  if (end < 1) return 0;
  const byte = bytes[end - 1];
  if (byte === LF) return end >= 2 && bytes[end - 2] === CR ? 2 : 1;
  return byte === CR ? 1 : 0;
}

function joined(first: Uint8Array, second: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(first.byteLength + second.byteLength);
  bytes.set(first, 0);
  bytes.set(second, first.byteLength);
  return bytes;
}
