/**
 * The most bytes of one unfinished event held back: past it the bytes go on unframed (an upstream that never ends an
 * event is not sending SSE as the edge knows it, and holding all of it would hold the whole answer).
 */
export const MAX_HELD_EVENT_BYTES = 1 << 20;

const LF = 0x0a;
const CR = 0x0d;
/** How far before a new byte a blank line that ends in it may begin: two CRLFs. */
const LOOK_BACK = 3;

/** Cuts a body's chunks as they arrive: `push` gives what may go on now, `end` what is left when the body ends. */
export interface ChunkFramer {
  push(chunk: Uint8Array): Uint8Array | undefined;
  end(): Uint8Array | undefined;
}

/**
 * Cuts an SSE body into whole events: of the bytes that have arrived, those after the last blank line (an event whose
 * end has not come yet) are held back until it comes. So a stream that breaks mid-event leaves the client at an
 * event boundary, where the relay's error event reads as one event; sent after half an event, it was glued to that
 * event's last line and the client read one malformed `data:` line (openai-node: a JSON parse error, not the
 * replica's failure). When the body ends normally `end` gives the held bytes (its last event may lack its blank
 * line); when it fails they are dropped. A chunk that ends at an event's end, as every engine's chunk does, goes on
 * at once as it came: nothing is delayed that the client could already use, and nothing is copied. It is not a
 * stream of its own: it runs inside the read that already sees each chunk (`withIdleDeadline`), since a JavaScript
 * `TransformStream` per chunk would cost about as much as the rest of the relay (`docs/benchmarks.md`).
 *
 * @example
 * ```ts
 * const events = new WholeEvents();
 * events.push(encode('data: {"a":1}\n\ndata: {"b"')); // the bytes of 'data: {"a":1}\n\n'
 * events.push(encode(":2}\n\n")); // the bytes of 'data: {"b":2}\n\n'
 * ```
 */
export class WholeEvents implements ChunkFramer {
  /** Bytes not passed on yet: the start of an event whose end has not come. */
  private held: Uint8Array | undefined;
  /**
   * The last bytes passed on (`sentTail[LOOK_BACK - sentTailBytes..]`): a blank line may begin in them (a CR sent,
   * its LF in the next chunk). Kept in place: a copy per chunk cost more than the rest of the framing.
   */
  private readonly sentTail = new Uint8Array(LOOK_BACK);
  private sentTailBytes = 0;

  constructor(private readonly maxHeldBytes = MAX_HELD_EVENT_BYTES) {}

  push(chunk: Uint8Array): Uint8Array | undefined {
    if (chunk.byteLength === 0) return undefined;
    if (this.held === undefined && lastEventEnd(chunk, chunk.byteLength - 1) === chunk.byteLength)
      return this.passed(chunk);
    // Held bytes hold no blank line (nor begin one with what went out before them: that would have ended there).
    const before = this.held ?? this.sentTail.subarray(LOOK_BACK - this.sentTailBytes);
    const sent = this.held === undefined ? before.byteLength : 0;
    const bytes = joined(before, chunk);
    const end = lastEventEnd(bytes, before.byteLength);
    if (end === bytes.byteLength || bytes.byteLength > this.maxHeldBytes) {
      this.held = undefined;
      return this.passed(bytes.subarray(sent));
    }
    // A copy: what is passed on is the client's, and a chunk is not the framer's to keep.
    this.held = bytes.slice(Math.max(end, sent));
    return end > sent ? this.passed(bytes.subarray(sent, end)) : undefined;
  }

  end(): Uint8Array | undefined {
    const held = this.held;
    this.held = undefined;
    return held;
  }

  private passed(bytes: Uint8Array): Uint8Array {
    const tail = this.sentTail;
    const length = bytes.byteLength;
    if (length >= LOOK_BACK) {
      for (let i = 0; i < LOOK_BACK; i++) tail[i] = bytes[length - LOOK_BACK + i] as number;
      this.sentTailBytes = LOOK_BACK;
    } else {
      tail.copyWithin(0, length);
      tail.set(bytes, LOOK_BACK - length);
      this.sentTailBytes = Math.min(LOOK_BACK, this.sentTailBytes + length);
    }
    return bytes;
  }
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
