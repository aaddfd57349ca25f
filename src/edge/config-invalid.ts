import { openAIError } from "./openai-error";

/**
 * The answer to a request that an operator's mistake (an invalid `SPILLWAY_CONFIG`, a missing binding) keeps from
 * being served: why goes to the log as a `spillway.config_invalid` line (it may name the fleet), the client gets
 * OpenAI's 500 shape, which its SDK reads as a server error, not Hono's plain-text "Internal Server Error".
 *
 * @example
 * ```ts
 * try {
 *   config = configFromEnv(c.env.SPILLWAY_CONFIG);
 * } catch (error) {
 *   if (error instanceof ConfigError) return configInvalid(error.message, CONFIG_INVALID);
 *   throw error;
 * }
 * ```
 */
export function configInvalid(logMessage: string, clientMessage: string): Response {
  console.error(JSON.stringify({ event: "spillway.config_invalid", message: logMessage }));
  return openAIError(500, clientMessage, "server_error", "config_invalid");
}

/** What a client is told when `SPILLWAY_CONFIG` does not parse or validate (the log line says why). */
export const CONFIG_INVALID = "the gateway's SPILLWAY_CONFIG is invalid (its log says why)";
