import type { Context, Env as HonoEnv, MiddlewareHandler } from "hono";
import { openAIError } from "./openai-error";

const encoder = new TextEncoder();

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
  const [da, db] = await Promise.all([digest(a), digest(b)]);
  return crypto.subtle.timingSafeEqual(da, db);
}

/**
 * Requires `Authorization: Bearer <token>` matching the token `tokenOf` returns. Without a configured token
 * every request is refused: an admin route is never open by accident. A refusal reveals nothing but 401.
 *
 * @example
 * ```ts
 * app.use("/spillway/*", bearerAuth((c) => c.env.SPILLWAY_ADMIN_TOKEN));
 * ```
 */
export function bearerAuth<E extends HonoEnv>(tokenOf: (c: Context<E>) => string | undefined): MiddlewareHandler<E> {
  return async function bearerAuth(c, next) {
    const expected = tokenOf(c);
    const given = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
    if (!expected || !given || !(await secretsEqual(given, expected))) {
      return openAIError(401, "unauthorized", "invalid_request_error", "unauthorized", {
        "www-authenticate": 'Bearer realm="spillway"',
      });
    }
    await next();
  };
}
