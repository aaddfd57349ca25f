/**
 * Why a streamed body ended early: the replica sent nothing for `idleTimeoutMs` while the edge waited for its next
 * chunk (after its first event; an answer that is not streamed is read whole under one deadline instead,
 * `forwardToReplica`'s `bodyFailure`). Its relay tells the client so (an SSE error event with code
 * `upstream_timeout`) and releases the slot as failed: the replica is
 * marked down until a probe answers, as for a stream's missed first event (8338d59) and a body cut mid-way. An engine
 * that stops sending mid-answer is hung or dead as far as the edge can tell (its slot is not coming back by itself);
 * one that is alive answers its next probe and is chosen again at once.
 */
export class UpstreamIdleTimeout extends Error {
  override name = "UpstreamIdleTimeout";
  constructor(readonly idleTimeoutMs: number) {
    super(`the replica sent nothing for ${idleTimeoutMs / 1000} s`);
  }
}

/** What a body's read gave: a chunk, its end, or its failure. */
export type BodyRead = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>> | { error: unknown };

/** The reader's next read, or `"silent"` when nothing came within `ms`. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<BodyRead | "silent"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<"silent">((resolve) => {
    timer = setTimeout(() => resolve("silent"), ms);
  });
  try {
    return await Promise.race([reader.read().catch((error: unknown) => ({ error })), silent]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * A body read under an idle deadline, as a gateway's read timeout bounds it (Envoy's `stream_idle_timeout`, nginx's
 * `proxy_read_timeout`): `first` (a read already made, e.g. a stream's first event under the headers' deadline)
 * comes first, then the reader's chunks, each of which must arrive within `idleTimeoutMs` of the edge asking for it.
 * The clock runs only while a read waits on the replica: a client that reads slowly spends none of it. When it runs
 * out, the replica's body is cancelled (its connection closed, so an engine that is alive stops the work),
 * `onTimeout` is called once, and the body fails with `UpstreamIdleTimeout`.
 *
 * @example
 * ```ts
 * const body = withIdleDeadline(undefined, response.body.getReader(), 300_000, () => log("silent"));
 * return new Response(body, response);
 * ```
 */
export function withIdleDeadline(
  first: BodyRead | undefined,
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleTimeoutMs: number,
  onTimeout: () => void,
): ReadableStream<Uint8Array> {
  let pending = first;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = pending ?? (await readWithin(reader, idleTimeoutMs));
      pending = undefined;
      if (next === "silent") {
        const timeout = new UpstreamIdleTimeout(idleTimeoutMs);
        // A body that failed meanwhile rejects its cancel: nothing left to close.
        reader.cancel(timeout).catch(() => {});
        onTimeout();
        controller.error(timeout);
      } else if ("error" in next) controller.error(next.error);
      else if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
