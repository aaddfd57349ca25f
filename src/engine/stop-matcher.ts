/**
 * Finds stop strings in streamed text. It holds back the tail that could still become a stop string,
 * so a stream never emits text that the final answer would cut off.
 *
 * @example
 * ```ts
 * const m = new StopMatcher(["\n\n"]);
 * m.push("hello\n");   // { text: "hello", stopped: false }  ("\n" is held back)
 * m.push("\nworld");   // { text: "", stopped: true }
 * m.flush();           // "" (nothing held back once stopped)
 * ```
 */
export class StopMatcher {
  private readonly stops: string[];
  private pending = "";
  private stopped = false;

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  /** Adds decoded text; returns what may be emitted now and whether a stop string was reached. */
  push(text: string): { text: string; stopped: boolean } {
    if (this.stopped) return { text: "", stopped: true };
    if (this.stops.length === 0) return { text, stopped: false };
    const buffer = this.pending + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.stopped = true;
      this.pending = "";
      return { text: buffer.slice(0, cut), stopped: true };
    }
    const hold = this.heldBackLength(buffer);
    this.pending = buffer.slice(buffer.length - hold);
    return { text: buffer.slice(0, buffer.length - hold), stopped: false };
  }

  /** The held-back text, released when the request ends for another reason. */
  flush(): string {
    const rest = this.pending;
    this.pending = "";
    return rest;
  }

  private heldBackLength(buffer: string): number {
    let hold = 0;
    for (const stop of this.stops) {
      for (let k = Math.min(stop.length - 1, buffer.length); k > hold; k--) {
        if (buffer.endsWith(stop.slice(0, k))) {
          hold = k;
          break;
        }
      }
    }
    return hold;
  }
}
