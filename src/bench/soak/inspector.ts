/** The part of the WHATWG WebSocket this client uses (Node 22 has it; Node 20 with `--experimental-websocket`). */
interface BrowserSocket {
  send(data: string): void;
  close(): void;
  addEventListener(type: "open" | "error" | "message", listener: (event: { data?: unknown }) => void): void;
}

/** `Runtime.getHeapUsage` of a V8 isolate, bytes. */
export interface HeapUsage {
  usedSize: number;
  totalSize: number;
  embedderHeapUsedSize: number;
}

/**
 * A minimal Chrome DevTools Protocol client for one inspector target (a workerd isolate): calls by id, nothing
 * else. workerd handles inspector messages on the isolate's thread, so a call may wait for the isolate to run:
 * `wake` (e.g. a request to the Worker) is invoked while a call is outstanding.
 *
 * @example
 * ```ts
 * const inspector = await connectInspector("ws://127.0.0.1:9229/core:user:", () => fetch(`${base}/health`));
 * const before = await inspector.heapAfterGc();
 * inspector.close();
 * ```
 */
export async function connectInspector(webSocketUrl: string, wake: () => Promise<unknown>) {
  const Socket = (globalThis as unknown as { WebSocket?: new (url: string) => BrowserSocket }).WebSocket;
  if (!Socket) throw new Error("no global WebSocket: run Node 20 with --experimental-websocket (Node 22 has it)");
  const ws = new Socket(webSocketUrl);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error(`cannot connect to ${webSocketUrl}`)));
  });
  let nextId = 0;
  const pending = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id !== undefined) pending.get(message.id)?.(message);
  });
  const call = async <T>(method: string, params: Record<string, unknown> = {}): Promise<T> => {
    const id = ++nextId;
    const answered = new Promise<{ result?: unknown; error?: { message: string } }>((resolve) =>
      pending.set(id, resolve),
    );
    ws.send(JSON.stringify({ id, method, params }));
    // The isolate may be idle: run something in it until the answer comes (bounded).
    for (let i = 0; i < 50; i++) {
      const done = await Promise.race([answered.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))]);
      if (done) break;
      await wake().catch(() => {});
    }
    const message = await Promise.race([
      answered,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method}: no answer`)), 10_000)),
    ]);
    pending.delete(id);
    if (message.error) throw new Error(`${method}: ${message.error.message}`);
    return message.result as T;
  };
  await call("HeapProfiler.enable");
  return {
    /** Any protocol method (e.g. `Profiler.start`), its result. */
    call,
    heapUsage: () => call<HeapUsage>("Runtime.getHeapUsage"),
    /** Two full collections (the second frees what finalizers of the first released), then the heap. */
    async heapAfterGc(): Promise<HeapUsage> {
      await call("HeapProfiler.collectGarbage");
      await call("HeapProfiler.collectGarbage");
      return call<HeapUsage>("Runtime.getHeapUsage");
    },
    close: () => ws.close(),
  };
}
