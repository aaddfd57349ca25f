import { availableParallelism } from "node:os";
import type { Logger } from "../log-line";
import type { EngineOptions } from "../options";
import type { Tokenizer } from "../tokenizer";
import { LlamaConfigError } from "./errors";
import { validateGgufFile } from "./gguf-validate";
import { createLlamaEngine, type LlamaEngine } from "./llama-engine";
import { loadLlamaRuntime } from "./llama-runtime";
import { createLlamaTokenizer } from "./llama-tokenizer";

/**
 * Requests (= context sequences) that run at once when `--max-running-requests` is not given.
 *
 * @example
 * ```ts
 * const sequences = options.maxRunningRequests ?? LLAMA_DEFAULT_SEQUENCES;
 * ```
 */
export const LLAMA_DEFAULT_SEQUENCES = 8;

/**
 * A started llama.cpp engine with the options the server must run with.
 *
 * @example
 * ```ts
 * const { engine, tokenizer, options } = await startLlamaBackend(parsed, logger);
 * ```
 */
export interface LlamaBackend {
  engine: LlamaEngine;
  tokenizer: Tokenizer;
  /** The server's options, adjusted to the engine (see {@link startLlamaBackend}). */
  options: EngineOptions;
  /** e.g. `llama.cpp cpu, 8 sequences x 4096 cells, spillway-tiny.gguf (llama)`. */
  description: string;
  close(): Promise<void>;
}

/**
 * Starts the llama.cpp engine for `--engine llama` and fits the scheduler to it, so the pool stays the
 * authority over the KV cache:
 * - sequences = `--max-running-requests` (default {@link LLAMA_DEFAULT_SEQUENCES}); each holds `--context-length`
 *   cells (default: the model's trained context, at most `--max-total-tokens`), reserved up front;
 * - `--max-total-tokens` caps what the scheduler admits over all sequences (lowered to sequences x context
 *   length when larger: the pool must not promise cells that do not exist);
 * - the prefix cache is off (llama.cpp sequences share no KV) and the page size must be 1 (cells are tokens).
 *
 * @throws LlamaStartError (GgufError, LlamaNotInstalledError, LlamaGpuError, LlamaConfigError).
 * @example
 * ```ts
 * const backend = await startLlamaBackend(engineOptionsSchema.parse({ engine: "llama", modelPath }), logger);
 * ```
 */
export async function startLlamaBackend(options: EngineOptions, logger: Logger): Promise<LlamaBackend> {
  const modelPath = options.modelPath;
  if (modelPath === undefined) throw new LlamaConfigError("--engine llama needs --model-path FILE.gguf");
  if (options.pageSize !== 1)
    throw new LlamaConfigError(`--engine llama needs --page-size 1 (got ${options.pageSize})`);
  const sequences = options.maxRunningRequests ?? LLAMA_DEFAULT_SEQUENCES;
  // With 2 cores, 2 llama.cpp threads made decode steps 10x slower than 1: leave a core to Node's loop.
  const threads = options.threads ?? Math.max(1, availableParallelism() - 1);
  const summary = validateGgufFile(modelPath);
  const contextLength = options.contextLength ?? Math.min(summary.trainedContextLength, options.maxTotalTokens);
  const runtime = await loadLlamaRuntime({
    modelPath,
    gpu: options.gpu,
    sequences,
    contextLength,
    threads,
    logger,
    summary,
  });
  const cells = sequences * contextLength;
  const maxTotalTokens = Math.min(options.maxTotalTokens, cells);
  if (maxTotalTokens < options.maxTotalTokens)
    logger.warning(
      `llama engine: --max-total-tokens ${options.maxTotalTokens} exceeds the engine's ${cells} cells ` +
        `(${sequences} sequences x ${contextLength}); the pool is ${maxTotalTokens}`,
    );
  if (!options.disableRadixCache)
    logger.info("llama engine: prefix (radix) cache off: llama.cpp sequences do not share KV cells");
  const tokenizer = createLlamaTokenizer(runtime.model, runtime.summary.vocabSize);
  const engine = createLlamaEngine({ sequences: runtime.sequences, eosTokenId: tokenizer.eosTokenId });
  const name = modelPath.split(/[\\/]/).pop() ?? modelPath;
  return {
    engine,
    tokenizer,
    options: { ...options, maxRunningRequests: sequences, contextLength, maxTotalTokens, disableRadixCache: true },
    description: `llama.cpp ${runtime.gpu}, ${sequences} sequences x ${contextLength} cells, ${name} (${runtime.summary.architecture})`,
    async close() {
      await engine.settle();
      await runtime.close();
    },
  };
}
