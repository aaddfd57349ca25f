/**
 * Public API of the token-budget scheduler (SGLang's admission, new-token ratio and retraction).
 *
 * @example
 * ```ts
 * import { Scheduler, formatEventLine } from "../scheduler/index.js";
 * const scheduler = new Scheduler({ maxTotalTokens: 4096 });
 * scheduler.submit({ id: "r1", promptTokenIds: [1, 2, 3], maxNewTokens: 8 });
 * const batch = scheduler.nextBatch(0); // { kind: "prefill", entries: [...], events: [], ended: [] }
 * const done = scheduler.completeBatch({ tokenIds: [42], now: 0.01 });
 * for (const e of done.events) console.log(formatEventLine(e)); // "Prefill batch, #new-seq: 1, ..."

 * ```
 */
export {
  SchedulerConfigError,
  SchedulerInputError,
  type SchedulerInputErrorCode,
  SchedulerProtocolError,
} from "./errors.js";
export { checkSchedulerInvariants } from "./invariants.js";
export {
  formatAbortLine,
  formatDecodeBatchLine,
  formatEventLine,
  formatPrefillBatchLine,
  formatRetractionLine,
  type LineOptions,
  pythonFixed,
} from "./log-lines.js";
export {
  defaultMaxRunningRequests,
  type ResolvedSchedulerOptions,
  resolveSchedulerOptions,
  SCHEDULER_DEFAULTS,
  schedulerOptionsSchema,
} from "./options.js";
export { NEVER_FITS_AGAIN_MESSAGE, OUT_OF_MEMORY_ABORT_MESSAGE, Scheduler } from "./scheduler.js";
export type {
  AbortEvent,
  Batch,
  BatchOutput,
  DecodeBatch,
  DecodeBatchEvent,
  EndedRequest,
  EndReason,
  IdleBatch,
  PrefillBatch,
  PrefillBatchEvent,
  PrefillEntry,
  RequestStatus,
  RequestView,
  RetractionEvent,
  SchedulePolicy,
  SchedulerCounters,
  SchedulerEvent,
  SchedulerOptions,
  SchedulerState,
  StepResult,
  SubmitRequest,
} from "./types.js";
