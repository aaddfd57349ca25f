import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ReplayGuard,
  SIGNATURE_HEADERS,
  type SignedParts,
  signRequest,
  verifyRequest,
} from "../../../src/core/request-signature";
import { propertyRuns } from "../../support/property-runs";

/**
 * The request signature's contract (src/core/request-signature.ts), held against a model written here:
 *
 * - what is signed: method (case-insensitive), path with query, body bytes, deployment, timestamp and nonce;
 *   changing any one of them, or the secret, makes a signature `invalid` (or `expired` when the timestamp moved
 *   out of the window), and a signature verifies under any of the accepted secrets;
 * - the deployment binding: a valid signature names the deployment it was made for, and no other;
 * - the window: a timestamp at most `windowMs` from the verifier's clock, on either side, is fresh (the edges
 *   included), one millisecond more is `expired`;
 * - the replay guard: with a clock that never goes back, a nonce is accepted at most once, however the
 *   presentations of its request (signature spellings included) are spread over time; a refused signature never
 *   takes a nonce; the guard remembers no more than the nonces accepted in the last two windows;
 * - malformed input of every length (signatures, timestamps, nonces) is refused without a throw, never accepted.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(120, 20261216);
const runs = (factor = 1) => ({ numRuns: Math.max(1, Math.round(RUNS * factor)), seed: SEED });

const WINDOW = 30_000;
const T0 = 1_750_000_000_000;

// ---------------------------------------------------------------------------------------------------------------
// Generators.

const secret = fc.string({ minLength: 1, maxLength: 24 });
const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "post", "Get");
/** Paths and queries as a URL parser leaves them (the engine verifies `pathname + search`). */
const path = fc
  .tuple(
    fc.array(fc.stringMatching(/^[A-Za-z0-9._~%-]{0,8}$/), { minLength: 1, maxLength: 4 }),
    fc.option(fc.stringMatching(/^[A-Za-z0-9=&%._~-]{0,12}$/), { nil: undefined }),
  )
  .map(([segments, query]) => `/${segments.join("/")}${query === undefined ? "" : `?${query}`}`);
const body = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.uint8Array({ maxLength: 40 }),
);
/** Header values cannot hold line breaks; everything else a header may carry. */
const headerText = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom("a", "Z", "0", "-", "_", ".", " ", "/", '"', "é", "😀"), minLength, maxLength });
const deployment = headerText(0, 16);
const nonce = headerText(1, 128);
const timestamp = fc.integer({ min: T0 - 10 * WINDOW, max: T0 + 10 * WINDOW });

const parts: fc.Arbitrary<SignedParts> = fc.record({
  method,
  path,
  body,
  deployment,
  timestampMs: timestamp,
  nonce,
});

// ---------------------------------------------------------------------------------------------------------------
// Helpers.

type Request = { method: string; path: string; body: string | Uint8Array };
const requestOf = (p: SignedParts): Request => ({ method: p.method, path: p.path, body: p.body });

/** A header lookup over a plain record (verifyRequest's interface; `Headers` would refuse some test values). */
const lookup = (headers: Record<string, string>) => ({
  get: (name: string) => (Object.hasOwn(headers, name) ? (headers[name] as string) : null),
});

function verify(
  secrets: readonly string[],
  headers: Record<string, string>,
  request: Request,
  nowMs: number,
  guard = new ReplayGuard(WINDOW),
) {
  return verifyRequest(secrets, lookup(headers), request, nowMs, guard, WINDOW);
}

const bytesOf = (b: string | Uint8Array) => (typeof b === "string" ? new TextEncoder().encode(b) : b);
const sameBytes = (a: string | Uint8Array, b: string | Uint8Array) => {
  const x = bytesOf(a);
  const y = bytesOf(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The spellings of a base64url text that decode to the same bytes: its last character with other unused bits. */
function sameBytesSpellings(text: string): string[] {
  const unusedBits = ((4 - (text.length % 4)) % 4) * 2; // 43 characters (32 bytes): 2 bits of the last one unused
  const last = BASE64URL.indexOf(text.at(-1) as string);
  const spellings: string[] = [];
  for (let low = 0; low < 2 ** unusedBits; low++) {
    spellings.push(text.slice(0, -1) + BASE64URL[(last & ~(2 ** unusedBits - 1)) | low]);
  }
  return spellings;
}

// ---------------------------------------------------------------------------------------------------------------
// What is signed.

describe("request signature: what is signed", () => {
  it("verifies under the signing secret wherever it stands among the accepted ones, and names its deployment", async () => {
    await fc.assert(
      fc.asyncProperty(
        parts,
        secret,
        fc.array(secret, { maxLength: 3 }),
        fc.nat(),
        fc.integer({ min: -WINDOW, max: WINDOW }),
        async (p, key, others, at, skew) => {
          const secrets = others.filter((s) => s !== key);
          secrets.splice(at % (secrets.length + 1), 0, key);
          const headers = await signRequest(key, p);
          const result = await verify(secrets, headers, requestOf(p), p.timestampMs + skew);
          expect(result).toEqual({ ok: true, deployment: p.deployment });
        },
      ),
      runs(),
    );
  });

  type Change =
    | { field: "method"; value: string }
    | { field: "path"; value: string }
    | { field: "body"; value: string | Uint8Array }
    | { field: "deployment"; value: string }
    | { field: "timestamp"; value: number }
    | { field: "nonce"; value: string }
    | { field: "secret"; value: string };

  const change: fc.Arbitrary<Change> = fc.oneof(
    method.map((value) => ({ field: "method", value }) as const),
    path.map((value) => ({ field: "path", value }) as const),
    body.map((value) => ({ field: "body", value }) as const),
    deployment.map((value) => ({ field: "deployment", value }) as const),
    fc.integer({ min: -2 * WINDOW, max: 2 * WINDOW }).map((value) => ({ field: "timestamp", value }) as const),
    nonce.map((value) => ({ field: "nonce", value }) as const),
    secret.map((value) => ({ field: "secret", value }) as const),
  );

  it("refuses a signature when any one signed part, or the secret, changed; accepts it when nothing did", async () => {
    await fc.assert(
      fc.asyncProperty(parts, secret, change, async (p, key, c) => {
        const headers = await signRequest(key, p);
        const request = requestOf(p);
        const presented = { ...headers };
        let secrets = [key];
        let unchanged: boolean;
        switch (c.field) {
          case "method":
            request.method = c.value;
            unchanged = c.value.toUpperCase() === p.method.toUpperCase();
            break;
          case "path":
            request.path = c.value;
            unchanged = c.value === p.path;
            break;
          case "body":
            request.body = c.value;
            unchanged = sameBytes(c.value, p.body);
            break;
          case "deployment":
            presented[SIGNATURE_HEADERS.deployment] = c.value;
            unchanged = c.value === p.deployment;
            break;
          case "timestamp":
            presented[SIGNATURE_HEADERS.timestamp] = String(p.timestampMs + c.value);
            unchanged = c.value === 0;
            break;
          case "nonce":
            presented[SIGNATURE_HEADERS.nonce] = c.value;
            unchanged = c.value === p.nonce;
            break;
          case "secret":
            secrets = [c.value];
            unchanged = c.value === key;
            break;
        }
        // The verifier's clock is the signer's: only a moved timestamp can leave the window.
        const result = await verify(secrets, presented, request, p.timestampMs);
        if (unchanged) expect(result).toEqual({ ok: true, deployment: p.deployment });
        else if (c.field === "timestamp" && Math.abs(c.value) > WINDOW)
          expect(result).toEqual({ ok: false, failure: "expired" });
        else expect(result).toEqual({ ok: false, failure: "invalid" });
      }),
      runs(2),
    );
  });

  it("binds a signature to its deployment: presented for any other, it is invalid", async () => {
    await fc.assert(
      fc.asyncProperty(parts, secret, deployment, async (p, key, other) => {
        fc.pre(other !== p.deployment);
        const headers = await signRequest(key, p);
        const result = await verify(
          [key],
          { ...headers, [SIGNATURE_HEADERS.deployment]: other },
          requestOf(p),
          p.timestampMs,
        );
        expect(result).toEqual({ ok: false, failure: "invalid" });
      }),
      runs(),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The window.

describe("request signature: the validity window", () => {
  it("is fresh exactly within windowMs of the verifier's clock on either side, the edges included", async () => {
    await fc.assert(
      fc.asyncProperty(
        parts,
        fc.oneof(
          fc.constantFrom(-WINDOW - 1, -WINDOW, -WINDOW + 1, 0, WINDOW - 1, WINDOW, WINDOW + 1),
          fc.integer({ min: -3 * WINDOW, max: 3 * WINDOW }),
        ),
        async (p, skew) => {
          const headers = await signRequest("k", p);
          const result = await verify(["k"], headers, requestOf(p), p.timestampMs + skew);
          if (Math.abs(skew) <= WINDOW) expect(result).toEqual({ ok: true, deployment: p.deployment });
          else expect(result).toEqual({ ok: false, failure: "expired" });
        },
      ),
      runs(),
    );
  });

  it("refuses a timestamp that is not 1 to 16 digits as malformed, whatever the clock", async () => {
    const notDigits = fc.oneof(
      fc.string({ maxLength: 20 }).filter((t) => t !== "" && !/^\d{1,16}$/.test(t)),
      fc.integer({ min: 17, max: 40 }).map((n) => "1".repeat(n)),
      timestamp.chain((t) =>
        fc.constantFrom(`+${t}`, `-${t}`, ` ${t}`, `${t} `, `${t}.0`, `${t}e0`, `0x${t.toString(16)}`, `${t}n`),
      ),
    );
    await fc.assert(
      fc.asyncProperty(parts, notDigits, async (p, stamp) => {
        const headers = await signRequest("k", p);
        const result = await verify(
          ["k"],
          { ...headers, [SIGNATURE_HEADERS.timestamp]: stamp },
          requestOf(p),
          p.timestampMs,
        );
        expect(result).toEqual({ ok: false, failure: "malformed" });
      }),
      runs(),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Replays.

describe("request signature: the replay guard", () => {
  /** One presentation: which signed request (by index), in which spelling of its signature, after how long. */
  const presentation = fc.record({
    which: fc.nat({ max: 3 }),
    spelling: fc.nat({ max: 3 }),
    afterMs: fc.oneof(
      fc.constantFrom(0, 1, WINDOW - 1, WINDOW, WINDOW + 1, 2 * WINDOW, 2 * WINDOW + 1),
      fc.integer({ min: 0, max: 3 * WINDOW }),
    ),
  });

  it("with a clock that never goes back, accepts each signed request at most once, and only when fresh", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ skew: fc.integer({ min: -2 * WINDOW, max: 2 * WINDOW }), nonce }), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.array(presentation, { minLength: 1, maxLength: 14 }),
        async (requests, presentations) => {
          const guard = new ReplayGuard(WINDOW);
          const signed = await Promise.all(
            requests.map(async (r, i) => {
              // Every request signed at its own time around T0; a nonce may be shared by two requests.
              const p: SignedParts = {
                method: "POST",
                path: "/v1/completions",
                body: `{"n":${i}}`,
                deployment: "d",
                timestampMs: T0 + r.skew,
                nonce: r.nonce,
              };
              return { p, headers: await signRequest("k", p) };
            }),
          );
          // When each nonce was last taken. The guard keeps a nonce two windows: a request signed with it is fresh
          // only within a window of its timestamp, and was taken within a window of that too, so no copy of it can
          // be fresh any later. A different request may take the nonce again after that (seed 424242, 600 runs:
          // two requests sharing a nonce, signed 6.4 s apart, the second presented 60.001 s after the first).
          const takenAt = new Map<string, number>();
          const acceptedRequests = new Set<number>();
          const acceptedAt: number[] = [];
          // The guard forgets old nonces when a valid signature asks it about a nonce, so its memory is bounded
          // as of that moment.
          let lastAsked = Number.NEGATIVE_INFINITY;
          let now = T0 - 2 * WINDOW;
          for (const { which, spelling, afterMs } of presentations) {
            now += afterMs;
            const index = which % signed.length;
            const { p, headers } = signed[index] as (typeof signed)[number];
            const spellings = sameBytesSpellings(headers[SIGNATURE_HEADERS.signature] as string);
            const presented = {
              ...headers,
              [SIGNATURE_HEADERS.signature]: spellings[spelling % spellings.length] as string,
            };
            const result = await verify(["k"], presented, requestOf(p), now, guard);
            const taken = takenAt.get(p.nonce);
            if (Math.abs(now - p.timestampMs) > WINDOW) expect(result).toEqual({ ok: false, failure: "expired" });
            else if (taken !== undefined && now - taken <= 2 * WINDOW) {
              expect(result).toEqual({ ok: false, failure: "replayed" });
              lastAsked = now;
            } else {
              expect(result).toEqual({ ok: true, deployment: "d" });
              // The guarantee itself: a captured request, in any spelling, is never let in a second time.
              expect(acceptedRequests.has(index)).toBe(false);
              acceptedRequests.add(index);
              takenAt.set(p.nonce, now);
              acceptedAt.push(now);
              lastAsked = now;
            }
            // Bounded memory: no more than the nonces accepted within two windows of the guard's last question.
            expect(guard.size).toBeLessThanOrEqual(acceptedAt.filter((at) => lastAsked - at <= 2 * WINDOW).length);
          }
        },
      ),
      runs(),
    );
  });

  it("lets no refused signature take a nonce: garbage first, then the real request is still accepted", async () => {
    await fc.assert(
      fc.asyncProperty(parts, fc.constantFrom("secret", "body", "mac"), async (p, how) => {
        const guard = new ReplayGuard(WINDOW);
        const headers = await signRequest("k", p);
        const forged =
          how === "secret"
            ? await signRequest("not-k", p)
            : how === "mac"
              ? { ...headers, [SIGNATURE_HEADERS.signature]: "A".repeat(43) }
              : headers;
        const request = how === "body" ? { ...requestOf(p), body: `${String(p.body)}!` } : requestOf(p);
        expect(await verify(["k"], forged, request, p.timestampMs, guard)).toEqual({ ok: false, failure: "invalid" });
        expect(guard.size).toBe(0);
        expect(await verify(["k"], headers, requestOf(p), p.timestampMs, guard)).toEqual({
          ok: true,
          deployment: p.deployment,
        });
      }),
      runs(0.5),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Malformed headers.

describe("request signature: malformed headers of every length", () => {
  it("refuses a signature of any length over base64url's alphabet without a throw: malformed at 4k+1, else invalid", async () => {
    await fc.assert(
      fc.asyncProperty(
        parts,
        fc
          .integer({ min: 1, max: 96 })
          .chain((length) => fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: length, maxLength: length })),
        async (p, signature) => {
          const headers = await signRequest("k", p);
          fc.pre(!sameBytesSpellings(headers[SIGNATURE_HEADERS.signature] as string).includes(signature));
          const result = await verify(
            ["k"],
            { ...headers, [SIGNATURE_HEADERS.signature]: signature },
            requestOf(p),
            p.timestampMs,
          );
          expect(result).toEqual({ ok: false, failure: signature.length % 4 === 1 ? "malformed" : "invalid" });
        },
      ),
      runs(2),
    );
  });

  it("refuses every length 0-100 of every kind of signature text (padding, blanks, base64's + and /, others)", async () => {
    const headers = await signRequest("k", {
      method: "POST",
      path: "/p",
      body: "",
      deployment: "d",
      timestampMs: T0,
      nonce: "n",
    });
    const kinds = ["A", "=", " ", "+", "/", "é", "\u0000", "%"];
    for (let length = 0; length <= 100; length++) {
      for (const kind of kinds) {
        // A base64url text with one foreign character in it (or, for "A", none: a well-formed wrong MAC).
        const signature = length === 0 ? "" : "A".repeat(length - 1) + kind;
        const result = await verify(
          ["k"],
          { ...headers, [SIGNATURE_HEADERS.signature]: signature },
          { method: "POST", path: "/p", body: "" },
          T0,
        );
        const expected =
          length === 0 ? "missing" : kind === "A" ? (length % 4 === 1 ? "malformed" : "invalid") : "malformed";
        expect(result, `signature ${JSON.stringify(signature)}`).toEqual({ ok: false, failure: expected });
      }
    }
  });

  it("refuses a nonce longer than 128 characters as malformed, an empty one as missing, and takes 128", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 300 }), async (length) => {
        const p: SignedParts = {
          method: "POST",
          path: "/p",
          body: "",
          deployment: "d",
          timestampMs: T0,
          nonce: "n".repeat(length),
        };
        const result = await verify(["k"], await signRequest("k", p), requestOf(p), T0);
        if (length === 0) expect(result).toEqual({ ok: false, failure: "missing" });
        else if (length > 128) expect(result).toEqual({ ok: false, failure: "malformed" });
        else expect(result).toEqual({ ok: true, deployment: "d" });
      }),
      runs(0.5),
    );
  });

  it("refuses a request missing any one header as missing (an empty deployment is a deployment)", async () => {
    await fc.assert(
      fc.asyncProperty(
        parts,
        fc.constantFrom(...Object.values(SIGNATURE_HEADERS)),
        fc.boolean(),
        async (p, name, empty) => {
          const headers = await signRequest("k", p);
          const presented: Record<string, string> = { ...headers };
          if (empty) presented[name] = "";
          else delete presented[name];
          const result = await verify(["k"], presented, requestOf(p), p.timestampMs);
          if (name === SIGNATURE_HEADERS.deployment && empty) {
            expect(result).toEqual(
              p.deployment === "" ? { ok: true, deployment: "" } : { ok: false, failure: "invalid" },
            );
          } else expect(result).toEqual({ ok: false, failure: "missing" });
        },
      ),
      runs(),
    );
  });
});
