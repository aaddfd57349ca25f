import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startEngineServer } from "../../../src/engine/index";
import { LlamaGpuError } from "../../../src/engine/llama/errors";
import { buildTestModel } from "../../../src/engine/llama/test-model";
import { describeLlama, writeTempModel } from "./llama-support";

const hasNvidiaDriver = existsSync("/proc/driver/nvidia/version");

/** Runs `npm run engine -- args` (tsx in-process loader) and collects its exit and stderr. */
function runEngineCli(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/engine/main.ts", ...args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describeLlama("llama engine: startup errors are clear messages, never a crashed process", () => {
  let model: ReturnType<typeof writeTempModel>;
  beforeAll(() => {
    model = writeTempModel();
  });
  afterAll(() => model.remove());

  it.skipIf(hasNvidiaDriver)("--gpu cuda on a machine without CUDA fails loudly (no CPU fallback)", async () => {
    const start = startEngineServer({ port: 0, engine: "llama", modelPath: model.path, gpu: "cuda", log: () => {} });
    await expect(start).rejects.toThrow(LlamaGpuError);
    await expect(start).rejects.toThrow(/--gpu cuda: the CUDA build of llama\.cpp could not be loaded/);
    await expect(start).rejects.toThrow(/libcudart\.so\.13.*Nothing falls back to CPU/);
  });

  // The CLI path of every startup error (LlamaStartError -> "engine: <message>", status 1), shown with a bad file.
  it("the CLI exits 1 with the reason for a bad model file (llama.cpp would have aborted the process)", async () => {
    const bad = join(model.dir, "no-ffn.gguf");
    writeFileSync(bad, buildTestModel({ omitKeys: ["llama.feed_forward_length"] }));
    const run = await runEngineCli(["--engine", "llama", "--model-path", bad, "--port", "0"]);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`engine: model file ${bad}: missing metadata key llama.feed_forward_length`);
  });

  it("the CLI exits 1 with one line when llama.cpp itself refuses a file our checks passed (a missing tensor)", async () => {
    const bytes = buildTestModel();
    const name = Buffer.from("blk.1.ffn_up.weight");
    bytes.set(Buffer.from("blk.1.ffn_XX.weight"), bytes.indexOf(name)); // same length: the file stays valid GGUF
    const bad = join(model.dir, "missing-tensor.gguf");
    writeFileSync(bad, bytes);
    const run = await runEngineCli(["--engine", "llama", "--model-path", bad, "--port", "0", "--threads", "1"]);
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`engine: model file ${bad}: llama.cpp could not load it (Failed to load model)`);
    expect(run.stderr).not.toMatch(/^\s+at /m); // no stack trace
  });

  it("the CLI refuses --engine llama without --model-path (status 2, naming the flag)", async () => {
    const run = await runEngineCli(["--engine", "llama", "--port", "0"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--model-path: --engine llama needs --model-path FILE.gguf");
  });
});
