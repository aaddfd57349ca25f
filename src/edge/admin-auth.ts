import type { Context, Env as HonoEnv, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { openAIError } from "./openai-error";

const encoder = new TextEncoder();

/** No lone UTF-16 surrogate (String.prototype.isWellFormed: Node 20 and workerd have it; the ES2023 lib does not). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/**
 * Compares two secrets in constant time (both are hashed first, so their lengths leak nothing either).
 *
 * @example
 * ```ts
 * await secretsEqual("token", "token"); // true
 * ```
 */
export async function secretsEqual(a: string, b: string): Promise<boolean> {
  // TextEncoder turns every lone surrogate into U+FFFD, so two such strings would hash alike: compare them as they are
  // (no header can carry one; only a caller of this function elsewhere could pass it).
  if (!isWellFormed(a) || !isWellFormed(b)) return a === b;
  const [da, db] = await Promise.all([digest(a), digest(b)]);
  return crypto.subtle.timingSafeEqual(da, db);
}

/** Every refusal looks the same (no header, a malformed one, a wrong token): 401 and an OpenAI-style body. */
const refuse = () =>
  openAIError(401, "unauthorized", "invalid_request_error", "unauthorized", {
    "www-authenticate": 'Bearer realm="spillway"',
  });

/**
 * Requires `Authorization: Bearer <token>` matching the token `tokenOf` returns: Hono's `bearerAuth`, with a
 * constant-time comparison. Without a configured token every request is refused: an admin route is never open by
 * accident. A refusal reveals nothing but 401 (thrown as Hono's `HTTPException` carrying that response).
 *
 * @example
 * ```ts
 * app.use("/spillway/*", adminBearerAuth((c) => c.env.SPILLWAY_ADMIN_TOKEN));
 * ```
 */
export function adminBearerAuth<E extends HonoEnv>(
  tokenOf: (c: Context<E>) => string | undefined,
): MiddlewareHandler<E> {
  return bearerAuth<E>({
    realm: "spillway",
    verifyToken: async (token, c) => {
      const expected = tokenOf(c);
      return expected !== undefined && expected !== "" && (await secretsEqual(token, expected));
    },
    noAuthenticationHeader: { message: refuse },
    invalidAuthenticationHeader: { message: refuse },
    invalidToken: { message: refuse },
  });
}
