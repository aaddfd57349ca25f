import type { ChunkFramer } from "./sse-framing";

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

/**
 * A body read under an idle deadline, as a gateway's read timeout bounds it (Envoy's `stream_idle_timeout`, nginx's
 * `proxy_read_timeout`): `first` (a read already made, e.g. a stream's first event under the headers' deadline)
 * comes first, then the reader's chunks, each of which must arrive within `idleTimeoutMs` of the edge asking for it.
 * The clock runs only while a read waits on the replica: a client that reads slowly spends none of it. When it runs
 * out, the replica's body is cancelled (its connection closed, so an engine that is alive stops the work),
 * `onTimeout` is called once, and the body fails with `UpstreamIdleTimeout`. A body that fails by itself (the replica's
 * connection cut: an engine killed mid-stream) fails with its own error, and `onFailure` hears it first. With
 * `framer`, each chunk goes on as the framer cuts it (`WholeEvents`: whole SSE events), and what it holds when the
 * body fails is dropped.
 *
 * One timer a stream, not one a chunk: it fires at most every `idleTimeoutMs` and looks at how long the read under
 * way has waited (a timer a request showed on the admitted path: `docs/benchmarks.md`, "The idle deadline on the
 * admitted path"; a stream has hundreds of chunks).
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
  onFailure?: (error: unknown) => void,
  framer?: ChunkFramer,
): ReadableStream<Uint8Array> {
  let pending = first;
  /** When the read under way began; undefined while none is (the client has not asked for more). */
  let waitingSince: number | undefined;
  let silent = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    // No read under way: the client has not asked for more. Nothing to time until it does (`pull` arms it again),
    // so a body nobody reads or cancels holds no timer.
    if (waitingSince === undefined) {
      timer = undefined;
      return;
    }
    const left = waitingSince + idleTimeoutMs - Date.now();
    if (left > 0) {
      timer = setTimeout(check, left);
      return;
    }
    timer = undefined;
    silent = true;
    onTimeout();
    // Ends the read under way (a cancelled stream's pending read is done); a body that failed meanwhile rejects.
    reader.cancel(new UpstreamIdleTimeout(idleTimeoutMs)).catch(() => {});
  };
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Until something goes on: a framer may hold a whole chunk back, and a pull that gives nothing is not
      // called again.
      for (;;) {
        let next: BodyRead;
        if (pending !== undefined) next = pending;
        else {
          waitingSince = Date.now();
          if (timer === undefined && !silent) timer = setTimeout(check, idleTimeoutMs);
          next = await reader.read().catch((error: unknown) => ({ error }));
          waitingSince = undefined;
        }
        pending = undefined;
        if (silent) return controller.error(new UpstreamIdleTimeout(idleTimeoutMs));
        if ("error" in next) {
          stop();
          onFailure?.(next.error);
          return controller.error(next.error);
        }
        if (next.done) {
          stop();
          const rest = framer?.end();
          if (rest !== undefined) controller.enqueue(rest);
          return controller.close();
        }
        const chunk = framer === undefined ? next.value : framer.push(next.value);
        if (chunk !== undefined) return controller.enqueue(chunk);
      }
    },
    cancel: (reason) => {
      stop();
      return reader.cancel(reason);
    },
  });
}
