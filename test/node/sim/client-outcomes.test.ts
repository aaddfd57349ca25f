import { describe, expect, it } from "vitest";
import type { ClientStyle } from "../../../src/sim/client-model";
import { outcomesByClientStyle } from "../../../src/sim/client-outcomes";
import type { RequestTrace } from "../../../src/sim/trace";
import { runTraceOf } from "./run-trace";

/** A request of `client` first sent at `arrivalS`, served `afterS` later (undefined: it gave up). */
function request(id: number, client: ClientStyle, arrivalS: number, afterS?: number): RequestTrace {
  return {
    id,
    arrivalMs: arrivalS * 1000,
    client,
    roundTripMs: 80,
    attempts: [],
    result: afterS === undefined ? "gave_up" : "served",
    ...(afterS === undefined ? {} : { completedAtMs: (arrivalS + afterS) * 1000 }),
    outputTokens: 32,
  };
}

describe("outcomesByClientStyle", () => {
  it("counts each style's served share, its share within 60 s, and its part of all that was lost", () => {
    const run = runTraceOf([
      request(1, "openai_node", 0, 3),
      request(2, "openai_node", 0, 90), // served, but after 60 s
      request(3, "no_show", 0), // lost
      request(4, "backoff_only", 10, 2),
      request(5, "no_show", 20, 4),
    ]);
    expect(outcomesByClientStyle(run)).toEqual([
      { style: "openai_node", requests: 2, served: 1, servedWithin60s: 0.5, lostOfAll: 0 },
      { style: "backoff_only", requests: 1, served: 1, servedWithin60s: 1, lostOfAll: 0 },
      { style: "no_show", requests: 2, served: 0.5, servedWithin60s: 0.5, lostOfAll: 0.2 },
    ]);
  });

  it("leaves out the styles a run has none of", () => {
    expect(outcomesByClientStyle(runTraceOf([]))).toEqual([]);
  });
});
