import { describe, expect, it } from "vitest";
import type { ClientStyle } from "../../../src/sim/client-model";
import { outcomesByClientStyle } from "../../../src/sim/client-outcomes";
import type { AttemptRecord, RequestTrace } from "../../../src/sim/trace";
import { runTraceOf } from "./run-trace";

/** An attempt at `atS`, admitted or refused for `reason`. */
function attempt(atS: number, reason?: "queue_full" | "queue_timeout"): AttemptRecord {
  const outcome = reason === undefined ? "admitted" : "rejected";
  const answeredS = reason === "queue_timeout" ? atS + 30 : atS;
  return { atMs: atS * 1000, outcome, answeredAtMs: answeredS * 1000, hinted: false, ...(reason ? { reason } : {}) };
}

/** A request of `client` first sent at `arrivalS`, served `afterS` later (undefined: it gave up). */
function request(
  id: number,
  client: ClientStyle,
  arrivalS: number,
  afterS?: number,
  attempts: AttemptRecord[] = [attempt(arrivalS)],
): RequestTrace {
  return {
    id,
    arrivalMs: arrivalS * 1000,
    client,
    roundTripMs: 80,
    attempts,
    result: afterS === undefined ? "gave_up" : "served",
    ...(afterS === undefined ? {} : { completedAtMs: (arrivalS + afterS) * 1000 }),
    outputTokens: 32,
  };
}

describe("outcomesByClientStyle", () => {
  it("counts each style's served share, its share within 60 s, its part of all that was lost, and its attempts", () => {
    const run = runTraceOf([
      request(1, "openai_node", 0, 3),
      // Served after 60 s: refused, then queued and shed at the timeout, then served.
      request(2, "openai_node", 0, 90, [attempt(0, "queue_full"), attempt(20, "queue_timeout"), attempt(80)]),
      request(3, "no_show", 0, undefined, [attempt(0, "queue_full")]), // lost
      request(4, "backoff_only", 10, 2),
      request(5, "no_show", 20, 4),
    ]);
    expect(outcomesByClientStyle(run)).toEqual([
      {
        style: "openai_node",
        requests: 2,
        served: 1,
        servedWithin60s: 0.5,
        lostOfAll: 0,
        attemptsPerRequest: 2,
        timedOutPerRequest: 0.5,
      },
      {
        style: "backoff_only",
        requests: 1,
        served: 1,
        servedWithin60s: 1,
        lostOfAll: 0,
        attemptsPerRequest: 1,
        timedOutPerRequest: 0,
      },
      {
        style: "no_show",
        requests: 2,
        served: 0.5,
        servedWithin60s: 0.5,
        lostOfAll: 0.2,
        attemptsPerRequest: 1,
        timedOutPerRequest: 0,
      },
    ]);
  });

  it("leaves out the styles a run has none of", () => {
    expect(outcomesByClientStyle(runTraceOf([]))).toEqual([]);
  });
});
