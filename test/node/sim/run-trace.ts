import type { RequestTrace, RunTrace } from "../../../src/sim/trace";

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
