import type { DeploymentConfig } from "./config";

/** The deployment names a secret it cannot find: refusing beats sending the client's own key upstream. */
export class MissingUpstreamSecretError extends Error {
  override name = "MissingUpstreamSecretError";
}

/**
 * The backend API key of a deployment (e.g. vLLM's `--api-key`): the value of the Worker secret named by
 * `upstreamApiKeySecret`, or `undefined` when the deployment names none. Throws when the secret is named but
 * not bound (a deploy that forgot `wrangler secret put`), unless `required` is false (a probe of a server's
 * `/metrics`, which vLLM, SGLang and TGI leave open, goes without it).
 *
 * @example
 * ```ts
 * // SPILLWAY_CONFIG: {"deployments":{"llama":{"replicas":[...],"upstreamApiKeySecret":"VLLM_API_KEY"}}}
 * upstreamApiKey(env, config.deployments.llama); // env.VLLM_API_KEY
 * ```
 */
export function upstreamApiKey(env: object, deployment: DeploymentConfig, required = true): string | undefined {
  const name = deployment.upstreamApiKeySecret;
  if (name === undefined) return undefined;
  const value = Object.hasOwn(env, name) ? (env as Record<string, unknown>)[name] : undefined;
  if (typeof value !== "string" || value === "") {
    if (!required) return undefined;
    throw new MissingUpstreamSecretError(`the Worker has no secret ${name} (upstreamApiKeySecret)`);
  }
  return value;
}
