/**
 * `npm run make-test-model [-- --out FILE] [--seed N] [--context-length N]`: writes the tiny llama.cpp test
 * model (see `src/engine/llama/test-model.ts`) to `.cache/models/spillway-tiny.gguf` (gitignored). Models
 * are generated, never downloaded or committed.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { buildTestModel, DEFAULT_TEST_MODEL_PATH } from "../src/engine/llama/test-model";
import { commandFlags, numberFlag } from "./command-line";

const { out, seed, contextLength } = commandFlags(
  "npm run make-test-model -- [--out <file>] [--seed <n>] [--context-length <n>]",
  { options: { out: { type: "string" }, seed: { type: "string" }, "context-length": { type: "string" } } },
  ({ values }) => ({
    out: resolve(values.out ?? DEFAULT_TEST_MODEL_PATH),
    // The weights' seed: any integer (the generator takes it modulo 2^32).
    seed: numberFlag("seed", values.seed, 0, { integer: true }),
    // Written as a u32 in the GGUF header.
    contextLength: numberFlag("context-length", values["context-length"], 4096, {
      min: 1,
      max: 2 ** 32 - 1,
      integer: true,
    }),
  }),
);
const bytes = buildTestModel({ seed, contextLength });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, bytes);
console.log(`wrote ${out} (${bytes.length} bytes)`);
