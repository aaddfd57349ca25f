/** Test helpers: a tiny engine loop around the scheduler. */
import type { Batch, EndedRequest, RequestView, Scheduler } from "../../../src/scheduler/index.js";

/** Items of a batch in order. */
export function itemsOf(batch: Batch): readonly RequestView[] {
  if (batch.kind === "prefill") return batch.entries.map((e) => e.request);
  if (batch.kind === "decode") return batch.requests;
  return [];
}

/** Complete a batch with token 7 for every item (no stops). */
export function completeAll(s: Scheduler, batch: Batch, stopped: string[] = []): EndedRequest[] {
  if (batch.kind === "idle") return [];
  const items = itemsOf(batch);
  return [...s.completeBatch({ tokenIds: items.map(() => 7), stopped }).ended];
}

/** One step: next batch then complete it. */
export function step(s: Scheduler, now = 0): { batch: Batch; ended: EndedRequest[] } {
  const batch = s.nextBatch(now);
  return { batch, ended: [...batch.ended, ...completeAll(s, batch)] };
}

/** Prompt of `n` distinct tokens starting at `base`. */
export function prompt(n: number, base: number): number[] {
  return Array.from({ length: n }, (_, i) => base + i);
}
