import type { DecodeBatch, PrefillBatch } from "../scheduler/index";

/**
 * The simulated GPU's step-time model. Pure: it returns seconds, it never sleeps, so the server's loop
 * and a virtual-time simulator share it.
 *
 * - Prefill: `prefillOverheadS + extendTokens / prefillTokensPerS`.
 * - Decode step: `decodeBaseS + decodePerRequestS * batchSize + decodePerKTokenS * tokensInBatch / 1000`
 *   (attention reads every cached token, so a step slows as the batch's sequences grow).
 * - Both divided by `speed` (`speed: Infinity` makes every step free: the zero-cost engine).
 *
 * Defaults are calibrated to the seed's run (SGLang on one GPU): input throughput about 3,900 tok/s, and
 * about 24 ms per output token at batch 5 with about 2,500 tokens in the batch (20 + 5 * 0.5 + 2.5 * 0.6).
 *
 * @example
 * ```ts
 * const t = defaultTimingModel;
 * decodeStepSeconds(t, { batchSize: 5, tokensInBatch: 2560 }); // ~0.024
 * prefillSeconds(t, { extendTokens: 1280 });                   // ~0.33
 * ```
 */
export interface TimingModel {
  /** Prefill throughput, tokens per second. */
  prefillTokensPerS: number;
  /** Fixed cost of one prefill batch (kernel launches, scheduling), seconds. */
  prefillOverheadS: number;
  /** Fixed cost of one decode step, seconds. */
  decodeBaseS: number;
  /** Added per running request in the decode batch, seconds. */
  decodePerRequestS: number;
  /** Added per 1,000 tokens held by the batch's sequences, seconds. */
  decodePerKTokenS: number;
  /** Speed factor: every step time is divided by it (10 = ten times faster; Infinity = zero cost). */
  speed: number;
}

/** The defaults, calibrated to the seed's run (see {@link TimingModel}). */
export const defaultTimingModel: TimingModel = {
  prefillTokensPerS: 3900,
  prefillOverheadS: 0.005,
  decodeBaseS: 0.02,
  decodePerRequestS: 0.0005,
  decodePerKTokenS: 0.0006,
  speed: 1,
};

/** Seconds one prefill batch of `extendTokens` new tokens takes (see {@link TimingModel}). */
export function prefillSeconds(model: TimingModel, batch: { extendTokens: number }): number {
  if (model.speed === Number.POSITIVE_INFINITY) return 0;
  return (model.prefillOverheadS + batch.extendTokens / model.prefillTokensPerS) / model.speed;
}

/** Seconds one decode step takes (see {@link TimingModel}). */
export function decodeStepSeconds(model: TimingModel, batch: { batchSize: number; tokensInBatch: number }): number {
  if (model.speed === Number.POSITIVE_INFINITY || batch.batchSize === 0) return 0;
  const s =
    model.decodeBaseS +
    model.decodePerRequestS * batch.batchSize +
    (model.decodePerKTokenS * batch.tokensInBatch) / 1000;
  return s / model.speed;
}

/**
 * Seconds the simulated GPU takes for one scheduler batch: a prefill batch by its new (extend) tokens, a decode
 * step by its size and the tokens its sequences hold (prompt + output so far). The one place a batch becomes a
 * step time, for the engine's simulated GPU and the virtual-time simulator alike.
 *
 * @example
 * ```ts
 * const batch = scheduler.nextBatch(now);
 * if (batch.kind !== "idle") await sleep(batchSeconds(defaultTimingModel, batch));
 * ```
 */
export function batchSeconds(model: TimingModel, batch: PrefillBatch | DecodeBatch): number {
  if (batch.kind === "prefill") {
    let extendTokens = 0;
    for (const e of batch.entries) extendTokens += e.extendTokens;
    return prefillSeconds(model, { extendTokens });
  }
  let tokensInBatch = 0;
  for (const r of batch.requests) tokensInBatch += r.promptTokenIds.length + r.outputTokenIds.length;
  return decodeStepSeconds(model, { batchSize: batch.requests.length, tokensInBatch });
}
