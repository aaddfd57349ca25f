/**
 * Trust between the edge and the engines: the edge signs every request it forwards with a shared secret
 * (HMAC-SHA256 over method, path, body digest, deployment, timestamp and a nonce); an engine accepts
 * inference only with a valid, fresh, never-seen signature. Web Crypto only, so the same code runs in
 * workerd and in Node.
 */

/** The headers that carry a signature (the edge strips any a client sends). */
export const SIGNATURE_HEADERS = {
  timestamp: "x-spillway-timestamp",
  nonce: "x-spillway-nonce",
  deployment: "x-spillway-deployment",
  signature: "x-spillway-signature",
} as const;

const encoder = new TextEncoder();

function toHex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function toBase64Url(bytes: ArrayBuffer): string {
  let binary = "";
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array | undefined {
  // 4k+1 characters are no base64 at all: atob throws on them (a header anyone can send was a 500, not a 401).
  if (!/^[A-Za-z0-9_-]+$/.test(text) || text.length % 4 === 1) return undefined;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

async function hmacKey(secret: string): ReturnType<typeof crypto.subtle.importKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

/** What a signature covers. */
export interface SignedParts {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  body: string | Uint8Array;
  deployment: string;
  timestampMs: number;
  nonce: string;
}

async function canonical(parts: SignedParts): Promise<Uint8Array> {
  const bodyBytes = typeof parts.body === "string" ? encoder.encode(parts.body) : parts.body;
  const digest = toHex(await crypto.subtle.digest("SHA-256", bodyBytes));
  return encoder.encode(
    [
      "spillway-v1",
      parts.method.toUpperCase(),
      parts.path,
      parts.deployment,
      parts.timestampMs,
      parts.nonce,
      digest,
    ].join("\n"),
  );
}

/**
 * The headers that sign one request.
 *
 * @example
 * ```ts
 * const headers = await signRequest("s3cret", { method: "POST", path: "/v1/completions", body,
 *   deployment: "llama", timestampMs: Date.now(), nonce: crypto.randomUUID() });
 * ```
 */
export async function signRequest(secret: string, parts: SignedParts): Promise<Record<string, string>> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), await canonical(parts));
  return {
    [SIGNATURE_HEADERS.timestamp]: String(parts.timestampMs),
    [SIGNATURE_HEADERS.nonce]: parts.nonce,
    [SIGNATURE_HEADERS.deployment]: parts.deployment,
    [SIGNATURE_HEADERS.signature]: toBase64Url(mac),
  };
}

/** Why a signature was refused (for logs; the client only ever sees 401). */
export type SignatureFailure = "missing" | "malformed" | "expired" | "replayed" | "invalid";

/**
 * Remembers nonces for the validity window, so a captured request cannot be replayed. Memory is bounded by
 * the request rate times the window; entries past the window are dropped as new ones arrive.
 *
 * @example
 * ```ts
 * const guard = new ReplayGuard(30_000);
 * guard.firstSeen("n1", Date.now()); // true
 * guard.firstSeen("n1", Date.now()); // false
 * ```
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  firstSeen(nonce: string, nowMs: number): boolean {
    // Insertion order is time order (timestamps are checked against the window before this is called).
    for (const [old, at] of this.seen) {
      if (nowMs - at <= 2 * this.windowMs) break;
      this.seen.delete(old);
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, nowMs);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}

/**
 * Checks a request's signature against any of `secrets` (current first, then previous ones during a rotation),
 * its timestamp against `windowMs`, and its nonce against the replay guard. HMAC verification is constant-time.
 *
 * @example
 * ```ts
 * const result = await verifyRequest(["s3cret"], headers, { method, path, body }, Date.now(), guard, 30_000);
 * if (!result.ok) return new Response(null, { status: 401 });
 * ```
 */
export async function verifyRequest(
  secrets: readonly string[],
  headers: { get(name: string): string | null },
  request: { method: string; path: string; body: string | Uint8Array },
  nowMs: number,
  guard: ReplayGuard,
  windowMs: number,
): Promise<{ ok: true; deployment: string } | { ok: false; failure: SignatureFailure }> {
  const timestamp = headers.get(SIGNATURE_HEADERS.timestamp);
  const nonce = headers.get(SIGNATURE_HEADERS.nonce);
  const deployment = headers.get(SIGNATURE_HEADERS.deployment);
  const signature = headers.get(SIGNATURE_HEADERS.signature);
  if (!timestamp || !nonce || deployment === null || !signature) return { ok: false, failure: "missing" };
  const timestampMs = Number(timestamp);
  const mac = fromBase64Url(signature);
  if (!/^\d{1,16}$/.test(timestamp) || !mac || nonce.length > 128) return { ok: false, failure: "malformed" };
  if (Math.abs(nowMs - timestampMs) > windowMs) return { ok: false, failure: "expired" };
  const data = await canonical({ ...request, deployment, timestampMs, nonce });
  let valid = false;
  for (const secret of secrets) {
    if (await crypto.subtle.verify("HMAC", await hmacKey(secret), mac, data)) {
      valid = true;
      break;
    }
  }
  if (!valid) return { ok: false, failure: "invalid" };
  // Only a valid signature may take a nonce: garbage must not fill the guard.
  if (!guard.firstSeen(nonce, nowMs)) return { ok: false, failure: "replayed" };
  return { ok: true, deployment };
}
