/**
 * Pure formatters that turn scheduler events into SGLang's log lines, character for character, so log
 * parsers written for SGLang read ours unchanged.
 */
import type { AbortEvent, DecodeBatchEvent, PrefillBatchEvent, RetractionEvent, SchedulerEvent } from "./types.js";

/**
 * Python's `f"{x:.{digits}f}"`: like `toFixed`, except that exact ties round half to even (Python formats the
 * exact binary value; `toFixed` rounds ties up). A tie at `digits` decimals is an odd multiple of
 * 2^-(digits+1) (e.g. 0.125 at 2 digits), which we can detect exactly because scaling by a power of two is exact.
 *
 * @example
 * ```ts
 * pythonFixed(0.125, 2); // "0.12" (toFixed gives "0.13")
 * pythonFixed(3889.6, 2); // "3889.60"
 * ```
 */
export function pythonFixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return x > 0 ? "inf" : x < 0 ? "-inf" : "nan";
  const scaled = x * 2 ** (digits + 1);
  if (Number.isInteger(scaled) && Math.abs(scaled % 2) === 1) {
    const sign = x < 0 ? -1 : 1;
    const p = 10 ** digits;
    const lower = Math.floor(Math.abs(x) * p); // exact: |x| * 10^digits = lower + 0.5 is representable
    const even = lower % 2 === 0 ? lower : lower + 1;
    return ((sign * even) / p).toFixed(digits);
  }
  return x.toFixed(digits);
}

/** Python's `str(bool)`. */
function pyBool(b: boolean): string {
  return b ? "True" : "False";
}

/**
 * Display options shared by the batch lines.
 *
 * @example
 * ```ts
 * formatDecodeBatchLine(event, { cudaGraph: true });
 * ```
 */
export interface LineOptions {
  /** The `cuda graph:` field; our engine has none, so the default is false. */
  cudaGraph?: boolean;
}

/**
 * SGLang's prefill line.
 *
 * @example
 * ```ts
 * formatPrefillBatchLine({ type: "prefill", now: 0, newSeq: 4, newToken: 896, cachedToken: 0, tokenUsage: 0.28,
 *   runningReq: 1, queueReq: 11, pendingToken: 2808, inputThroughput: 3889.6 });
 * // "Prefill batch, #new-seq: 4, #new-token: 896, #cached-token: 0, token usage: 0.28, #running-req: 1,
 * //  #queue-req: 11, #pending-token: 2808, cuda graph: False, input throughput (token/s): 3889.60"
 * ```
 */
export function formatPrefillBatchLine(e: PrefillBatchEvent, options: LineOptions = {}): string {
  return (
    `Prefill batch, #new-seq: ${e.newSeq}, #new-token: ${e.newToken}, #cached-token: ${e.cachedToken}, ` +
    `token usage: ${pythonFixed(e.tokenUsage, 2)}, #running-req: ${e.runningReq}, #queue-req: ${e.queueReq}, ` +
    `#pending-token: ${e.pendingToken}, cuda graph: ${pyBool(options.cudaGraph ?? false)}, ` +
    `input throughput (token/s): ${pythonFixed(e.inputThroughput, 2)}`
  );
}

/**
 * SGLang's decode line.
 *
 * @example
 * ```ts
 * formatDecodeBatchLine({ type: "decode", now: 0, runningReq: 5, token: 1517, tokenUsage: 1517 / 4096,
 *   genThroughput: 170.33, queueReq: 11 });
 * // "Decode batch, #running-req: 5, #token: 1517, token usage: 0.37, cuda graph: False,
 * //  gen throughput (token/s): 170.33, #queue-req: 11"
 * ```
 */
export function formatDecodeBatchLine(e: DecodeBatchEvent, options: LineOptions = {}): string {
  return (
    `Decode batch, #running-req: ${e.runningReq}, #token: ${e.token}, token usage: ${pythonFixed(e.tokenUsage, 2)}, ` +
    `cuda graph: ${pyBool(options.cudaGraph ?? false)}, gen throughput (token/s): ${pythonFixed(e.genThroughput, 2)}, ` +
    `#queue-req: ${e.queueReq}`
  );
}

/**
 * SGLang's retraction line (ratios with four decimals, as SGLang's `:.4f`).
 *
 * @example
 * ```ts
 * formatRetractionLine({ type: "retraction", now: 0, retractedIds: ["a", "b"], inputTokens: 0, outputTokens: 0,
 *   oldRatio: 0.5, newRatio: 0.3 });
 * // "KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.5000 -> 0.3000"
 * ```
 */
export function formatRetractionLine(e: RetractionEvent): string {
  return (
    `KV cache pool is full. Retract requests. #retracted_reqs: ${e.retractedIds.length}, ` +
    `#new_token_ratio: ${pythonFixed(e.oldRatio, 4)} -> ${pythonFixed(e.newRatio, 4)}`
  );
}

/**
 * The abort line: the request id, then the abort message (for out of memory, SGLang's exact text).
 *
 * @example
 * ```ts
 * formatAbortLine({ type: "abort", now: 0, id: "r7", status: 500, message: OUT_OF_MEMORY_ABORT_MESSAGE });
 * // "Abort request r7, status: 500, message: Out of memory even after retracting all other requests in the ..."
 * ```
 */
export function formatAbortLine(e: AbortEvent): string {
  return `Abort request ${e.id}, status: ${e.status}, message: ${e.message}`;
}

/**
 * Any event's line.
 *
 * @example
 * ```ts
 * for (const e of batch.events) console.log(formatEventLine(e));
 * ```
 */
export function formatEventLine(e: SchedulerEvent, options: LineOptions = {}): string {
  switch (e.type) {
    case "prefill":
      return formatPrefillBatchLine(e, options);
    case "decode":
      return formatDecodeBatchLine(e, options);
    case "retraction":
      return formatRetractionLine(e);
    case "abort":
      return formatAbortLine(e);
  }
}
