import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LlamaStartError, startEngineServer } from "../../../src/engine/index";
import { writeTempModel } from "./llama-support";

// node-llama-cpp without a prebuilt CPU binary it can load (its optional @node-llama-cpp/* packages left out by
// `--omit=optional`, or none for this platform): getLlama throws NoBinaryFoundError, whose message is its name. The
// package itself is replaced here, since the real one on this machine loads.
vi.mock("../../../src/engine/llama/node-llama-cpp", async (importActual) => {
  const actual = await importActual<typeof import("../../../src/engine/llama/node-llama-cpp")>();
  const noBinary = Object.assign(new Error("NoBinaryFoundError"), { name: "NoBinaryFoundError" });
  return {
    ...actual,
    importNodeLlamaCpp: async () => ({
      getLlama: async () => {
        throw noBinary;
      },
    }),
  };
});

describe("llama engine: node-llama-cpp has no CPU binary it can load", () => {
  let model: ReturnType<typeof writeTempModel>;
  beforeAll(() => {
    model = writeTempModel();
  });
  afterAll(() => model.remove());

  it("rejects with a LlamaStartError that says what failed and how to reinstall, with the library's error as cause", async () => {
    const started = startEngineServer({ port: 0, engine: "llama", modelPath: model.path, threads: 1, log: () => {} });
    const error = await started.then(
      (server) => server.close().then(() => null),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LlamaStartError);
    expect((error as Error).message).toMatch(
      /llama\.cpp's prebuilt CPU build could not be loaded \(NoBinaryFoundError\)/,
    );
    expect((error as Error).message).toMatch(/NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm/);
    expect(((error as Error).cause as Error).name).toBe("NoBinaryFoundError");
  });
});
