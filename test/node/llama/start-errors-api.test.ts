import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GgufError, LlamaStartError, startEngineServer } from "../../../src/engine/index";

// The engine's programmatic API (the spillway-engine package's entry): what startEngineServer throws when
// --engine llama cannot start is one of the exported classes, so a caller can tell an operator's mistake from a bug,
// as the CLI does. The model file is refused by our own checks, before node-llama-cpp is loaded.
describe("startEngineServer with --engine llama and a bad model file", () => {
  it("rejects with the exported GgufError, a LlamaStartError naming the file", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "spillway-bad-model-")), "not-a-model.gguf");
    writeFileSync(path, "this is not GGUF");
    const started = startEngineServer({ engine: "llama", modelPath: path, port: 0, log: () => {} });
    await expect(started).rejects.toBeInstanceOf(GgufError);
    await expect(started).rejects.toBeInstanceOf(LlamaStartError);
    await expect(started).rejects.toThrow(path);
  });
});
