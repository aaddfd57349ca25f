import type { IncomingMessage } from "node:http";
import { getConnInfo } from "@hono/node-server/conninfo";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode, StatusCode } from "hono/utils/http-status";
import { brokenBodyStatus } from "./client-error";
import { type EdgeSignatureOptions, requireEdgeSignature } from "./edge-signature";
import type { EngineCore, FinishReason, GenerationSink, GenerationUsage } from "./generation";
import type { Logger } from "./log-line";
import type { EngineMetrics } from "./metrics";
import { ApiError, errorBody, modelNotFound } from "./openai-error";
import { chunkBody, completionBody, type ResponseContext, sseEvent, usageChunkBody } from "./openai-response";
import { prepareGeneration, type RequestLimits } from "./prepare-generation";
import { chatRequestSchema, completionRequestSchema, parseBody } from "./request-schema";
import type { Tokenizer } from "./tokenizer";

/** What the HTTP app needs: the engine core, its limits, metrics and logs. */
export interface EngineAppDeps {
  /** The replica's name, reported as `served_by` and by `/health`. */
  name: string;
  core: EngineCore;
  tokenizer: Tokenizer;
  limits: RequestLimits;
  metrics: EngineMetrics;
  logger: Logger;
  maxBodyBytes: number;
  accessLog: boolean;
  /** When set, only requests signed by the edge are served (see `edge-signature.ts`). */
  edgeSignature?: EdgeSignatureOptions;
  /**
   * The wall clock in milliseconds (default `Date.now`): answers' `created`, and `/v1/models`' `created`, which is
   * the time the app was made (the server's start), in unix seconds.
   */
  now?: () => number;
}

/**
 * The engine server's HTTP app: OpenAI-compatible `POST /v1/completions` and `/v1/chat/completions`
 * (JSON or SSE), `GET /v1/models` (and `/v1/models/{id}`), `/health`, `/load` (the router's probe) and `/metrics`.
 * Use {@link startEngineServer} to get one listening with its engine loop.
 *
 * @example
 * ```ts
 * const app = createEngineApp(deps);
 * serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
 * ```
 */
export function createEngineApp(deps: EngineAppDeps): Hono {
  const app = new Hono();
  const now = deps.now ?? Date.now;
  const startedS = Math.floor(now() / 1000);

  if (deps.accessLog) {
    app.use(async function accessLog(c, next) {
      // Read before the answer: a client that went away (499) has no socket address left afterwards.
      let peer = "-";
      try {
        const info = getConnInfo(c);
        peer = `${info.remote.address}:${info.remote.port}`;
      } catch {
        // app.request() in unit tests has no socket
      }
      await next();
      // The path as the request line had it (percent-encoded): `c.req.path` is decoded, and a `%0A` in it let any
      // client write lines of its own into the log.
      deps.logger.info(`${peer} - "${c.req.method} ${new URL(c.req.url).pathname} HTTP/1.1" ${c.res.status}`);
    });
  }

  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(error.toBody(), error.status as ContentfulStatusCode);
    // A body cut short by its connection (the client went away: 499, or Node's parser refused the rest and the
    // server's clientError handler answered 400) fails to read with `Error: aborted`: the client's doing, and the
    // connection is gone, so no answer and no error line, only the access line with what the client got.
    const broken = brokenBodyStatus((c.env as { incoming?: IncomingMessage } | undefined)?.incoming);
    if (broken !== undefined) return c.body(null, broken as StatusCode);
    deps.logger.error(`unhandled error: ${(error as Error).stack ?? String(error)}`);
    return c.json(errorBody("internal server error", "server_error", null, 500), 500);
  });
  // OpenAI answers an unknown URL with an invalid_request_error, not a type of its own.
  app.notFound((c) =>
    c.json(errorBody(`Invalid URL (${c.req.method} ${c.req.path})`, "invalid_request_error", null, "unknown_url"), 404),
  );

  // The body limit comes before the edge signature, which reads the body of any request that claims one: after
  // it, a claimed signature (anyone can send the header) made the engine buffer a body of any size, and a signed
  // body without Content-Length (chunked) was read twice and answered 500.
  app.use(
    bodyLimit({
      maxSize: deps.maxBodyBytes,
      onError: (c) =>
        c.json(
          errorBody(`request body exceeds ${deps.maxBodyBytes} bytes`, "invalid_request_error", null, "body_too_large"),
          413,
        ),
    }),
  );
  if (deps.edgeSignature && deps.edgeSignature.secrets.length > 0) app.use(requireEdgeSignature(deps.edgeSignature));

  app.get("/health", (c) => c.json({ ok: true, name: deps.name }));
  app.get("/load", (c) => c.json(deps.core.load()));
  app.get("/metrics", async (c) => {
    c.header("content-type", deps.metrics.registry.contentType);
    return c.body(await deps.metrics.exposition());
  });
  const servedModel = {
    id: deps.limits.servedModelName,
    object: "model",
    // vLLM and SGLang give a unix time here too (OpenAI's is the model's creation); ours is the server's start.
    created: startedS,
    owned_by: "spillway",
    max_model_len: deps.limits.contextLength,
  };
  app.get("/v1/models", (c) => c.json({ object: "list", data: [servedModel] }));
  // The official clients' `models.retrieve(id)` (an id with a slash comes percent-encoded, one segment): the served
  // model, or OpenAI's 404 for any other name.
  app.get("/v1/models/:model", (c) => {
    const model = c.req.param("model");
    if (model !== servedModel.id) throw modelNotFound(model, servedModel.id);
    return c.json(servedModel);
  });

  for (const endpoint of ["completion", "chat"] as const) {
    const path = endpoint === "chat" ? "/v1/chat/completions" : "/v1/completions";
    app.post(path, async (c) => {
      // Read outside the try: a body cut short by its connection is not invalid JSON (onError tells what it is).
      const text = await c.req.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new ApiError(400, "request body is not valid JSON", { code: "invalid_json" });
      }
      const generation =
        endpoint === "chat"
          ? prepareGeneration({ kind: "chat", body: parseBody(chatRequestSchema, json) }, deps.tokenizer, deps.limits)
          : prepareGeneration(
              { kind: "completion", body: parseBody(completionRequestSchema, json) },
              deps.tokenizer,
              deps.limits,
            );
      const body = json as { stream?: boolean | null; stream_options?: { include_usage?: boolean | null } | null };
      const ctx: ResponseContext = {
        endpoint,
        id: generation.id,
        created: Math.floor(now() / 1000),
        model: deps.limits.servedModelName,
        servedBy: deps.name,
      };
      const signal = c.req.raw.signal;
      if (body.stream)
        return streamResponse(deps.core, generation, ctx, body.stream_options?.include_usage ?? false, signal);
      return jsonResponse(deps.core, generation, ctx, signal);
    });
  }
  return app;
}

function jsonResponse(
  core: EngineCore,
  generation: Parameters<EngineCore["submit"]>[0],
  ctx: ResponseContext,
  signal: AbortSignal,
): Promise<Response> {
  return new Promise((resolve) => {
    let text = "";
    const sink: GenerationSink = {
      onText: (t) => {
        text += t;
      },
      onFinish: (reason, usage) => {
        signal.removeEventListener("abort", onAbort);
        // The id in x-request-id as on a stream: the openai client reads it as `_request_id`.
        resolve(Response.json(completionBody(ctx, text, reason, usage), { headers: { "x-request-id": ctx.id } }));
      },
      onError: (message) => {
        signal.removeEventListener("abort", onAbort);
        resolve(Response.json(errorBody(message, "server_error", null, 500), { status: 500 }));
      },
    };
    const abort = core.submit(generation, sink);
    // The client went away: free the request's slots now rather than generating for nobody, and settle the
    // answer (nobody reads it; the engine calls no sink after an abort, and the shutdown gate counts a request
    // in flight until its handler has answered).
    const onAbort = () => {
      abort();
      resolve(new Response(null, { status: 499 })); // no body: nothing to send, nothing to wait for
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

function streamResponse(
  core: EngineCore,
  generation: Parameters<EngineCore["submit"]>[0],
  ctx: ResponseContext,
  includeUsage: boolean,
  signal: AbortSignal,
): Response {
  const encoder = new TextEncoder();
  let abort: () => void = () => {};
  let closed = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  // start() runs inside the constructor, so the controller exists before submit below.
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      closed = true;
      abort();
    },
  });
  const onAbort = () => {
    closed = true;
    abort();
  };
  const send = (s: string) => {
    if (!closed) controller.enqueue(encoder.encode(s));
  };
  const end = () => {
    if (closed) return;
    send("data: [DONE]\n\n");
    closed = true;
    controller.close();
    signal.removeEventListener("abort", onAbort);
  };
  let first = true;
  // With include_usage, OpenAI gives every chunk before the usage chunk `"usage": null` (its API reference).
  const chunk = (part: Parameters<typeof chunkBody>[1]) =>
    sseEvent(includeUsage ? { ...chunkBody(ctx, part), usage: null } : chunkBody(ctx, part));
  const sink: GenerationSink = {
    onText: (text) => {
      if (text === "") return;
      send(chunk({ text, finish: null, role: first && ctx.endpoint === "chat" }));
      first = false;
    },
    onFinish: (reason: FinishReason, usage: GenerationUsage) => {
      send(chunk({ text: "", finish: reason, role: first && ctx.endpoint === "chat" }));
      if (includeUsage) send(sseEvent(usageChunkBody(ctx, usage)));
      end();
    },
    onError: (message) => {
      send(sseEvent(errorBody(message, "server_error", null, 500)));
      end();
    },
  };
  // Submitted before the response exists: a refusal (ApiError) still becomes a JSON 4xx/5xx, not a broken stream.
  abort = core.submit(generation, sink);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": ctx.id },
  });
}
