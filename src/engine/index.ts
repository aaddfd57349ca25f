import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { SchedulerOptions } from "../scheduler/index";
import { answerClientErrors } from "./client-error";
import type { Engine } from "./engine";
import { createEngineLoop, type EngineLoopOptions } from "./engine-loop";
import type { EngineCore } from "./generation";
import { startLlamaBackend } from "./llama/llama-backend";
import { createLogger } from "./log-line";
import { createEngineMetrics, type EngineMetrics } from "./metrics";
import { deploymentNames, type EngineOptions, type EngineOptionsInput, parseEngineOptions } from "./options";
import type { OutputLengthModel } from "./output-length-model";
import { createPacer } from "./pacer";
import { seededRandom } from "./rng";
import { createEngineApp } from "./server";
import type { FetchHandler } from "./shutdown";
import { createSimulatedEngine } from "./simulated-engine";
import type { TimingModel } from "./timing-model";
import { tokenizer as cl100k } from "./tokenizer";

/** How long `close()` lets a response already on its way out finish before it cuts the connection. */
const CLOSE_GRACE_MS = 2000;

export type { Engine } from "./engine";
export type { EngineCore, GenerationRequest, GenerationSink, LoadReport } from "./generation";
// What startEngineServer throws when --engine llama cannot start (a bad model file, node-llama-cpp missing, no GPU):
// a caller tells them from bugs by class, as the CLI does.
export {
  GgufError,
  LlamaConfigError,
  LlamaGpuError,
  LlamaNotInstalledError,
  LlamaStartError,
} from "./llama/errors";
export type { EngineOptions, EngineOptionsInput } from "./options";
export { engineOptionsSchema, parseEngineOptions } from "./options";
export { EngineOptionsError } from "./options-error";
export { defaultOutputLengthModel, eosAfterTokens, type OutputLengthModel } from "./output-length-model";
export { createEngineApp } from "./server";
export { createSimulatedEngine } from "./simulated-engine";
export { decodeStepSeconds, defaultTimingModel, prefillSeconds, type TimingModel } from "./timing-model";

/** A running engine server (see {@link startEngineServer}). */
export interface RunningEngineServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  /** The validated options it runs with. */
  options: EngineOptions;
  /** Its Prometheus metrics (per-server registry). */
  metrics: EngineMetrics;
  /** The engine core (for in-process load probes). */
  core: EngineCore;
  /** The engine behind the scheduler (the simulated GPU, or llama.cpp with `engine: "llama"`). */
  engine: Engine;
  /** Stops accepting, ends in-flight requests with an error, and closes the socket. */
  close(): Promise<void>;
}

/** Extra hooks for programmatic use (not flags). */
export interface StartHooks {
  /** Where log lines go (default stdout). */
  log?: (line: string) => void;
  /**
   * Secrets the edge signs with (current first); when non-empty, inference needs a valid signature. Secrets
   * come from the environment (`SPILLWAY_SIGNING_SECRET`), never from flags or files in the repo.
   */
  signingSecrets?: string[];
  /** Builds the scheduler (default the real one); for tests and experiments. */
  createScheduler?: EngineLoopOptions["createScheduler"];
  /** Wraps the HTTP handler, e.g. with a shutdown gate (`src/engine/shutdown.ts`) that drains on SIGTERM. */
  wrapFetch?: (fetch: FetchHandler) => FetchHandler;
}

/**
 * Starts one engine server (simulated GPU, or llama.cpp with `engine: "llama"`) and resolves once it listens.
 * Options are validated with {@link parseEngineOptions}: a bad or unknown one throws {@link EngineOptionsError}, one
 * line per problem naming the option (it threw zod's `ZodError`, a JSON list of issues, before); `port: 0` picks a
 * free port.
 *
 * @example
 * ```ts
 * const server = await startEngineServer({ port: 0, maxTotalTokens: 4096, speed: 100, log: () => {} });
 * const res = await fetch(`${server.url}/v1/completions`, { method: "POST", body: JSON.stringify({
 *   model: "demo-model", prompt: "hello", max_tokens: 8 }) });
 * await server.close();
 * ```
 */
export async function startEngineServer(input: EngineOptionsInput & StartHooks = {}): Promise<RunningEngineServer> {
  const { log, createScheduler, signingSecrets, wrapFetch, ...rest } = input;
  const parsed = parseEngineOptions(rest);
  const logger = createLogger(parsed.logLevel, log);
  // llama.cpp fits the options to itself (pool, sequences, context length, no prefix cache).
  const llama = parsed.engine === "llama" ? await startLlamaBackend(parsed, logger) : null;
  if (llama) logger.info(`engine: ${llama.description}`);
  const options = llama?.options ?? parsed;
  const tokenizer = llama?.tokenizer ?? cl100k;
  const metrics = createEngineMetrics(options.servedModelName);
  const pacer = createPacer();
  const engine: Engine =
    llama?.engine ??
    createSimulatedEngine({
      timing: timingModelOf(options),
      outputLength: outputLengthModelOf(options),
      eosTokenId: tokenizer.eosTokenId,
      sleep: (s) => pacer.sleep(s),
    });
  const core = createEngineLoop({
    scheduler: schedulerOptionsOf(options),
    maxQueuedRequests: options.maxQueuedRequests,
    engine,
    tokenizer,
    metrics,
    logger,
    onIdle: () => pacer.reset(),
    createScheduler,
  });
  const contextLength = options.contextLength ?? options.maxTotalTokens;
  // The replica name defaults to the bound port, known only after listen: route through a handler
  // that is filled in once the app exists (nothing can connect before listen resolves anyway).
  let handler: (request: Request, env: unknown) => Response | Promise<Response> = () =>
    new Response(null, { status: 503 });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve(
      { fetch: (request, env) => handler(request, env), hostname: options.host, port: options.port },
      () => resolve(s),
    );
    // serve() without `createServer` makes a node:http server.
    answerClientErrors(s as Server);
    s.once("error", reject);
  }).catch(async (error: unknown) => {
    await core.close();
    await llama?.close();
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  const name = options.name ?? `engine-${port}`;
  const app = createEngineApp({
    name,
    core,
    tokenizer,
    limits: {
      servedModelName: options.servedModelName,
      maxTotalTokens: options.maxTotalTokens,
      contextLength,
      pageSize: options.pageSize,
    },
    metrics,
    logger,
    maxBodyBytes: options.maxBodyBytes,
    accessLog: options.accessLog,
    edgeSignature: {
      secrets: (signingSecrets ?? []).filter((secret) => secret.length > 0),
      windowMs: options.signatureWindowS * 1000,
      protectLoadAndMetrics: options.protectLoadMetrics,
      deployments: options.deployment === undefined ? undefined : deploymentNames(options.deployment),
      logger,
    },
  });
  const appFetch: FetchHandler = (request, env) => app.fetch(request, env);
  handler = wrapFetch ? wrapFetch(appFetch) : appFetch;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    options,
    metrics,
    core,
    engine,
    async close() {
      await core.close();
      await llama?.close();
      await new Promise<void>((resolve) => {
        const http = server as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
        // A response the handler has returned may still be on its way out (the shutdown gate counts it done once
        // its body has been read, before the last bytes are written): cutting every connection at once lost
        // such answers on a busy machine. Idle connections close now; busy ones get CLOSE_GRACE_MS to finish.
        const cut = setTimeout(() => http.closeAllConnections?.(), CLOSE_GRACE_MS);
        // A kept-alive connection whose response ends after close() is not closed by it: close it once idle.
        const idle = setInterval(() => http.closeIdleConnections?.(), 50);
        server.close(() => {
          clearTimeout(cut);
          clearInterval(idle);
          resolve();
        });
        http.closeIdleConnections?.();
      });
    },
  };
}

/** The scheduler's options from the engine's (SGLang's flags and environment variables). */
export function schedulerOptionsOf(o: EngineOptions): SchedulerOptions {
  return {
    maxTotalTokens: o.maxTotalTokens,
    pageSize: o.pageSize,
    maxRunningRequests: o.maxRunningRequests,
    maxPrefillTokens: o.maxPrefillTokens,
    chunkedPrefillSize: o.chunkedPrefillSize,
    scheduleConservativeness: o.scheduleConservativeness,
    schedulePolicy: o.schedulePolicy,
    disableRadixCache: o.disableRadixCache,
    clipMaxNewTokens: o.clipMaxNewTokensEstimation,
    initNewTokenRatio: o.initNewTokenRatio,
    minNewTokenRatioFactor: o.minNewTokenRatioFactor,
    newTokenRatioDecaySteps: o.newTokenRatioDecaySteps,
    retractDecodeSteps: o.retractDecodeSteps,
    decodeLogInterval: o.decodeLogInterval,
    random: seededRandom(o.randomSeed),
  };
}

/** The simulated GPU's timing model from the engine's options. */
export function timingModelOf(o: EngineOptions): TimingModel {
  return {
    prefillTokensPerS: o.prefillThroughput,
    prefillOverheadS: o.prefillOverheadMs / 1000,
    decodeBaseS: o.decodeBaseMs / 1000,
    decodePerRequestS: o.decodePerReqMs / 1000,
    decodePerKTokenS: o.decodePerKTokenMs / 1000,
    speed: o.speed,
  };
}

/** The output-length model from the engine's options. */
export function outputLengthModelOf(o: EngineOptions): OutputLengthModel {
  if (o.eosDistribution === "exponential")
    return { kind: "exponential", meanTokens: o.eosMeanTokens, seed: o.randomSeed };
  if (o.eosDistribution === "never") return { kind: "never", seed: o.randomSeed };
  return { kind: "uniform", minFraction: o.eosMinFraction, maxFraction: o.eosMaxFraction, seed: o.randomSeed };
}
