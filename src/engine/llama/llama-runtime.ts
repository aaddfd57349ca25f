import type { Logger } from "../log-line";
import { LlamaGpuError, LlamaStartError } from "./errors";
import { type GgufSummary, validateGgufFile } from "./gguf-validate";
import {
  importNodeLlamaCpp,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaLogLevelName,
  type LlamaModel,
  nodeLlamaCppLocation,
} from "./node-llama-cpp";

/**
 * What the CUDA build needs, for the error message (the README says the same).
 *
 * @example
 * ```ts
 * throw new LlamaGpuError(`--gpu cuda: ${cause}. ${CUDA_REQUIREMENTS}.`);
 * ```
 */
export const CUDA_REQUIREMENTS =
  "node-llama-cpp's prebuilt linux-x64 CUDA binary needs an NVIDIA GPU with its driver (libcuda.so.1) and the " +
  "CUDA runtime libraries on the loader path: libcudart.so.13 and libcublas.so.13 (CUDA 13, driver 580 or newer), " +
  "or libcudart.so.12 and libcublas.so.12 (CUDA 12, driver 525 or newer) for its fallback build";

/**
 * Options of {@link loadLlamaRuntime}.
 *
 * @example
 * ```ts
 * const o: LlamaRuntimeOptions = { modelPath, gpu: "cpu", sequences: 8, contextLength: 2048, threads: 1, logger };
 * ```
 */
export interface LlamaRuntimeOptions {
  modelPath: string;
  gpu: "cpu" | "cuda";
  /** Context sequences = the most requests that run at once. */
  sequences: number;
  /** KV cells of each sequence. */
  contextLength: number;
  /** CPU threads for evaluation. */
  threads: number;
  logger: Logger;
  /** The file's summary when the caller already validated it. */
  summary?: GgufSummary;
}

/**
 * A loaded model with one context of `sequences` sequences.
 *
 * @example
 * ```ts
 * const engine = createLlamaEngine({ sequences: runtime.sequences, eosTokenId: runtime.model.tokens.eos ?? -1 });
 * ```
 */
export interface LlamaRuntime {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequences: LlamaContextSequence[];
  summary: GgufSummary;
  /** The backend that loaded: "cuda" or "cpu". */
  gpu: string;
  close(): Promise<void>;
}

/**
 * Validates the model file ({@link validateGgufFile}), loads node-llama-cpp's prebuilt binary (never builds,
 * never downloads), the model, and one context with `sequences` sequences of `contextLength` cells each.
 * Each sequence's context shift throws: the scheduler keeps every request inside its cells, so a shift
 * (which would silently drop a request's oldest tokens) can only be a bug.
 *
 * @throws GgufError, LlamaNotInstalledError, LlamaGpuError, LlamaStartError (no CPU build could be loaded, or llama.cpp
 *   refused the model or the context).
 * @example
 * ```ts
 * const rt = await loadLlamaRuntime({ modelPath, gpu: "cpu", sequences: 8, contextLength: 2048, threads: 1, logger });
 * await rt.close();
 * ```
 */
export async function loadLlamaRuntime(o: LlamaRuntimeOptions): Promise<LlamaRuntime> {
  const summary = o.summary ?? validateGgufFile(o.modelPath);
  const { getLlama } = await importNodeLlamaCpp();
  const logger = (level: LlamaLogLevelName, message: string) => {
    const line = `llama.cpp: ${message.trimEnd()}`;
    if (level === "fatal" || level === "error") o.logger.error(line);
    else if (level === "warn") o.logger.warning(line);
    else o.logger.debug(line);
  };
  const common = {
    build: "never",
    skipDownload: true,
    usePrebuiltBinaries: true,
    progressLogs: false,
    maxThreads: o.threads,
    logLevel: "warn",
    logger,
  } as const;
  let llama: Llama;
  if (o.gpu === "cuda") {
    try {
      llama = await getLlama({ ...common, gpu: "cuda" });
    } catch (error) {
      throw new LlamaGpuError(
        `--gpu cuda: the CUDA build of llama.cpp could not be loaded (${(error as Error).message || (error as Error).name}). ` +
          `${CUDA_REQUIREMENTS}. Nothing falls back to CPU; run with --gpu cpu to use the CPU.`,
      );
    }
    if (llama.gpu !== "cuda") {
      await llama.dispose();
      throw new LlamaGpuError(
        `--gpu cuda: llama.cpp loaded with backend '${llama.gpu}', not CUDA. ${CUDA_REQUIREMENTS}.`,
      );
    }
  } else {
    try {
      llama = await getLlama({ ...common, gpu: false });
    } catch (error) {
      // No prebuilt binary it can load (its optional @node-llama-cpp/* packages left out, or none for this platform):
      // node-llama-cpp throws NoBinaryFoundError, whose message is only its name.
      throw new LlamaStartError(
        `llama.cpp's prebuilt CPU build could not be loaded (${(error as Error).message || (error as Error).name}); ` +
          `node-llama-cpp's prebuilt binaries come in its optional dependencies: reinstall it with them (${nodeLlamaCppLocation().installCommand})`,
        { cause: error },
      );
    }
  }
  try {
    // A file that passes our checks can still be refused by llama.cpp (a missing tensor, a wrong shape); its
    // own log lines say why, and the operator gets one line instead of node-llama-cpp's stack trace.
    const model = await llama
      .loadModel({ modelPath: o.modelPath, gpuLayers: o.gpu === "cuda" ? "max" : 0 })
      .catch((error: unknown) => {
        throw new LlamaStartError(
          `model file ${o.modelPath}: llama.cpp could not load it (${(error as Error).message}); its log lines above say why`,
          { cause: error },
        );
      });
    // The model loaded, but the context can still be refused: too large for memory (node-llama-cpp's estimate, or
    // llama.cpp's allocation), or more sequences than llama.cpp allows (256). One line for the operator here too.
    const context = await model
      .createContext({
        sequences: o.sequences,
        contextSize: o.contextLength,
        threads: o.threads,
        failedCreationRemedy: false,
      })
      .catch((error: unknown) => {
        throw new LlamaStartError(
          `llama.cpp could not create a context of ${o.sequences} sequences x ${o.contextLength} cells ` +
            `(${(error as Error).message}); lower --max-running-requests or --context-length; its log lines above say why`,
          { cause: error },
        );
      });
    const overflow = () => {
      throw new Error("llama engine: a sequence ran out of cells (the scheduler should have prevented this)");
    };
    const sequences: LlamaContextSequence[] = [];
    for (let i = 0; i < o.sequences; i++) sequences.push(context.getSequence({ contextShift: { strategy: overflow } }));
    return {
      llama,
      model,
      context,
      sequences,
      summary,
      gpu: o.gpu === "cuda" ? "cuda" : "cpu",
      async close() {
        await context.dispose();
        await model.dispose();
        await llama.dispose();
      },
    };
  } catch (error) {
    await llama.dispose();
    throw error;
  }
}
