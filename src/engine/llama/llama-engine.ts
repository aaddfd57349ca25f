import type { RequestView } from "../../scheduler/index";
import type { Engine } from "../engine";
import type { ControlledEvaluateItem, LlamaContextSequence, Token } from "./node-llama-cpp";

/**
 * The llama engine: an {@link Engine} plus what tests and benchmarks check it by.
 *
 * @example
 * ```ts
 * await engine.settle();
 * expect(engine.kvCells()).toBe(scheduler.state().usedTokens);
 * ```
 */
export interface LlamaEngine extends Engine {
  /** KV cells held: the sum of every sequence's `nextTokenIndex` (free sequences hold 0 once cleared). */
  kvCells(): number;
  /** Sequences not held by a request. */
  freeSequences(): number;
  /** Resolves once released sequences are cleared (the engine also waits for this before each step). */
  settle(): Promise<void>;
}

/**
 * Runs the scheduler's batches on llama.cpp context sequences: one sequence per running request, taken at
 * its first prefill and cleared when it ends or is retracted. All sequences' work of one step is queued in
 * the same tick, so node-llama-cpp evaluates it in one `llama_decode` batch (prefill chunks and single-token
 * decodes alike). Sampling is greedy (temperature 0): the same prompt gets the same text.
 *
 * The scheduler's pool is the authority on KV: with the prefix cache off and page size 1, a running
 * request holds prompt + output - 1 slots between steps, and its sequence holds exactly as many cells; the
 * engine checks that before each evaluation and throws on a mismatch (a bug, never a request's fault).
 *
 * @example
 * ```ts
 * const engine = createLlamaEngine({ sequences: runtime.sequences, eosTokenId: tokenizer.eosTokenId });
 * const tokens = await engine.prefill(batch);
 * ```
 */
export function createLlamaEngine(options: {
  sequences: readonly LlamaContextSequence[];
  eosTokenId: number;
}): LlamaEngine {
  const all = options.sequences;
  const free: LlamaContextSequence[] = [...all].reverse();
  const held = new Map<string, LlamaContextSequence>();
  const clearing = new Set<Promise<void>>();
  let stepping = false;
  const deferred: string[] = [];
  const sample = { generateNext: { token: true, options: { temperature: 0 } } };

  const forget = (id: string) => {
    // During a step the sequence may still be evaluating, or be about to be taken by this step's prefill (a
    // request aborted between the scheduler's choice and the evaluation): clear it once the step is over.
    if (stepping) {
      deferred.push(id);
      return;
    }
    const seq = held.get(id);
    if (seq === undefined) return;
    held.delete(id);
    const done: Promise<void> = seq.clearHistory().then(() => {
      clearing.delete(done);
      free.push(seq);
    });
    clearing.add(done);
  };

  const settle = async () => {
    while (clearing.size > 0) await Promise.all(clearing);
  };

  /** Runs one step; releases that arrived meanwhile are applied after it, and settled before it returns. */
  const step = async <T>(run: () => Promise<T>): Promise<T> => {
    stepping = true;
    let result: T;
    try {
      await settle();
      result = await run();
    } finally {
      stepping = false;
      for (const id of deferred.splice(0)) forget(id);
    }
    await settle();
    return result;
  };

  const sequenceOf = (r: RequestView, expectedCells: number, isNew: boolean): LlamaContextSequence => {
    let seq = held.get(r.id);
    if (seq === undefined && isNew) {
      seq = free.pop();
      if (seq === undefined)
        throw new Error(`llama engine: no free sequence for ${r.id} (more requests run than there are sequences)`);
      held.set(r.id, seq);
    }
    if (seq === undefined) throw new Error(`llama engine: ${r.id} has no sequence`);
    if (seq.nextTokenIndex !== expectedCells)
      throw new Error(
        `llama engine: ${r.id}'s sequence holds ${seq.nextTokenIndex} cells, the scheduler counts ${expectedCells}`,
      );
    return seq;
  };

  const tokenOf = (out: Array<undefined | { next: { token?: Token | null } }>, index: number): number =>
    out[index]?.next.token ?? options.eosTokenId;

  return {
    prefill(batch) {
      return step(() =>
        Promise.all(
          batch.entries.map(async (e) => {
            const r = e.request;
            const seq = sequenceOf(r, e.startPosition, e.startPosition === 0);
            const tokens = fillSlice(r, e.startPosition, e.extendTokens);
            if (!e.lastChunk) {
              await seq.evaluateWithoutGeneratingNewTokens(tokens);
              return -1;
            }
            const items: ControlledEvaluateItem[] = tokens.slice();
            items[items.length - 1] = [tokens[tokens.length - 1] as Token, sample];
            return tokenOf(await seq.controlledEvaluate(items), items.length - 1);
          }),
        ),
      );
    },
    decode(batch) {
      return step(() =>
        Promise.all(
          batch.requests.map(async (r) => {
            const filled = r.promptTokenIds.length + r.outputTokenIds.length;
            const seq = sequenceOf(r, filled - 1, false);
            const last = r.outputTokenIds[r.outputTokenIds.length - 1] as Token;
            return tokenOf(await seq.controlledEvaluate([[last, sample]]), 0);
          }),
        ),
      );
    },
    release: forget,
    retract: forget,
    kvCells: () => all.reduce((s, seq) => s + seq.nextTokenIndex, 0),
    freeSequences: () => free.length + clearing.size,
    settle,
  };
}

/** Tokens `[start, start + n)` of the request's prompt followed by its output so far. */
function fillSlice(r: RequestView, start: number, n: number): Token[] {
  const prompt = r.promptTokenIds;
  const out: Token[] = [];
  for (let i = start; i < start + n; i++)
    out.push((i < prompt.length ? prompt[i] : r.outputTokenIds[i - prompt.length]) as Token);
  return out;
}
