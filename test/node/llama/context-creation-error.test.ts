import { afterAll, beforeAll, expect, it } from "vitest";
import { LlamaStartError, startEngineServer } from "../../../src/engine/index";
import { describeLlama, writeTempModel } from "./llama-support";

// llama.cpp loads the model and then refuses the context (here: more sequences than its limit of 256, "n_seq_max must
// be <= 256"; a context too large for memory fails at the same call). Like a model llama.cpp refuses, that is a
// LlamaStartError with the sizes asked for, which the CLI prints as one line (status 1) instead of node-llama-cpp's
// stack trace.
describeLlama("llama engine: a context llama.cpp cannot create", () => {
  let model: ReturnType<typeof writeTempModel>;
  beforeAll(() => {
    model = writeTempModel();
  });
  afterAll(() => model.remove());

  it("rejects with a LlamaStartError naming the sequences and cells asked for, with llama.cpp's error as cause", async () => {
    const started = startEngineServer({
      port: 0,
      engine: "llama",
      modelPath: model.path,
      maxRunningRequests: 300,
      contextLength: 16,
      threads: 1,
      log: () => {},
    });
    const error = await started.then(
      (server) => server.close().then(() => null),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LlamaStartError);
    expect((error as Error).message).toMatch(/llama\.cpp could not create a context of 300 sequences x 16 cells/);
    expect((error as Error).message).toMatch(/--max-running-requests or --context-length/);
    expect((error as Error).cause).toBeInstanceOf(Error);
  }, 60_000);
});
