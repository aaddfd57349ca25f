import type { AttemptRecord, RequestTrace, RunTrace } from "../../../src/sim/trace";

/** A run's trace holding these requests: one slot and 100 s unless told otherwise (tests build traces by hand). */
export function runTraceOf(requests: RequestTrace[], over: Partial<Omit<RunTrace, "requests">> = {}): RunTrace {
  return {
    requests,
    drainSamples: [],
    idleWhileWaitingSlotS: 0,
    fleetSlots: 1,
    spanS: 100,
    trafficS: 100,
    ...over,
  };
}

/** A refused attempt at `atS` (seconds), answered at once, carrying a `hintS` hint if given. */
export function refusedAt(atS: number, hintS?: number): AttemptRecord {
  return {
    atMs: atS * 1000,
    outcome: "rejected",
    answeredAtMs: atS * 1000,
    hinted: false,
    ...(hintS === undefined ? {} : { hintMs: hintS * 1000 }),
  };
}

/** An attempt at `atS` placed on a replica `waitS` later; `hinted`: a retry made at a hint. */
export function admittedAt(
  atS: number,
  { waitS = 0, hinted = false }: { waitS?: number; hinted?: boolean } = {},
): AttemptRecord {
  return { atMs: atS * 1000, outcome: "admitted", answeredAtMs: (atS + waitS) * 1000, hinted };
}
