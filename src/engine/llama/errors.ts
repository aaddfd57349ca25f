/**
 * Errors that stop `--engine llama` from starting, each with a message meant for the operator. The CLI
 * prints them without a stack trace and exits with status 1.
 *
 * @example
 * ```ts
 * try { await startEngineServer(options); }
 * catch (e) { if (e instanceof LlamaStartError) { console.error(`engine: ${e.message}`); process.exit(1); } throw e; }
 * ```
 */
export class LlamaStartError extends Error {
  override name = "LlamaStartError";
}

/**
 * A model file we refuse to hand to llama.cpp; the message names the file and what is wrong.
 *
 * @example
 * ```ts
 * throw new GgufError(`model file ${path}: missing metadata key llama.feed_forward_length`);
 * ```
 */
export class GgufError extends LlamaStartError {
  override name = "GgufError";
}

/**
 * The optional node-llama-cpp package is not installed.
 *
 * @example
 * ```ts
 * if (!nodeLlamaCppLocation().installed) throw new LlamaNotInstalledError(`install it: ${LLAMA_INSTALL_COMMAND}`);
 * ```
 */
export class LlamaNotInstalledError extends LlamaStartError {
  override name = "LlamaNotInstalledError";
}

/**
 * `--gpu cuda` could not be honoured. There is no fallback to CPU: an operator who asked for the GPU and
 * silently got a CPU engine 100x slower would find out from the latency graphs.
 *
 * @example
 * ```ts
 * if (llama.gpu !== "cuda") throw new LlamaGpuError(`--gpu cuda: llama.cpp loaded with backend '${llama.gpu}'`);
 * ```
 */
export class LlamaGpuError extends LlamaStartError {
  override name = "LlamaGpuError";
}

/**
 * Options that llama.cpp cannot run with (e.g. a page size other than 1).
 *
 * @example
 * ```ts
 * if (options.pageSize !== 1) throw new LlamaConfigError("--engine llama needs --page-size 1");
 * ```
 */
export class LlamaConfigError extends LlamaStartError {
  override name = "LlamaConfigError";
}
