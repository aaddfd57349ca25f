import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningEngineServer } from "../../../src/engine/index";
import type { LlamaEngine } from "../../../src/engine/llama/llama-engine";
import { LLAMA_INSTALL_COMMAND, nodeLlamaCppLocation } from "../../../src/engine/llama/node-llama-cpp";
import { buildTestModel, type TestModelOptions } from "../../../src/engine/llama/test-model";
import { checkSchedulerInvariants, Scheduler, type SchedulerOptions } from "../../../src/scheduler/index";
import { describeWith } from "../../support/optional-suite";

/**
 * True when the optional engines/llama package is installed.
 *
 * @example
 * ```ts
 * it.skipIf(!llamaInstalled)("needs llama", () => {});
 * ```
 */
export const llamaInstalled = nodeLlamaCppLocation().installed;

/**
 * `describe` for tests that need node-llama-cpp: skipped with the install command for a developer who did not
 * install the optional package, failing in CI (see `describeWith`).
 *
 * @example
 * ```ts
 * describeLlama("llama engine", () => { it("streams", async () => { ... }); });
 * ```
 */
export function describeLlama(name: string, body: () => void): void {
  describeWith(llamaInstalled, `node-llama-cpp is optional: ${LLAMA_INSTALL_COMMAND}`, name, body);
}

/**
 * Writes the generated test model into a fresh temp folder.
 *
 * @example
 * ```ts
 * const model = writeTempModel(); // model.path, then model.remove() in afterAll
 * ```
 */
export function writeTempModel(options: TestModelOptions = {}): { path: string; dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "spillway-llama-"));
  const path = join(dir, "tiny.gguf");
  writeFileSync(path, buildTestModel(options));
  return { path, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Pool-vs-cells checks made before every `completeBatch` (see {@link accountingScheduler}).
 *
 * @example
 * ```ts
 * expect(log.mismatches).toEqual([]);
 * ```
 */
export interface AccountingLog {
  steps: number;
  mismatches: string[];
}

/**
 * A `createScheduler` hook: the real scheduler, checked before every completed step against the llama
 * engine's cells (sum of every sequence's `nextTokenIndex` must equal the pool's used slots) and its own
 * invariants.
 *
 * @example
 * ```ts
 * const log: AccountingLog = { steps: 0, mismatches: [] };
 * server = await startEngineServer({ engine: "llama", createScheduler: accountingScheduler(() => server, log) });
 * ```
 */
export function accountingScheduler(server: () => RunningEngineServer | undefined, log: AccountingLog) {
  return (options: SchedulerOptions) => {
    const s = new Scheduler(options);
    return {
      submit: s.submit.bind(s),
      nextBatch: s.nextBatch.bind(s),
      abort: s.abort.bind(s),
      get: s.get.bind(s),
      state: s.state.bind(s),
      admissionHeadroomTokens: s.admissionHeadroomTokens.bind(s),
      completeBatch: (output: Parameters<Scheduler["completeBatch"]>[0]) => {
        const engine = server()?.engine as LlamaEngine | undefined;
        if (engine) {
          log.steps++;
          const used = s.state().usedTokens;
          const cells = engine.kvCells();
          if (used !== cells) log.mismatches.push(`step ${log.steps}: pool used ${used}, engine cells ${cells}`);
          checkSchedulerInvariants(s);
        }
        return s.completeBatch(output);
      },
    };
  };
}

/**
 * `#running-req` of every decode-batch log line.
 *
 * @example
 * ```ts
 * Math.max(...runningReqs(lines)); // the largest decode batch
 * ```
 */
export function runningReqs(lines: readonly string[]): number[] {
  return lines.flatMap((l) => {
    const m = /Decode batch, #running-req: (\d+)/.exec(l);
    return m ? [Number(m[1])] : [];
  });
}
