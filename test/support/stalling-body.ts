const encoder = new TextEncoder();

/**
 * A replica's body that sends `chunks`, then nothing until it is cancelled (an engine hung mid-answer).
 *
 * @example
 * ```ts
 * const body = stallingBody(["data: 1\n\n"], () => (cancelled = true));
 * ```
 */
export function stallingBody(chunks: readonly string[], onCancel: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[i++];
      if (next !== undefined) controller.enqueue(encoder.encode(next));
      else return new Promise(() => {});
    },
    cancel: onCancel,
  });
}
