/**
 * A request's fingerprint: SHA-256 over the client's credential (its `Authorization`), the method, the path
 * and the body. Every retry of the same request has the same fingerprint, whatever client library sent it and
 * whatever headers it adds; a different request - another body, another key - has another. A promise the router
 * makes to a refused request (a booked retry) is bound to it: no header a client can set claims someone else's.
 * Web Crypto only (the Worker and Node alike); deterministic, so pure.
 */

import { bytesToHex } from "./hex";

const encoder = new TextEncoder();

/** What the fingerprint covers. */
export interface FingerprintParts {
  /** The client's credential: its `Authorization` header, or the edge's stand-in for one (empty when absent). */
  authorization: string | undefined;
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  body: string | Uint8Array;
}

/**
 * The hex SHA-256 fingerprint of a request. The parts are length-prefixed, so no two different requests can
 * be spelled into the same input.
 *
 * @example
 * ```ts
 * const fp = await requestFingerprint({ authorization: "Bearer sk-1", method: "POST",
 *   path: "/v1/chat/completions", body: '{"model":"m","messages":[]}' }); // 64 hex characters
 * ```
 */
export async function requestFingerprint(parts: FingerprintParts): Promise<string> {
  const body = typeof parts.body === "string" ? encoder.encode(parts.body) : parts.body;
  const head = encoder.encode(
    ["spillway-fp-v1", parts.authorization ?? "", parts.method.toUpperCase(), parts.path]
      .map((p) => `${p.length}:${p}`)
      .join("\n"),
  );
  const input = new Uint8Array(head.length + 1 + body.length);
  input.set(head, 0);
  input[head.length] = 10;
  input.set(body, head.length + 1);
  return bytesToHex(await crypto.subtle.digest("SHA-256", input));
}

/**
 * The router shard a fingerprint picks: its first 32 bits modulo the shard count, so every attempt of a request
 * meets the router that refused it (and holds its promise).
 *
 * @example
 * ```ts
 * shardForFingerprint("00000005ab...", 4); // 1
 * ```
 */
export function shardForFingerprint(fingerprint: string, shards: number): number {
  if (shards <= 1) return 0;
  const word = Number.parseInt(fingerprint.slice(0, 8), 16);
  return Number.isFinite(word) ? word % shards : 0;
}
