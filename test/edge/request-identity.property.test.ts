import fc from "fast-check";
import { Hono } from "hono";
import { describe, expect, it, vi } from "vitest";
import { adminBearerAuth, secretsEqual } from "../../src/edge/admin-auth";
import { propertyRuns } from "../support/property-runs";

/**
 * The admin routes' bearer check (`src/edge/admin-auth.ts`) under arbitrary configured and presented tokens, in
 * workerd (its `crypto.subtle.timingSafeEqual` is Workers-only; the signing and fingerprint properties are in
 * test/node/core/request-identity.property.test.ts). Held:
 *
 * - `secretsEqual(a, b)` is `a === b` for any two strings a header can carry, near misses included (one character
 *   off, case, a prefix, whitespace), and decides by `timingSafeEqual` over two SHA-256 digests, whatever the
 *   lengths;
 * - a request passes iff a token is configured (not empty) and it presents exactly that token as
 *   `Bearer <token>` (the scheme in any case, any spaces after it, as Hono reads it); every refusal (no header,
 *   another scheme, a malformed or a wrong token, no token configured) is the same 401, body and
 *   `www-authenticate` alike.
 */

const runs = propertyRuns(200, 20261205);

/** Tokens Hono's bearer check reads (RFC 6750's token68). */
const token = fc.string({ unit: fc.constantFrom(..."aAzZ09._~+/-"), minLength: 1, maxLength: 24 });

/** A token near `t`: one character changed, case flipped, cut short, extended, or `t` itself. */
const near = (t: string) =>
  fc.oneof(
    fc.constant(t),
    fc.constant(t.toUpperCase()),
    fc.constant(t.toLowerCase()),
    fc.nat(t.length).map((n) => t.slice(0, n)),
    fc.constantFrom("a", "=", "A", "0").map((c) => `${t}${c}`),
    fc
      .tuple(fc.nat(Math.max(0, t.length - 1)), fc.constantFrom("a", "B", "9", "-"))
      .map(([i, c]) => `${t.slice(0, i)}${c}${t.slice(i + 1)}`),
    token,
  );

describe("admin bearer auth", () => {
  it("secretsEqual is string equality, decided by timingSafeEqual over equal-length digests", async () => {
    await fc.assert(
      fc.asyncProperty(
        token.chain((t) => fc.tuple(fc.constant(t), near(t), fc.constantFrom("", " ", "\t"))),
        async ([a, b, pad]) => {
          const spy = vi.spyOn(crypto.subtle, "timingSafeEqual");
          try {
            for (const [x, y] of [
              [a, b],
              [a, `${pad}${b}`],
              [`${b}${pad}`, a],
            ] as const) {
              spy.mockClear();
              expect(await secretsEqual(x, y)).toBe(x === y);
              expect(spy).toHaveBeenCalledTimes(1);
              const [da, db] = spy.mock.calls[0] as [ArrayBuffer, ArrayBuffer];
              expect([da.byteLength, db.byteLength]).toEqual([32, 32]);
            }
          } finally {
            spy.mockRestore();
          }
        },
      ),
      runs,
    );
  });

  it("passes exactly the configured token, and refuses everything else with the same 401", async () => {
    const configuredArb = fc.oneof(fc.constant(undefined), fc.constant(""), token);
    const caseArb = configuredArb.chain((configured) =>
      fc.record({
        configured: fc.constant(configured),
        presented: configured ? near(configured) : token,
        scheme: fc.constantFrom("Bearer", "bearer", "BEARER", "Basic", "Bearerx", "Token", ""),
        spaces: fc.integer({ min: 1, max: 3 }),
        /** A header without a token (or none at all) instead. */
        bare: fc.option(fc.constantFrom("", "Bearer", "Bearer ", "Basic dXNlcg=="), { nil: undefined }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ configured, presented, scheme, spaces, bare }) => {
        const app = new Hono();
        app.use(
          "/spillway/*",
          adminBearerAuth(() => configured),
        );
        app.get("/spillway/stats", (c) => c.text("stats"));
        const header = bare ?? `${scheme}${" ".repeat(spaces)}${presented}`;
        const res = await app.request("http://edge.test/spillway/stats", {
          headers: header === "" ? {} : { authorization: header },
        });
        const passes =
          configured !== undefined &&
          configured !== "" &&
          bare === undefined &&
          scheme.toLowerCase() === "bearer" &&
          presented === configured;
        if (passes) {
          expect([res.status, await res.text()]).toEqual([200, "stats"]);
          return;
        }
        const reference = await app.request("http://edge.test/spillway/stats");
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="spillway"');
        expect(res.headers.get("www-authenticate")).toBe(reference.headers.get("www-authenticate"));
        expect(await res.text()).toBe(await reference.text());
      }),
      runs,
    );
  });
});
