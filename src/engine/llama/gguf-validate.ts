import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { GgufError } from "./errors";
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUF_VALUE, GGUF_VALUE_BYTES, tensorBytes } from "./gguf-format";

/**
 * What the engine needs to know about a model before loading it.
 *
 * @example
 * ```ts
 * const { architecture, trainedContextLength, vocabSize } = validateGgufFile(path);
 * ```
 */
export interface GgufSummary {
  version: number;
  /** `general.architecture`, e.g. `llama`. */
  architecture: string;
  /** `<arch>.context_length`: the context the model was trained for. */
  trainedContextLength: number;
  /** Length of `tokenizer.ggml.tokens`. */
  vocabSize: number;
  /** `tokenizer.ggml.model`, e.g. `llama` (SentencePiece) or `gpt2` (byte-level BPE). */
  tokenizerModel: string;
  tensorCount: number;
  fileBytes: number;
}

type Meta = Map<string, unknown>;

// Metadata llama.cpp reads without a fallback: a file without them can abort the whole process (SIGABRT)
// inside the native loader instead of throwing, so we check them first.
const REQUIRED_ARCH_KEYS = [
  "context_length",
  "embedding_length",
  "block_count",
  "feed_forward_length",
  "attention.head_count",
] as const;
const MAX_HEADER_BYTES = 512 * 1024 * 1024;
const MAX_ENTRIES = 1_000_000;

/**
 * Reads a GGUF file's header, metadata and tensor table (not the weights) and checks what llama.cpp would
 * otherwise trip over: the magic and version, every length against the file size (a truncated download),
 * the required hyperparameters and tokenizer keys, and that every tensor's data lies inside the file.
 *
 * @throws GgufError naming the file and the problem.
 * @example
 * ```ts
 * const info = validateGgufFile(".cache/models/spillway-tiny.gguf");
 * info.architecture; // "llama"
 * ```
 */
export function validateGgufFile(path: string): GgufSummary {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw new GgufError(`model file ${path}: cannot open it (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
  try {
    // A directory opens fine on Linux and only fails at the first read (EISDIR), past every check below.
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new GgufError(`model file ${path}: not a regular file`);
    return validateOpen(path, new FileReader(fd, stat.size, path));
  } finally {
    closeSync(fd);
  }
}

function validateOpen(path: string, r: FileReader): GgufSummary {
  const fail = (why: string): never => {
    throw new GgufError(`model file ${path}: ${why}`);
  };
  if (r.size < 24) fail(`truncated: ${r.size} bytes is shorter than a GGUF header`);
  const magic = r.u32();
  if (magic !== GGUF_MAGIC)
    fail(`not a GGUF file (magic 0x${magic.toString(16).padStart(8, "0")}, expected "GGUF" = 0x46554747)`);
  const version = r.u32();
  if (version !== 2 && version !== 3) fail(`GGUF version ${version} is not supported (2 or 3)`);
  const tensorCount = r.u64();
  const kvCount = r.u64();
  if (tensorCount > MAX_ENTRIES || kvCount > MAX_ENTRIES)
    fail(`implausible header (${tensorCount} tensors, ${kvCount} metadata keys)`);

  const meta: Meta = new Map();
  for (let i = 0; i < kvCount; i++) {
    const key = r.str();
    meta.set(key, readValue(r, r.u32(), key, 0));
  }

  const architecture = meta.get("general.architecture");
  if (typeof architecture !== "string" || architecture === "") fail("missing metadata key general.architecture");
  const arch = architecture as string;
  for (const k of REQUIRED_ARCH_KEYS) requirePositive(meta, `${arch}.${k}`, fail);
  const eps = meta.get(`${arch}.attention.layer_norm_rms_epsilon`) ?? meta.get(`${arch}.attention.layer_norm_epsilon`);
  if (typeof eps !== "number")
    fail(`missing metadata key ${arch}.attention.layer_norm_rms_epsilon (or ${arch}.attention.layer_norm_epsilon)`);
  const tokenizerModel = meta.get("tokenizer.ggml.model");
  if (typeof tokenizerModel !== "string") fail("missing metadata key tokenizer.ggml.model");
  const tokens = meta.get("tokenizer.ggml.tokens");
  if (!Array.isArray(tokens) || tokens.length === 0 || typeof tokens[0] !== "string")
    fail("missing metadata key tokenizer.ggml.tokens (a non-empty array of strings)");

  const alignment = meta.get("general.alignment") ?? GGUF_DEFAULT_ALIGNMENT;
  if (typeof alignment !== "number" || alignment <= 0 || alignment % 8 !== 0)
    fail(`general.alignment ${alignment} must be a positive multiple of 8`);
  const tensors: { name: string; type: number; dims: number[]; offset: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = r.str();
    const nDims = r.u32();
    if (nDims < 1 || nDims > 4) fail(`tensor ${name} has ${nDims} dimensions (1 to 4)`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(r.u64());
    tensors.push({ name, dims, type: r.u32(), offset: r.u64() });
  }
  const dataStart = Math.ceil(r.position / (alignment as number)) * (alignment as number);
  for (const t of tensors) {
    const bytes = tensorBytes(t.type, t.dims) ?? 0;
    const end = dataStart + t.offset + bytes;
    if (end > r.size) fail(`truncated: tensor ${t.name} ends at byte ${end} but the file has ${r.size} bytes`);
  }
  const contextLength = meta.get(`${arch}.context_length`) as number;
  return {
    version,
    architecture: arch,
    trainedContextLength: contextLength,
    vocabSize: (tokens as unknown[]).length,
    tokenizerModel: tokenizerModel as string,
    tensorCount,
    fileBytes: r.size,
  };
}

/** An integer > 0, or (per-layer hyperparameters) a non-empty array of integers >= 0. */
function requirePositive(meta: Meta, key: string, fail: (why: string) => never): void {
  const v = meta.get(key);
  if (v === undefined) fail(`missing metadata key ${key}`);
  const ok =
    (typeof v === "number" && Number.isInteger(v) && v > 0) ||
    (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number" && Number.isInteger(x) && x >= 0));
  if (!ok) fail(`metadata key ${key} must be a positive integer, got ${JSON.stringify(v)}`);
}

function readValue(r: FileReader, type: number, key: string, depth: number): unknown {
  switch (type) {
    case GGUF_VALUE.UINT8:
      return r.bytes(1).readUInt8(0);
    case GGUF_VALUE.INT8:
      return r.bytes(1).readInt8(0);
    case GGUF_VALUE.UINT16:
      return r.bytes(2).readUInt16LE(0);
    case GGUF_VALUE.INT16:
      return r.bytes(2).readInt16LE(0);
    case GGUF_VALUE.UINT32:
      return r.u32();
    case GGUF_VALUE.INT32:
      return r.bytes(4).readInt32LE(0);
    case GGUF_VALUE.FLOAT32:
      return r.bytes(4).readFloatLE(0);
    case GGUF_VALUE.BOOL:
      return r.bytes(1).readUInt8(0) !== 0;
    case GGUF_VALUE.STRING:
      return r.str();
    case GGUF_VALUE.UINT64:
    case GGUF_VALUE.INT64:
      return Number(r.bytes(8).readBigInt64LE(0));
    case GGUF_VALUE.FLOAT64:
      return r.bytes(8).readDoubleLE(0);
    case GGUF_VALUE.ARRAY: {
      if (depth > 0) throw new GgufError(`${r.path}: metadata key ${key} nests arrays`);
      const itemType = r.u32();
      const count = r.u64();
      const width = GGUF_VALUE_BYTES[itemType];
      // Fixed-size items: one read (a 150k-entry score table would be slow item by item), and the count is
      // checked against the file before anything is allocated.
      if (width !== undefined) {
        r.need(count * width, `metadata key ${key}`);
        const out: unknown[] = new Array(count);
        for (let i = 0; i < count; i++) out[i] = readValue(r, itemType, key, depth + 1);
        return out;
      }
      if (itemType !== GGUF_VALUE.STRING) throw new GgufError(`${r.path}: metadata key ${key}: bad array type`);
      r.need(count * 8, `metadata key ${key}`);
      const out: string[] = new Array(count);
      for (let i = 0; i < count; i++) out[i] = r.str();
      return out;
    }
    default:
      throw new GgufError(`${r.path}: metadata key ${key} has unknown value type ${type}`);
  }
}

/** Sequential little-endian reads from a file, each checked against the file's size. */
class FileReader {
  position = 0;
  private buf = Buffer.alloc(0);
  private bufStart = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
    readonly path: string,
  ) {}

  /** Throws a "truncated" error unless `n` more bytes exist. */
  need(n: number, what: string): void {
    if (this.position + n > this.size || this.position + n > MAX_HEADER_BYTES)
      throw new GgufError(
        `model file ${this.path}: truncated: ${what} needs ${n} bytes at offset ${this.position}, the file has ${this.size}`,
      );
  }

  bytes(n: number, what = "the header"): Buffer {
    this.need(n, what);
    const rel = this.position - this.bufStart;
    if (rel + n > this.buf.length) {
      // Refill a window from the current position (at least 1 MiB, so small reads do not each hit the disk).
      const len = Math.min(Math.max(n, 1 << 20), this.size - this.position);
      this.buf = Buffer.alloc(len);
      readSync(this.fd, this.buf, 0, len, this.position);
      this.bufStart = this.position;
    }
    const start = this.position - this.bufStart;
    this.position += n;
    return this.buf.subarray(start, start + n);
  }
  u32(): number {
    return this.bytes(4).readUInt32LE(0);
  }
  u64(): number {
    const v = this.bytes(8).readBigUInt64LE(0);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufError(`model file ${this.path}: implausible length ${v}`);
    return Number(v);
  }
  str(): string {
    const n = this.u64();
    return this.bytes(n, "a string").toString("utf8");
  }
}
