import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LlamaStartError, startEngineServer } from "../../../src/engine/index";
import { writeTempModel } from "./llama-support";

// llama.cpp refuses a model file our checks passed (a missing tensor, a wrong shape): node-llama-cpp's loadModel
// rejects. The package is replaced here by one whose CPU build loads and whose loadModel rejects, so the error the
// operator's one line wraps can be checked without a real binary.
const { refused, disposed } = vi.hoisted(() => ({
  refused: new Error("Failed to load model"),
  disposed: vi.fn(async () => {}),
}));
vi.mock("../../../src/engine/llama/node-llama-cpp", async (importActual) => {
  const actual = await importActual<typeof import("../../../src/engine/llama/node-llama-cpp")>();
  return {
    ...actual,
    importNodeLlamaCpp: async () => ({
      getLlama: async () => ({
        gpu: false,
        loadModel: async () => {
          throw refused;
        },
        dispose: disposed,
      }),
    }),
  };
});

describe("llama engine: llama.cpp refuses the model file", () => {
  let model: ReturnType<typeof writeTempModel>;
  beforeAll(() => {
    model = writeTempModel();
  });
  afterAll(() => model.remove());

  it("rejects with a LlamaStartError naming the file, with llama.cpp's error as cause, and frees llama.cpp", async () => {
    const started = startEngineServer({ port: 0, engine: "llama", modelPath: model.path, threads: 1, log: () => {} });
    const error = await started.then(
      (server) => server.close().then(() => null),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LlamaStartError);
    expect((error as Error).message).toContain(
      `model file ${model.path}: llama.cpp could not load it (Failed to load model)`,
    );
    expect((error as Error).cause).toBe(refused);
    expect(disposed).toHaveBeenCalledOnce();
  });
});
