import { signRequest } from "../core/request-signature";
import { type BodyRead, UpstreamIdleTimeout, withIdleDeadline } from "./idle-deadline";
import { replicaLabel } from "./replica-label";
import { replicaUrl } from "./replica-url";
import { WholeEvents } from "./sse-framing";

/**
 * Hop-by-hop headers (RFC 9110 7.6.1): for one connection only, never forwarded in either direction. Any `Proxy-*`
 * header is one too (Proxy-Authorization and Proxy-Authenticate are the next proxy's; Proxy-Connection is sent by
 * old clients as Connection's twin, RFC 9110 7.6.1 names it).
 */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"]);

/**
 * Request headers the platform sets itself for the next hop, or that the edge has already answered: never forwarded.
 * `Expect` (curl sends `Expect: 100-continue` with a large body) asked this hop for a 100 before the body, and the edge
 * has read the whole body before it forwards anything; sent on, the replica's interim 100 came back as the answer of
 * the Worker's `fetch`, which the edge could not relay (a 500 `internal_error`, seconds later, for any such request).
 */
const PLATFORM = new Set(["host", "content-length", "expect"]);

/**
 * The client's credential: it is spillway's to check (the tenant's API key), never the engine's to see. The
 * upstream credential, if a deployment needs one, is the deployment's own. Besides `Authorization`, the API-key
 * headers other OpenAI-style clients send in its place (`api-key`: Azure OpenAI's clients, openai-node's
 * `AzureOpenAI` included; `x-api-key`: Anthropic-style clients): spillway does not read them, and forwarding them
 * would hand a client's key to every replica.
 */
const CLIENT_CREDENTIALS = new Set(["authorization", "api-key", "x-api-key"]);

/**
 * The credential a request's fingerprint covers: its `Authorization`, or, from a client that sends its key in
 * `api-key` or `x-api-key` instead, that header (named, so no key in one header spells another's). Without it, two
 * such clients sending the same body shared one fingerprint: one router shard, and each the key to the other's
 * booked retry. A request with `Authorization` keeps the fingerprint it always had.
 *
 * @example
 * ```ts
 * fingerprintCredential(new Headers({ "api-key": "k-1" })); // "api-key k-1"
 * ```
 */
export function fingerprintCredential(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization !== null) return authorization;
  for (const name of ["api-key", "x-api-key"]) {
    const key = headers.get(name);
    if (key !== null) return `${name} ${key}`;
  }
  return undefined;
}

/** Prefix of spillway's internal headers: stripped from client requests, never trusted from outside. */
export const INTERNAL_HEADER_PREFIX = "x-spillway-";

/** Whether a header of a message with these headers is hop-by-hop: listed, `Proxy-*`, or named by its Connection. */
function hopByHop(headers: Headers): (lowerName: string) => boolean {
  // RFC 9110 7.6.1: the fields a Connection header names are for this hop only.
  const named = new Set(
    (headers.get("connection") ?? "")
      .split(",")
      .map((field) => field.trim().toLowerCase())
      .filter((field) => field !== ""),
  );
  return (lower) => HOP_BY_HOP.has(lower) || lower.startsWith("proxy-") || named.has(lower);
}

/**
 * The headers to send upstream: the client's, minus hop-by-hop (those named in its `Connection` header included),
 * Host and Content-Length (the runtime's), Expect (met by the edge), Cloudflare's own, spillway's internal ones and
 * the client's API key (`Authorization`, `api-key`, `x-api-key`).
 *
 * @example
 * ```ts
 * upstreamHeaders(new Headers({ "x-spillway-signature": "forged", authorization: "Bearer sk-1", "api-key": "sk-2", accept: "text/event-stream" }));
 * // accept only
 * ```
 */
export function upstreamHeaders(incoming: Headers): Headers {
  const headers = new Headers();
  const isHopByHop = hopByHop(incoming);
  for (const [name, value] of incoming) {
    const lower = name.toLowerCase();
    if (isHopByHop(lower) || PLATFORM.has(lower) || CLIENT_CREDENTIALS.has(lower)) continue;
    if (lower.startsWith("cf-") || lower.startsWith(INTERNAL_HEADER_PREFIX)) continue;
    headers.append(name, value);
  }
  return headers;
}

/**
 * The headers of a replica's answer to relay to the client: all of them (Retry-After, Set-Cookie and the rest as
 * sent) but hop-by-hop ones, those its `Connection` header names included.
 *
 * @example
 * ```ts
 * downstreamHeaders(new Headers({ connection: "close, x-trace", "x-trace": "1", "retry-after": "2" }));
 * // retry-after only
 * ```
 */
export function downstreamHeaders(upstream: Headers): Headers {
  const headers = new Headers();
  const isHopByHop = hopByHop(upstream);
  for (const [name, value] of upstream) if (!isHopByHop(name.toLowerCase())) headers.append(name, value);
  return headers;
}

/** One forwarding attempt's outcome. */
export type ForwardOutcome =
  | {
      kind: "response";
      response: Response;
      /** An answer that is not a stream, read whole here: its body (`response`'s own is then read). */
      body?: ArrayBuffer;
      /**
       * Set when such an answer's body did not come: `silent` when the replica sent nothing for `idleTimeoutMs`
       * after its headers, `broken` when the body failed or the client left while it was read.
       */
      bodyFailure?: "silent" | "broken";
    }
  | { kind: "unreachable"; message: string }
  | { kind: "timeout" }
  | { kind: "client_gone" };

/** What to forward where. */
export interface ForwardRequest {
  replica: string;
  /** Path and query as the client's URL has them (never percent-decoded), e.g. `/v1/chat/completions`. */
  pathAndSearch: string;
  headers: Headers;
  /** The body's bytes, sent (and signed) as they are: never re-encoded, and reused as they are by a next attempt. */
  body: Uint8Array;
  deployment: string;
  /** Shared secret to sign with; unset sends unsigned requests (engines without a secret accept them). */
  signingSecret: string | undefined;
  /**
   * Deadline for the replica's answer to begin: its response headers, and for an SSE answer its first event too (an
   * answer that does not begin ends as `timeout`, and a `spillway.upstream_timeout` line is logged).
   */
  headersTimeoutMs: number;
  /**
   * Deadline for each later chunk of an SSE answer (after its first event), and for the whole body of any other answer
   * (after its headers): a body silent for longer fails (`UpstreamIdleTimeout`, or `bodyFailure: "silent"`), and a
   * `spillway.upstream_idle_timeout` line is logged.
   */
  idleTimeoutMs: number;
  clientSignal: AbortSignal;
}

/** Whether an answer is an event stream (SSE); media types are case-insensitive (RFC 9110 8.3.1). */
export function isEventStream(headers: Headers): boolean {
  return headers.get("content-type")?.toLowerCase().includes("text/event-stream") ?? false;
}

/**
 * Sends one request to a replica: signed when a secret is set, bounded by a deadline for the answer to begin (an
 * engine that accepts and then hangs ends as `timeout`): its response headers, and for an SSE answer its first
 * chunk as well, since vLLM, SGLang and spillway's engine send a stream's headers at once and its first event only
 * after queueing and prefill. The rest of a stream is read under `idleTimeoutMs` between chunks (`withIdleDeadline`):
 * a replica that goes silent mid-stream fails the stream with `UpstreamIdleTimeout`. Any other answer is read whole
 * here, within `idleTimeoutMs` of its headers (`bodyFailure` when it does not come). Abandoned if the client leaves:
 * before the call or while the request is signed (it never goes out then), while the answer begins, or while an
 * answer is read whole. A redirect is not followed: it ends as `unreachable` (the replica took nothing).
 *
 * @example
 * ```ts
 * const outcome = await forwardToReplica({ replica, pathAndSearch: "/v1/completions", headers, body,
 *   deployment: "llama", signingSecret: env.SPILLWAY_SIGNING_SECRET, headersTimeoutMs: 300_000, idleTimeoutMs: 300_000,
 *   clientSignal });
 * ```
 */
export async function forwardToReplica(request: ForwardRequest): Promise<ForwardOutcome> {
  const url = replicaUrl(request.replica, request.pathAndSearch);
  const headers = new Headers(request.headers);
  if (request.signingSecret) {
    const { pathname, search } = new URL(url);
    const signature = await signRequest(request.signingSecret, {
      method: "POST",
      path: pathname + search,
      body: request.body,
      deployment: request.deployment,
      timestampMs: Date.now(),
      nonce: crypto.randomUUID(),
    });
    for (const [name, value] of Object.entries(signature)) headers.set(name, value);
  }
  const controller = new AbortController();
  let timedOut = false;
  // Whether the deadline that ran out was the headers' or, for a stream, its first event's (for the log line).
  let headersCame = false;
  // For an answer read whole: when its headers came (its body's deadline runs from then), whether that deadline
  // passed, and how the read is ended early (the deadline, or the client leaving).
  let bodyFrom: number | undefined;
  let bodySilent = false;
  let endRead = () => {};
  // One timer for the request: the headers' deadline, and for an answer read whole its body's too (moved earlier
  // only when the body's comes first, pushed on when it fires before). An answer on time costs one timer, as before
  // the body had a deadline; a second timer a request showed on the admitted path (docs/benchmarks.md, "The idle
  // deadline on the admitted path").
  const expire = () => {
    if (bodyFrom === undefined) {
      timedOut = true;
      controller.abort();
      return;
    }
    const left = bodyFrom + request.idleTimeoutMs - Date.now();
    if (left > 0) {
      timer = setTimeout(expire, left);
      return;
    }
    bodySilent = true;
    controller.abort();
    endRead();
  };
  const startedAt = Date.now();
  let timer = setTimeout(expire, request.headersTimeoutMs);
  const onClientAbort = () => {
    controller.abort();
    endRead();
  };
  request.clientSignal.addEventListener("abort", onClientAbort, { once: true });
  // A client that left before the listener was there (while the request was signed, or before the call) fires
  // no event: its request must not go out either.
  if (request.clientSignal.aborted) controller.abort();
  try {
    // Never followed: a redirect would re-send the signed request (and the deployment's upstream key) to wherever
    // the replica points, and turn a POST into a GET on 301/302. The replica did not take the request.
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: request.body,
      signal: controller.signal,
      redirect: "manual",
    });
    headersCame = true;
    if (isRedirect(response.status)) {
      await response.body?.cancel().catch(() => {});
      return { kind: "unreachable", message: redirectMessage(response) };
    }
    if (!response.body) return { kind: "response", response };
    if (!isEventStream(response.headers)) {
      // Read whole here (the middleware reads it whole anyway, for its usage and to release the slot first):
      // natively, within `idleTimeoutMs` of its headers. Silent for longer, the fetch is aborted (the replica's
      // connection closed, so an engine that is alive stops the work).
      bodyFrom = Date.now();
      if (bodyFrom + request.idleTimeoutMs < startedAt + request.headersTimeoutMs) {
        clearTimeout(timer);
        timer = setTimeout(expire, request.idleTimeoutMs);
      }
      // Ended without waiting on the read: how a runtime ends the body of a fetch it aborted is its own affair.
      const ended = new Promise<"ended">((resolve) => {
        endRead = () => resolve("ended");
      });
      let body: ArrayBuffer | "ended";
      let failure: unknown;
      try {
        body = await Promise.race([response.arrayBuffer(), ended]);
      } catch (error) {
        body = "ended";
        failure = error;
      }
      if (body !== "ended") return { kind: "response", response, body };
      if (!bodySilent) {
        // The replica's own failure (a client that left ended the read itself).
        if (!request.clientSignal.aborted) logFailure(request, response.headers, failure);
        return { kind: "response", response, bodyFailure: "broken" };
      }
      logIdleTimeout(request, response.headers);
      return { kind: "response", response, bodyFailure: "silent" };
    }
    const reader = response.body.getReader();
    let first: BodyRead;
    try {
      first = await reader.read();
    } catch (error) {
      // The deadline or the client: answered below. The replica's own failure is the stream's, as it was.
      if (request.clientSignal.aborted || timedOut) throw error;
      first = { error };
    }
    const silent = () => logIdleTimeout(request, response.headers);
    const failed = (error: unknown) => {
      if (!request.clientSignal.aborted) logFailure(request, response.headers, error);
    };
    // In whole events, so that the relay's error event after a break mid-event is an event of its own.
    const body = withIdleDeadline(first, reader, request.idleTimeoutMs, silent, failed, new WholeEvents());
    return { kind: "response", response: new Response(body, response) };
  } catch (error) {
    if (request.clientSignal.aborted) return { kind: "client_gone" };
    if (timedOut) {
      logTimeout(request, headersCame ? "first_event" : "headers");
      return { kind: "timeout" };
    }
    return { kind: "unreachable", message: (error as Error).message };
  } finally {
    clearTimeout(timer);
    request.clientSignal.removeEventListener("abort", onClientAbort);
  }
}

/** A 3xx answer: a redirect, which spillway never follows (the replica's URL in the configuration is its final one). */
export function isRedirect(status: number): boolean {
  return status >= 300 && status <= 399;
}

/** Why a redirect is refused, for the operator: the status and where it pointed. */
function redirectMessage(response: Response): string {
  const location = response.headers.get("location");
  // Its query and userinfo redacted, as the replica's own URL is: a gateway may point back at it with its key.
  return `the replica answered ${response.status}${location ? ` (to ${replicaLabel(location)})` : ""}: spillway follows no redirect; configure the replica's final URL`;
}

/**
 * One of the edge's lines about a replica's answer (README, "Edge logs"): the event, the deployment, the replica (its
 * credentials redacted: `replicaLabel`) and the path without its query, then what is particular to the event.
 */
function logUpstream(request: ForwardRequest, { event, ...fields }: { event: string } & Record<string, unknown>): void {
  const { deployment } = request;
  const replica = replicaLabel(request.replica);
  console.log(JSON.stringify({ event, deployment, replica, path: request.pathAndSearch.split("?")[0], ...fields }));
}

/**
 * A replica took a request and did not begin its answer within `upstreamTimeoutS`: no headers, or a stream's headers
 * and no first event.
 */
function logTimeout(request: ForwardRequest, waitedFor: "headers" | "first_event"): void {
  logUpstream(request, { event: "spillway.upstream_timeout", waitedFor, timeoutS: request.headersTimeoutMs / 1000 });
}

/** A replica went silent mid-answer. */
function logIdleTimeout(request: ForwardRequest, headers: Headers): void {
  logUpstream(request, {
    event: "spillway.upstream_idle_timeout",
    stream: isEventStream(headers),
    idleTimeoutS: request.idleTimeoutMs / 1000,
  });
}

/**
 * A replica's answer broke after it began (its connection cut mid-body: an engine killed mid-stream), answered with
 * an `upstream_failed` error event or 502.
 */
function logFailure(request: ForwardRequest, headers: Headers, error: unknown): void {
  logUpstream(request, {
    event: "spillway.upstream_failed",
    stream: isEventStream(headers),
    message: error instanceof Error ? error.message : String(error),
  });
}

const encoder = new TextEncoder();

/**
 * Passes a response body through untouched (SSE included) and calls `onEnd` exactly once: when the body
 * ends, fails, or the client cancels it. `onEnd(true)` means the upstream failed mid-body (a body that went silent,
 * `UpstreamIdleTimeout`, included). When an SSE stream fails mid-way (`forwardToReplica` passes it on in whole
 * events, so after the last whole one), the client gets a `data: {"error": ...}`
 * event (OpenAI's error shape, `param` null) and `data: [DONE]` instead of a cut connection (the form SGLang and vLLM
 * use for errors inside a stream): code `upstream_failed`, or `upstream_timeout` for a replica that went silent.
 *
 * @example
 * ```ts
 * const body = relayBody(upstream.body, (failed) => ctx.waitUntil(router.release(ticket, failed)), signal, true);
 * return new Response(body, { status: upstream.status, headers: downstreamHeaders(upstream.headers) });
 * ```
 */
export function relayBody(
  upstream: ReadableStream<Uint8Array>,
  onEnd: (upstreamFailed: boolean) => void,
  clientSignal?: AbortSignal,
  eventStream = false,
): ReadableStream<Uint8Array> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  let ended = false;
  const end = (upstreamFailed: boolean) => {
    if (ended) return;
    ended = true;
    onEnd(upstreamFailed);
  };
  upstream.pipeTo(writable, { preventAbort: eventStream, preventClose: false }).then(
    () => end(false),
    async (reason: unknown) => {
      // A pipe that fails while the client is still there failed upstream; otherwise the client left.
      const upstreamFailed = !(clientSignal?.aborted ?? false);
      end(upstreamFailed);
      if (!(eventStream && upstreamFailed)) return;
      const writer = writable.getWriter();
      // OpenAI's error shape (param included), then `[DONE]`: how vLLM, SGLang and spillway's engine end a stream
      // that failed, so a client that takes a stream without `[DONE]` for a cut connection reads the error.
      const error =
        reason instanceof UpstreamIdleTimeout
          ? {
              message: "the replica went silent mid-stream",
              type: "server_error",
              param: null,
              code: "upstream_timeout",
            }
          : { message: "the replica failed mid-stream", type: "server_error", param: null, code: "upstream_failed" };
      try {
        await writer.write(encoder.encode(`data: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`));
        await writer.close();
      } catch {
        // The client is gone too; nothing left to tell.
      }
    },
  );
  clientSignal?.addEventListener("abort", () => end(false), { once: true });
  return readable;
}
