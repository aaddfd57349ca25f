import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { errorBody } from "./openai-error";

/** The status {@link answerClientErrors} wrote on a connection, for the access line of the request it cut short. */
const answered = new WeakMap<object, number>();

/** What Node passes to `clientError`: a parse error carries `code` (`HPE_*`) and `reason`. */
type ClientError = Error & { code?: string; reason?: string };

/**
 * Answers what Node's HTTP parser refuses before the app runs (a malformed Content-Length, bytes that are not HTTP,
 * headers past the size limit, a request that took too long to arrive) with OpenAI's error body instead of Node's bare
 * status line, then closes the connection. The statuses are Node's own (400, 408, 413, 431). As Node does by default, a
 * reset or already closed connection, or one whose response has begun, is only destroyed: nothing is written to it;
 * so is one the client closed in the middle of a request's body (a client that went away, 499 in the access line).
 *
 * @example
 * ```ts
 * const server = createServer(handler);
 * answerClientErrors(server); // Content-Length: abc -> 400 {"error":{"message":"malformed HTTP request: ...",...}}
 * ```
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (error: ClientError, socket: Duplex) => {
    // Node's own test before its default reply: a response already on the wire must not be corrupted.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy(error);
      return;
    }
    // The client closed its side before the body it announced had arrived ("Invalid EOF state"): a client that went
    // away mid-body, whose request the app logs as 499 (brokenBodyStatus); an answer would go to nobody.
    if (error.code === "HPE_INVALID_EOF_STATE" && inFlight) {
      socket.destroy();
      return;
    }
    const { status, reason, code, what } = refusalOf(error);
    answered.set(socket, status);
    const body = JSON.stringify(
      errorBody(`${what}: ${error.reason ?? error.message}`, "invalid_request_error", null, code),
    );
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
      // The server's sockets are half-open: end() alone would wait for the client to close its side.
      () => socket.destroy(),
    );
  });
}

function refusalOf(error: ClientError): { status: number; reason: string; code: string; what: string } {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        reason: "Request Header Fields Too Large",
        code: "headers_too_large",
        what: "request headers too large",
      };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return {
        status: 413,
        reason: "Payload Too Large",
        code: "chunk_extensions_too_large",
        what: "chunk extensions too large",
      };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, reason: "Request Timeout", code: "request_timeout", what: "request timed out" };
    default:
      return { status: 400, reason: "Bad Request", code: "malformed_http_request", what: "malformed HTTP request" };
  }
}

/**
 * The status of a request whose body never arrived whole because its connection broke (`undefined` for any other
 * request, or one not served by node:http): what {@link answerClientErrors} answered when Node's parser refused the
 * rest of it (a malformed chunk: 400), else 499, a client that went away (it closed or reset the connection). Reading
 * such a body fails with Node's `Error: aborted`, which is the client's doing, not the server's.
 *
 * @example
 * ```ts
 * app.onError((error, c) => {
 *   const status = brokenBodyStatus((c.env as { incoming?: IncomingMessage } | undefined)?.incoming);
 *   if (status !== undefined) return c.body(null, status); // nobody reads it: the connection is gone
 *   // ...
 * });
 * ```
 */
export function brokenBodyStatus(incoming: IncomingMessage | undefined): number | undefined {
  if (incoming === undefined || incoming.complete || !incoming.destroyed) return undefined;
  return answered.get(incoming.socket) ?? 499;
}
