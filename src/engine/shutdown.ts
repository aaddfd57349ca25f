/** A fetch handler as the engine's HTTP server calls it. */
export type FetchHandler = (request: Request, env: unknown) => Response | Promise<Response>;

/** How a drain ended. */
export interface DrainResult {
  /** True when every in-flight request finished within the grace period. */
  drained: boolean;
  /** Requests still in flight when the grace period ended (0 when drained). */
  inFlight: number;
}

/**
 * Clean shutdown for an HTTP server: counts requests in flight (until their response body has been sent or
 * cancelled, so a streaming answer counts until its last event) and, once draining, refuses new requests with
 * 503 (and `connection: close`, so clients and routers move on rather than reuse the connection).
 *
 * @example
 * ```ts
 * const gate = createShutdownGate();
 * serve({ fetch: gate.wrap(app.fetch) });
 * process.on("SIGTERM", async () => {
 *   const { drained } = await gate.drain(30_000); // new requests get 503 meanwhile
 *   await server.close();                          // aborts whatever is left
 * });
 * ```
 */
export function createShutdownGate() {
  let inFlight = 0;
  let draining = false;
  let onIdle: (() => void) | undefined;

  const done = () => {
    inFlight -= 1;
    if (inFlight === 0) onIdle?.();
  };

  /** Counts a response until its body ends; a body is passed through unchanged. */
  const track = (response: Response): Response => {
    if (!response.body) {
      done();
      return response;
    }
    let finished = false;
    const finish = () => {
      if (!finished) {
        finished = true;
        done();
      }
    };
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done: end, value } = await reader.read();
          if (end) {
            controller.close();
            finish();
          } else controller.enqueue(value);
        } catch (error) {
          controller.error(error);
          finish();
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, response);
  };

  return {
    /** Wraps a fetch handler: counts its requests, and refuses new ones with 503 while draining. */
    wrap(handler: FetchHandler): FetchHandler {
      return async (request, env) => {
        if (draining) {
          return Response.json(
            {
              error: {
                message: "the engine server is shutting down",
                type: "service_unavailable",
                param: null,
                code: 503,
              },
            },
            { status: 503, headers: { connection: "close", "retry-after": "1" } },
          );
        }
        inFlight += 1;
        try {
          return track(await handler(request, env));
        } catch (error) {
          done();
          throw error;
        }
      };
    },
    /** Requests whose response has not ended yet. */
    get inFlight(): number {
      return inFlight;
    },
    get draining(): boolean {
      return draining;
    },
    /** Starts refusing new requests and waits up to `graceMs` for the in-flight ones to finish. */
    drain(graceMs: number): Promise<DrainResult> {
      draining = true;
      if (inFlight === 0) return Promise.resolve({ drained: true, inFlight: 0 });
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          onIdle = undefined;
          resolve({ drained: false, inFlight });
        }, graceMs);
        onIdle = () => {
          clearTimeout(timer);
          onIdle = undefined;
          resolve({ drained: true, inFlight: 0 });
        };
      });
    },
  };
}

/** A shutdown gate (see {@link createShutdownGate}). */
export type ShutdownGate = ReturnType<typeof createShutdownGate>;
