import type { DecodeBatch, PrefillBatch } from "../scheduler/index";

/**
 * The GPU side of an engine server: runs the batches the scheduler chose and samples one token per item.
 * The simulated GPU ({@link createSimulatedEngine}) and llama.cpp (`src/engine/llama/llama-engine.ts`)
 * implement it.
 *
 * @example
 * ```ts
 * const tokens = await engine.prefill(batch); // one token id per batch.entries item
 * engine.release("cmpl-1");                     // the request ended: drop its per-request state
 * ```
 */
export interface Engine {
  /** Computes the batch's prompt KV; returns one sampled token per entry (ignored for non-final chunks). */
  prefill(batch: PrefillBatch): Promise<number[]>;
  /** Runs one decode step; returns one sampled token per request. */
  decode(batch: DecodeBatch): Promise<number[]>;
  /** The request ended (any reason, including retraction-free aborts); forget it. */
  release(id: string): void;
  /**
   * The scheduler retracted the request: its KV slots are free again, and it will be prefilled from position 0
   * (prompt + output so far) when admitted again. An engine that holds per-request KV frees it here.
   */
  retract?(id: string): void;
}
