/**
 * `npm run make-test-model [-- --out FILE] [--seed N] [--context-length N]`: writes the tiny llama.cpp test
 * model (see `src/engine/llama/test-model.ts`) to `.cache/models/spillway-tiny.gguf` (gitignored). Models
 * are generated, never downloaded or committed.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildTestModel, DEFAULT_TEST_MODEL_PATH } from "../src/engine/llama/test-model";

const { values } = parseArgs({
  options: {
    out: { type: "string", default: DEFAULT_TEST_MODEL_PATH },
    seed: { type: "string", default: "0" },
    "context-length": { type: "string", default: "4096" },
  },
});
const out = resolve(values.out as string);
const bytes = buildTestModel({ seed: Number(values.seed), contextLength: Number(values["context-length"]) });
await mkdir(dirname(out), { recursive: true });
await writeFile(out, bytes);
console.log(`wrote ${out} (${bytes.length} bytes)`);
