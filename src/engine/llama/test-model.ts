import { seededRandom } from "../rng";
import { GgufWriter } from "./gguf-writer";

/**
 * Where `npm run make-test-model` writes the model (gitignored), relative to the repository root.
 *
 * @example
 * ```ts
 * await startEngineServer({ engine: "llama", modelPath: DEFAULT_TEST_MODEL_PATH });
 * ```
 */
export const DEFAULT_TEST_MODEL_PATH = ".cache/models/spillway-tiny.gguf";

/**
 * Shape of the generated test model (defaults: the tiny model the tests and benchmarks use).
 *
 * @example
 * ```ts
 * const broken = buildTestModel({ omitKeys: ["llama.feed_forward_length"] } satisfies TestModelOptions);
 * ```
 */
export interface TestModelOptions {
  /** Transformer blocks (default 2). */
  layers?: number;
  /** Embedding width (default 64). */
  width?: number;
  /** Attention heads (default 4); width must divide by it. */
  heads?: number;
  /** Feed-forward width (default 128). */
  ffn?: number;
  /** `llama.context_length`: the context the model claims to be trained for (default 4096). */
  contextLength?: number;
  /** Weight seed (default 0): the same seed writes the same bytes. */
  seed?: number;
  /** Leave out metadata keys (for tests of the validator), e.g. `["llama.feed_forward_length"]`. */
  omitKeys?: readonly string[];
}

const SPACE = "\u2581"; // SentencePiece's word-boundary marker, how a space is spelled in an SPM vocabulary
const TYPE_NORMAL = 1;
const TYPE_UNKNOWN = 2;
const TYPE_CONTROL = 3;
const TYPE_BYTE = 6;

/**
 * The test model's vocabulary: `<unk>`, `<s>`, `</s>`, the 256 byte tokens `<0x00>`..`<0xFF>` (SentencePiece's
 * byte fallback, so any text tokenizes), `▁` (space) and the 94 printable ASCII characters.
 *
 * @example
 * ```ts
 * const { tokens } = testModelVocabulary(); // tokens[2] === "</s>", tokens.length === 354
 * ```
 */
export function testModelVocabulary(): { tokens: string[]; types: number[] } {
  const tokens = ["<unk>", "<s>", "</s>"];
  const types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TYPE_BYTE);
  }
  tokens.push(SPACE);
  types.push(TYPE_NORMAL);
  for (let c = 0x21; c <= 0x7e; c++) {
    tokens.push(String.fromCharCode(c));
    types.push(TYPE_NORMAL);
  }
  return { tokens, types };
}

/**
 * A tiny "llama" model as GGUF bytes: seeded random F32 weights and an SPM tokenizer (see
 * {@link testModelVocabulary}). It generates nonsense, but real nonsense: llama.cpp runs every layer, so
 * step times, batching and KV cells are those of a real engine. The output rows of control and byte
 * tokens are zero, so greedy sampling never picks EOS (logit 0 against ~350 random logits) and the text
 * stays printable ASCII.
 *
 * @example
 * ```ts
 * await writeFile(".cache/models/spillway-tiny.gguf", buildTestModel({ seed: 0 }));
 * ```
 */
export function buildTestModel(options: TestModelOptions = {}): Buffer {
  const layers = options.layers ?? 2;
  const width = options.width ?? 64;
  const heads = options.heads ?? 4;
  const ffn = options.ffn ?? 128;
  if (width % heads !== 0) throw new Error(`width ${width} must divide by heads ${heads}`);
  const random = seededRandom(options.seed ?? 0);
  const { tokens, types } = testModelVocabulary();
  const vocab = tokens.length;
  const omit = new Set(options.omitKeys ?? []);
  const w = new GgufWriter();
  const meta = (key: string, put: () => void) => {
    if (!omit.has(key)) put();
  };

  meta("general.architecture", () => w.string("general.architecture", "llama"));
  meta("general.name", () => w.string("general.name", "spillway-tiny"));
  meta("llama.context_length", () => w.u32("llama.context_length", options.contextLength ?? 4096));
  meta("llama.embedding_length", () => w.u32("llama.embedding_length", width));
  meta("llama.block_count", () => w.u32("llama.block_count", layers));
  meta("llama.feed_forward_length", () => w.u32("llama.feed_forward_length", ffn));
  meta("llama.attention.head_count", () => w.u32("llama.attention.head_count", heads));
  meta("llama.attention.head_count_kv", () => w.u32("llama.attention.head_count_kv", heads));
  meta("llama.attention.layer_norm_rms_epsilon", () => w.f32("llama.attention.layer_norm_rms_epsilon", 1e-5));
  meta("llama.rope.dimension_count", () => w.u32("llama.rope.dimension_count", width / heads));
  meta("llama.vocab_size", () => w.u32("llama.vocab_size", vocab));
  meta("tokenizer.ggml.model", () => w.string("tokenizer.ggml.model", "llama"));
  meta("tokenizer.ggml.tokens", () => w.strings("tokenizer.ggml.tokens", tokens));
  meta("tokenizer.ggml.scores", () =>
    w.f32s(
      "tokenizer.ggml.scores",
      tokens.map(() => 0),
    ),
  );
  meta("tokenizer.ggml.token_type", () => w.i32s("tokenizer.ggml.token_type", types));
  meta("tokenizer.ggml.unknown_token_id", () => w.u32("tokenizer.ggml.unknown_token_id", 0));
  meta("tokenizer.ggml.bos_token_id", () => w.u32("tokenizer.ggml.bos_token_id", 1));
  meta("tokenizer.ggml.eos_token_id", () => w.u32("tokenizer.ggml.eos_token_id", 2));
  meta("tokenizer.ggml.add_bos_token", () => w.bool("tokenizer.ggml.add_bos_token", true));

  // Uniform weights scaled by 1/sqrt(fan-in), so activations neither vanish nor blow up across layers.
  const matrix = (rows: number, cols: number) => {
    const scale = Math.sqrt(3 / cols);
    const data = new Float32Array(rows * cols);
    for (let i = 0; i < data.length; i++) data[i] = (random() * 2 - 1) * scale;
    return data;
  };
  const ones = (n: number) => new Float32Array(n).fill(1);

  w.tensor("token_embd.weight", [width, vocab], matrix(vocab, width));
  for (let l = 0; l < layers; l++) {
    w.tensor(`blk.${l}.attn_norm.weight`, [width], ones(width));
    w.tensor(`blk.${l}.attn_q.weight`, [width, width], matrix(width, width));
    w.tensor(`blk.${l}.attn_k.weight`, [width, width], matrix(width, width));
    w.tensor(`blk.${l}.attn_v.weight`, [width, width], matrix(width, width));
    w.tensor(`blk.${l}.attn_output.weight`, [width, width], matrix(width, width));
    w.tensor(`blk.${l}.ffn_norm.weight`, [width], ones(width));
    w.tensor(`blk.${l}.ffn_gate.weight`, [width, ffn], matrix(ffn, width));
    w.tensor(`blk.${l}.ffn_up.weight`, [width, ffn], matrix(ffn, width));
    w.tensor(`blk.${l}.ffn_down.weight`, [ffn, width], matrix(width, ffn));
  }
  w.tensor("output_norm.weight", [width], ones(width));
  const output = matrix(vocab, width);
  for (let t = 0; t < vocab; t++) if (types[t] !== TYPE_NORMAL) output.fill(0, t * width, (t + 1) * width);
  w.tensor("output.weight", [width, vocab], output);
  return w.toBuffer();
}
