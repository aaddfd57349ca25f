import type { GenerationSink } from "../../src/engine/index";

/**
 * A sink for `EngineCore.submit` whose `done` resolves with the finish reason, or rejects with the error message.
 *
 * @example
 * ```ts
 * const sink = recordingSink();
 * server.core.submit(request, sink);
 * await sink.done; // "length"
 * ```
 */
export function recordingSink(): GenerationSink & { done: Promise<string> } {
  let finish!: (reason: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  done.catch(() => {}); // awaited by the test; a rejection before that is not an unhandled one
  return { done, onText() {}, onFinish: (reason) => finish(reason), onError: (message) => fail(new Error(message)) };
}
