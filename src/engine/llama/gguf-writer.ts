import { GGML_TYPE, GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUF_VALUE } from "./gguf-format";

type Value =
  | { type: typeof GGUF_VALUE.STRING; value: string }
  | { type: typeof GGUF_VALUE.UINT32; value: number }
  | { type: typeof GGUF_VALUE.INT32; value: number }
  | { type: typeof GGUF_VALUE.FLOAT32; value: number }
  | { type: typeof GGUF_VALUE.BOOL; value: boolean }
  | { type: typeof GGUF_VALUE.ARRAY; of: typeof GGUF_VALUE.STRING; value: readonly string[] }
  | {
      type: typeof GGUF_VALUE.ARRAY;
      of: typeof GGUF_VALUE.FLOAT32 | typeof GGUF_VALUE.INT32;
      value: readonly number[];
    };

/**
 * Writes a GGUF v3 file in memory: metadata key/values, then F32 tensors. Only what the test-model tool
 * needs (strings, u32/i32/f32/bool, string and number arrays, F32 tensors); the format is ggml's docs/gguf.md.
 *
 * @example
 * ```ts
 * const w = new GgufWriter();
 * w.string("general.architecture", "llama");
 * w.u32("llama.block_count", 2);
 * w.tensor("output_norm.weight", [64], new Float32Array(64).fill(1));
 * await writeFile("tiny.gguf", w.toBuffer());
 * ```
 */
export class GgufWriter {
  private readonly kvs: [string, Value][] = [];
  private readonly tensors: { name: string; dims: readonly number[]; data: Float32Array }[] = [];

  string(key: string, value: string): this {
    return this.add(key, { type: GGUF_VALUE.STRING, value });
  }
  u32(key: string, value: number): this {
    return this.add(key, { type: GGUF_VALUE.UINT32, value });
  }
  i32(key: string, value: number): this {
    return this.add(key, { type: GGUF_VALUE.INT32, value });
  }
  f32(key: string, value: number): this {
    return this.add(key, { type: GGUF_VALUE.FLOAT32, value });
  }
  bool(key: string, value: boolean): this {
    return this.add(key, { type: GGUF_VALUE.BOOL, value });
  }
  strings(key: string, value: readonly string[]): this {
    return this.add(key, { type: GGUF_VALUE.ARRAY, of: GGUF_VALUE.STRING, value });
  }
  f32s(key: string, value: readonly number[]): this {
    return this.add(key, { type: GGUF_VALUE.ARRAY, of: GGUF_VALUE.FLOAT32, value });
  }
  i32s(key: string, value: readonly number[]): this {
    return this.add(key, { type: GGUF_VALUE.ARRAY, of: GGUF_VALUE.INT32, value });
  }

  /** An F32 tensor; `dims` in ggml order (innermost first: `[n_embd, n_vocab]` for an embedding). */
  tensor(name: string, dims: readonly number[], data: Float32Array): this {
    const n = dims.reduce((a, b) => a * b, 1);
    if (data.length !== n) throw new Error(`tensor ${name}: ${data.length} values for dims ${dims.join("x")}`);
    this.tensors.push({ name, dims, data });
    return this;
  }

  /** The whole file. */
  toBuffer(): Buffer {
    const out = new ByteSink();
    out.u32(GGUF_MAGIC);
    out.u32(3);
    out.u64(this.tensors.length);
    out.u64(this.kvs.length);
    for (const [key, v] of this.kvs) {
      out.str(key);
      out.u32(v.type);
      writeValue(out, v);
    }
    let offset = 0;
    const offsets: number[] = [];
    for (const t of this.tensors) {
      out.str(t.name);
      out.u32(t.dims.length);
      for (const d of t.dims) out.u64(d);
      out.u32(GGML_TYPE.F32);
      out.u64(offset);
      offsets.push(offset);
      offset = alignUp(offset + t.data.byteLength, GGUF_DEFAULT_ALIGNMENT);
    }
    out.pad(GGUF_DEFAULT_ALIGNMENT);
    const start = out.length;
    for (let i = 0; i < this.tensors.length; i++) {
      const t = this.tensors[i] as (typeof this.tensors)[number];
      out.pad(GGUF_DEFAULT_ALIGNMENT, start + (offsets[i] as number));
      out.bytes(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    }
    return out.toBuffer();
  }

  private add(key: string, value: Value): this {
    this.kvs.push([key, value]);
    return this;
  }
}

function writeValue(out: ByteSink, v: Value): void {
  if (v.type === GGUF_VALUE.STRING) out.str(v.value);
  else if (v.type === GGUF_VALUE.UINT32) out.u32(v.value);
  else if (v.type === GGUF_VALUE.INT32) out.i32(v.value);
  else if (v.type === GGUF_VALUE.FLOAT32) out.f32(v.value);
  else if (v.type === GGUF_VALUE.BOOL) out.u8(v.value ? 1 : 0);
  else {
    out.u32(v.of);
    out.u64(v.value.length);
    for (const item of v.value) {
      if (v.of === GGUF_VALUE.STRING) out.str(item as string);
      else if (v.of === GGUF_VALUE.FLOAT32) out.f32(item as number);
      else out.i32(item as number);
    }
  }
}

function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

/** A growable little-endian byte buffer. */
class ByteSink {
  private buf = Buffer.alloc(1 << 16);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u8(v: number): void {
    this.room(1);
    this.length = this.buf.writeUInt8(v, this.length);
  }
  u32(v: number): void {
    this.room(4);
    this.length = this.buf.writeUInt32LE(v, this.length);
  }
  i32(v: number): void {
    this.room(4);
    this.length = this.buf.writeInt32LE(v, this.length);
  }
  f32(v: number): void {
    this.room(4);
    this.length = this.buf.writeFloatLE(v, this.length);
  }
  u64(v: number): void {
    this.room(8);
    this.length = this.buf.writeBigUInt64LE(BigInt(v), this.length);
  }
  str(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.bytes(bytes);
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  /** Zero-fill up to the next multiple of `alignment` (or up to `target`). */
  pad(alignment: number, target = alignUp(this.length, alignment)): void {
    this.room(target - this.length);
    this.buf.fill(0, this.length, target);
    this.length = target;
  }
  toBuffer(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}
