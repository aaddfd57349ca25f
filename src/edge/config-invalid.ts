import { ConfigError, configFromEnv, type SpillwayConfig } from "./config";
import type { Env } from "./env";
import { openAIError } from "./openai-error";

/**
 * The answer to a request that an operator's mistake (an invalid `SPILLWAY_CONFIG`, a missing binding) keeps from
 * being served: why goes to the log as a `spillway.config_invalid` line (it may name the fleet), the client gets
 * OpenAI's 500 shape, which its SDK reads as a server error, not Hono's plain-text "Internal Server Error".
 *
 * @example
 * ```ts
 * if (!routers) return configInvalid("the Worker has no DEPLOYMENT_ROUTER binding: ...", "the gateway has no ...");
 * ```
 */
export function configInvalid(logMessage: string, clientMessage: string): Response {
  console.error(JSON.stringify({ event: "spillway.config_invalid", message: logMessage }));
  return openAIError(500, clientMessage, "server_error", "config_invalid");
}

/** What a client is told when `SPILLWAY_CONFIG` does not parse or validate (the log line says why). */
export const CONFIG_INVALID = "the gateway's SPILLWAY_CONFIG is invalid (its log says why)";

/**
 * The configuration, or the answer an invalid one gets ({@link configInvalid} with {@link CONFIG_INVALID}), so that
 * every route of a Worker answers an invalid `SPILLWAY_CONFIG` alike: the middleware's and `spillwayModels()`'s.
 * Any other error is thrown.
 *
 * @example
 * ```ts
 * const config = configOrInvalid(c.env.SPILLWAY_CONFIG);
 * if (config instanceof Response) return config;
 * ```
 */
export function configOrInvalid(source: Env["SPILLWAY_CONFIG"]): SpillwayConfig | Response {
  try {
    return configFromEnv(source);
  } catch (error) {
    // The operator's mistake, not the client's.
    if (error instanceof ConfigError) return configInvalid(error.message, CONFIG_INVALID);
    throw error;
  }
}
