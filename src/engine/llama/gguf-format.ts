/**
 * The parts of the GGUF file format (llama.cpp's model files) that we read and write ourselves: the magic,
 * metadata value types and the byte size of tensor data types. Spec: ggml's docs/gguf.md.
 *
 * @example
 * ```ts
 * const bytes = tensorBytes(GGML_TYPE.F32, [64, 354]); // 90_624
 * ```
 */

/**
 * "GGUF" read as a little-endian uint32.
 *
 * @example
 * ```ts
 * if (buf.readUInt32LE(0) !== GGUF_MAGIC) throw new Error("not a GGUF file");
 * ```
 */
export const GGUF_MAGIC = 0x46554747;

/**
 * Default alignment of the tensor data section (`general.alignment` overrides it).
 *
 * @example
 * ```ts
 * const dataStart = Math.ceil(headerEnd / GGUF_DEFAULT_ALIGNMENT) * GGUF_DEFAULT_ALIGNMENT;
 * ```
 */
export const GGUF_DEFAULT_ALIGNMENT = 32;

/**
 * Metadata value types (`gguf_metadata_value_type`).
 *
 * @example
 * ```ts
 * if (type === GGUF_VALUE.STRING) readString();
 * ```
 */
export const GGUF_VALUE = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;

/**
 * Byte width of each fixed-size metadata value type.
 *
 * @example
 * ```ts
 * GGUF_VALUE_BYTES[GGUF_VALUE.FLOAT32]; // 4
 * ```
 */
export const GGUF_VALUE_BYTES: Readonly<Record<number, number>> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

/**
 * Tensor data types we name in code (ggml's `ggml_type`).
 *
 * @example
 * ```ts
 * writer.tensor("output_norm.weight", [64], GGML_TYPE.F32, data);
 * ```
 */
export const GGML_TYPE = { F32: 0, F16: 1 } as const;

/**
 * [elements per block, bytes per block] of each ggml tensor type (ggml.c's `type_traits`), for checking
 * that every tensor's data lies inside the file. Types missing here are not size-checked.
 */
const GGML_BLOCKS: Readonly<Record<number, readonly [number, number]>> = {
  0: [1, 4], // F32
  1: [1, 2], // F16
  2: [32, 18], // Q4_0
  3: [32, 20], // Q4_1
  6: [32, 22], // Q5_0
  7: [32, 24], // Q5_1
  8: [32, 34], // Q8_0
  9: [32, 36], // Q8_1
  10: [256, 84], // Q2_K
  11: [256, 110], // Q3_K
  12: [256, 144], // Q4_K
  13: [256, 176], // Q5_K
  14: [256, 210], // Q6_K
  15: [256, 292], // Q8_K
  16: [256, 66], // IQ2_XXS
  17: [256, 74], // IQ2_XS
  18: [256, 98], // IQ3_XXS
  19: [256, 50], // IQ1_S
  20: [32, 18], // IQ4_NL
  21: [256, 110], // IQ3_S
  22: [256, 82], // IQ2_S
  23: [256, 136], // IQ4_XS
  24: [1, 1], // I8
  25: [1, 2], // I16
  26: [1, 4], // I32
  27: [1, 8], // I64
  28: [1, 8], // F64
  29: [256, 56], // IQ1_M
  30: [1, 2], // BF16
  34: [256, 54], // TQ1_0
  35: [256, 66], // TQ2_0
  39: [32, 17], // MXFP4
  40: [64, 36], // NVFP4
};

/**
 * Bytes of a tensor's data, or null for a type we do not know (it is then not size-checked).
 *
 * @example
 * ```ts
 * tensorBytes(0, [64, 64]); // 16384
 * ```
 */
export function tensorBytes(type: number, dims: readonly number[]): number | null {
  const block = GGML_BLOCKS[type];
  if (block === undefined) return null;
  const elements = dims.reduce((a, b) => a * b, 1);
  return Math.ceil(elements / block[0]) * block[1];
}
