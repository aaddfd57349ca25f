import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LlamaNotInstalledError } from "./errors";

/**
 * The slice of node-llama-cpp 3.21.1's API that the llama engine uses, typed here so that the project
 * typechecks on machines where the optional package (engines/llama) is not installed. The types below mirror
 * the package's own (`LlamaContextSequence`, `LlamaContext`, `LlamaModel`, `Llama`, `getLlama`).
 *
 * @example
 * ```ts
 * const { getLlama } = await importNodeLlamaCpp();
 * const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
 *   progressLogs: false, maxThreads: 1, logLevel: "warn" });
 * const seq = (await (await llama.loadModel({ modelPath })).createContext({ sequences: 2, contextSize: 512 }))
 *   .getSequence();
 * await seq.controlledEvaluate([1, 259, [300, { generateNext: { token: true } }]]);
 * ```
 */

/** A token id. */
export type Token = number;

/** An item of `controlledEvaluate`: a token, or a token after which the next one is sampled. */
export type ControlledEvaluateItem =
  | Token
  | [Token, { generateNext?: { token?: boolean; options?: { temperature?: number; seed?: number } } }];

/** A context sequence: one request's KV cells inside a shared context. */
export interface LlamaContextSequence {
  /** Tokens held in the KV cache (the next token is written at this index). */
  readonly nextTokenIndex: number;
  readonly contextSize: number;
  controlledEvaluate(input: ControlledEvaluateItem[]): Promise<Array<undefined | { next: { token?: Token | null } }>>;
  evaluateWithoutGeneratingNewTokens(tokens: Token[]): Promise<void>;
  eraseContextTokenRanges(ranges: { start: number; end: number }[]): Promise<void>;
  clearHistory(): Promise<void>;
}

/** A context: `sequences` sequences of `contextSize` cells each, evaluated together. */
export interface LlamaContext {
  readonly contextSize: number;
  readonly batchSize: number;
  readonly totalSequences: number;
  getSequence(options?: {
    contextShift?: { strategy?: (options: { size: number }) => { start: number; end: number }[] };
  }): LlamaContextSequence;
  dispose(): Promise<void>;
}

/** A loaded model. */
export interface LlamaModel {
  tokenize(text: string, specialTokens?: boolean): Token[];
  detokenize(tokens: readonly Token[], specialTokens?: boolean, lastTokens?: readonly Token[]): string;
  readonly tokens: { readonly bos: Token | null; readonly eos: Token | null; readonly shouldPrependBosToken: boolean };
  /** Whether the token ends a generation (EOS, EOT and the model's other end-of-generation tokens). */
  isEogToken(token: Token | undefined): boolean;
  createContext(options: {
    sequences: number;
    contextSize: number;
    batchSize?: number;
    threads?: number;
    flashAttention?: boolean;
    failedCreationRemedy?: false;
  }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}

/** The native binding. */
export interface Llama {
  /** The backend that loaded: `"cuda"`, `"vulkan"`, `"metal"` or `false` (CPU). */
  readonly gpu: string | false;
  loadModel(options: { modelPath: string; gpuLayers?: number | "max" | "auto" }): Promise<LlamaModel>;
  dispose(): Promise<void>;
}

/** Log levels of `getLlama`'s `logLevel` (node-llama-cpp's `LlamaLogLevel` values). */
export type LlamaLogLevelName = "disabled" | "fatal" | "error" | "warn" | "info" | "log" | "debug";

/** The module's exports we use. */
export interface NodeLlamaCpp {
  getLlama(options: {
    gpu: false | "cuda";
    build: "never";
    skipDownload: true;
    usePrebuiltBinaries: true;
    progressLogs: false;
    maxThreads: number;
    logLevel: LlamaLogLevelName;
    logger?: (level: LlamaLogLevelName, message: string) => void;
  }): Promise<Llama>;
}

/**
 * The optional package's folder, relative to the repository root.
 *
 * @example
 * ```ts
 * join(repoRoot, LLAMA_PACKAGE_DIR, "package.json");
 * ```
 */
export const LLAMA_PACKAGE_DIR = "engines/llama";

/**
 * How to install the optional package (for error messages and the tests' skip notice).
 *
 * @example
 * ```ts
 * console.warn(`[skipped] node-llama-cpp is not installed: ${LLAMA_INSTALL_COMMAND}`);
 * ```
 */
export const LLAMA_INSTALL_COMMAND = "NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --prefix engines/llama";

/**
 * node-llama-cpp's version: the one `engines/llama/package.json` pins and the types above mirror.
 *
 * @example
 * ```ts
 * `npm install node-llama-cpp@${LLAMA_PACKAGE_VERSION}`;
 * ```
 */
export const LLAMA_PACKAGE_VERSION = "3.21.1";

/**
 * How to install node-llama-cpp beside an installed `spillway-engine` package, which has no `engines/llama`.
 *
 * @example
 * ```ts
 * console.error(`install it next to spillway-engine: ${LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND}`);
 * ```
 */
export const LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND = `NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install node-llama-cpp@${LLAMA_PACKAGE_VERSION}`;

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");

/**
 * Where node-llama-cpp's entry point would be, whether it is installed there, and how to install it. In this
 * repository that is the optional `engines/llama` package. In the `spillway-engine` package (this file bundled
 * into `node_modules/spillway-engine/dist/`) there is no `engines/llama`: node-llama-cpp is installed beside it
 * and found in the `node_modules` folders above, as Node finds a package.
 *
 * @example
 * ```ts
 * const where = nodeLlamaCppLocation();
 * if (!where.installed) console.log(`install it: ${where.installCommand}`);
 * ```
 */
export function nodeLlamaCppLocation(): { entry: string; installed: boolean; installCommand: string } {
  const entry = join(repoRoot, LLAMA_PACKAGE_DIR, "node_modules/node-llama-cpp/dist/index.js");
  if (existsSync(join(repoRoot, LLAMA_PACKAGE_DIR, "package.json")))
    return { entry, installed: existsSync(entry), installCommand: LLAMA_INSTALL_COMMAND };
  const beside = (dir: string) => join(dir, "node_modules/node-llama-cpp/dist/index.js");
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(beside(dir)))
      return { entry: beside(dir), installed: true, installCommand: LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND };
    if (dirname(dir) === dir) break;
  }
  return {
    entry: `node_modules/node-llama-cpp in ${here} or a folder above it`,
    installed: false,
    installCommand: LLAMA_BESIDE_PACKAGE_INSTALL_COMMAND,
  };
}

/**
 * Imports node-llama-cpp from the optional `engines/llama` package, or from beside the installed
 * `spillway-engine` package (a dynamic import, so the default install and the simulated engine never load it).
 *
 * @throws LlamaNotInstalledError with the install command when it is missing.
 * @example
 * ```ts
 * const { getLlama } = await importNodeLlamaCpp();
 * ```
 */
export async function importNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  const { entry, installed, installCommand } = nodeLlamaCppLocation();
  if (!installed)
    throw new LlamaNotInstalledError(
      `--engine llama needs the optional node-llama-cpp package, which is not installed (looked for ${entry}). ` +
        `Install it with: ${installCommand}`,
    );
  return (await import(pathToFileURL(entry).href)) as NodeLlamaCpp;
}
