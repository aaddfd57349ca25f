import { describe, expect, it } from "vitest";
import { jainIndex, maxMinFairShares } from "../../../src/sim/fairness";
import { tenantFigures } from "../../../src/sim/tenant-metrics";
import type { RequestTrace } from "../../../src/sim/trace";
import type { WorkloadRequest } from "../../../src/sim/workload";

describe("fairness figures", () => {
  it("Jain's index: 1 when equal, 1/n when one takes all", () => {
    expect(jainIndex([2, 2, 2])).toBe(1);
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25);
    expect(jainIndex([])).toBe(1);
    expect(jainIndex([1, 3])).toBeCloseTo(16 / 20, 12);
  });

  it("max-min fair shares fill small demands and share the rest by weight", () => {
    expect(maxMinFairShares(10, [2, 100, 100], [1, 1, 1])).toEqual([2, 4, 4]);
    expect(maxMinFairShares(12, [100, 100], [2, 1])).toEqual([8, 4]);
    expect(maxMinFairShares(10, [1, 2], [1, 1])).toEqual([1, 2]);
    const shares = maxMinFairShares(9, [1, 3, 100], [1, 1, 1]);
    expect(shares).toEqual([1, 3, 5]);
  });

  it("groups runs by tenant and class: served share, first-attempt admission, refusals, time to success", () => {
    const request = (id: number, tenant: string, priority: "interactive" | "batch"): WorkloadRequest => ({
      id,
      arrivalMs: 0,
      promptTokens: 1,
      outputTokens: 1,
      maxTokens: 1,
      tenant: { tenant, weight: 1, priority },
    });
    const trace = (id: number, admittedFirst: boolean, served: boolean, doneMs = 2000): RequestTrace => ({
      id,
      arrivalMs: 0,
      outputTokens: 1,
      client: "openai_node",
      roundTripMs: 0,
      result: served ? "served" : "gave_up",
      ...(served ? { completedAtMs: doneMs } : {}),
      attempts: [
        { atMs: 0, outcome: admittedFirst ? "admitted" : "rejected", answeredAtMs: 0, hinted: false },
        ...(admittedFirst
          ? []
          : [{ atMs: 1, outcome: served ? "admitted" : "rejected", answeredAtMs: 1, hinted: true } as const]),
      ],
    });
    const figures = tenantFigures([
      {
        workload: [request(0, "a", "interactive"), request(1, "a", "interactive"), request(2, "b", "batch")],
        requests: [trace(0, true, true, 1000), trace(1, false, true, 3000), trace(2, false, false)],
      },
    ]);
    expect(figures).toEqual([
      {
        tenant: "a",
        priority: "interactive",
        requests: 2,
        served: 2,
        servedShare: 1,
        firstAttemptAdmission: 0.5,
        refusedAttempts: 1,
        timeToSuccessP50S: 1,
        timeToSuccessP99S: 3,
        admissionWaitP99S: 0,
      },
      {
        tenant: "b",
        priority: "batch",
        requests: 1,
        served: 0,
        servedShare: 0,
        firstAttemptAdmission: 0,
        refusedAttempts: 2,
        timeToSuccessP50S: null,
        timeToSuccessP99S: null,
        admissionWaitP99S: null,
      },
    ]);
  });
});
