import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEngineServer } from "../../../src/engine/index";
import { GgufError } from "../../../src/engine/llama/errors";
import { validateGgufFile } from "../../../src/engine/llama/gguf-validate";
import { buildTestModel } from "../../../src/engine/llama/test-model";
import { writeTempModel } from "./llama-support";

// Our own GGUF checks run before node-llama-cpp is even imported, so these tests need no optional package.
const model = writeTempModel();
afterAll(() => model.remove());

const variant = (name: string, bytes: Uint8Array): string => {
  const path = join(model.dir, name);
  writeFileSync(path, bytes);
  return path;
};

describe("GGUF validation", () => {
  it("accepts the generated test model and reads its summary", () => {
    expect(validateGgufFile(model.path)).toMatchObject({
      version: 3,
      architecture: "llama",
      trainedContextLength: 4096,
      vocabSize: 354,
      tokenizerModel: "llama",
      tensorCount: 21,
    });
  });

  it("refuses a truncated file (tensor data cut off), naming the tensor", () => {
    const bytes = readFileSync(model.path);
    const path = variant("truncated.gguf", bytes.subarray(0, bytes.length - 1000));
    expect(() => validateGgufFile(path)).toThrow(GgufError);
    expect(() => validateGgufFile(path)).toThrow(/truncated: tensor output\.weight ends at byte \d+ but the file has/);
  });

  it("refuses a file cut inside its metadata", () => {
    const path = variant("cut-header.gguf", readFileSync(model.path).subarray(0, 3000));
    expect(() => validateGgufFile(path)).toThrow(/truncated/);
  });

  it("refuses a wrong magic", () => {
    const bytes = Buffer.from(readFileSync(model.path));
    bytes.write("GGML", 0, "latin1");
    const path = variant("magic.gguf", bytes);
    expect(() => validateGgufFile(path)).toThrow(/not a GGUF file \(magic 0x4c4d4747/);
  });

  it("refuses files missing feed_forward_length or head_count (llama.cpp would abort the process)", () => {
    const noFfn = variant("no-ffn.gguf", buildTestModel({ omitKeys: ["llama.feed_forward_length"] }));
    expect(() => validateGgufFile(noFfn)).toThrow(/missing metadata key llama\.feed_forward_length/);
    const noHeads = variant("no-heads.gguf", buildTestModel({ omitKeys: ["llama.attention.head_count"] }));
    expect(() => validateGgufFile(noHeads)).toThrow(/missing metadata key llama\.attention\.head_count/);
    const noTokens = variant("no-tokens.gguf", buildTestModel({ omitKeys: ["tokenizer.ggml.tokens"] }));
    expect(() => validateGgufFile(noTokens)).toThrow(/tokenizer\.ggml\.tokens/);
  });

  it("refuses a tiny file and a missing file", () => {
    expect(() => validateGgufFile(variant("tiny.gguf", Buffer.from("GGUF")))).toThrow(/truncated: 4 bytes/);
    expect(() => validateGgufFile(join(model.dir, "absent.gguf"))).toThrow(/cannot open it \(ENOENT\)/);
  });

  it("refuses a directory given as the model file (it opens, then every read fails with EISDIR)", () => {
    expect(() => validateGgufFile(model.dir)).toThrow(GgufError);
    expect(() => validateGgufFile(model.dir)).toThrow(`model file ${model.dir}: not a regular file`);
  });

  it("startEngineServer refuses a bad model file with a GgufError before loading anything", async () => {
    const noFfn = variant("no-ffn-2.gguf", buildTestModel({ omitKeys: ["llama.feed_forward_length"] }));
    await expect(startEngineServer({ port: 0, engine: "llama", modelPath: noFfn, log: () => {} })).rejects.toThrow(
      GgufError,
    );
  });
});
