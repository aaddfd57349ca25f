import { describe, expect, it } from "vitest";
import { DrainAccuracyTracker, type DrainObservation } from "../../../src/core/drain-accuracy";
import { DEFAULT_DRAIN_RATE_OPTIONS } from "../../../src/core/drain-rate";
import { DEFAULT_SATURATION_OPTIONS } from "../../../src/core/retry-after";
import { RouterCore } from "../../../src/core/router-core";
import { computeMetrics, percentile } from "../../../src/sim/metrics";
import type { AttemptRecord, RequestTrace, RunTrace } from "../../../src/sim/trace";

const rejected = (atMs: number, hinted: boolean): AttemptRecord => ({
  atMs,
  outcome: "rejected",
  answeredAtMs: atMs,
  hinted,
  hintMs: 2000,
  status: 429,
});
const admitted = (atMs: number, hinted: boolean): AttemptRecord => ({
  atMs,
  outcome: "admitted",
  answeredAtMs: atMs + 10,
  hinted,
});

function trace(requests: RequestTrace[], extra: Partial<RunTrace> = {}): RunTrace {
  return { requests, drainSamples: [], idleWhileWaitingSlotS: 0, fleetSlots: 4, spanS: 100, trafficS: 50, ...extra };
}

describe("metric definitions on hand-made traces", () => {
  it("every retry admitted at the suggested time gives X = 1.0", () => {
    const requests: RequestTrace[] = [0, 1, 2].map((id) => ({
      id,
      arrivalMs: id * 1000,
      attempts: [rejected(id * 1000, false), admitted(id * 1000 + 2000, true)],
      result: "served",
      completedAtMs: id * 1000 + 5000,
      client: "openai_node" as const,
      roundTripMs: 0,
      outputTokens: 10,
    }));
    const m = computeMetrics(trace(requests));
    expect(m.admittedRetryRate).toBe(1);
    expect(m.anyRetryAdmittedRate).toBe(1);
    expect(m.attemptsPerSuccess).toBe(2);
    expect(m.timeToSuccessP50S).toBe(5);
    // Placed 10 ms after its retry at arrival + 2 s, done at arrival + 5 s: 2.99 s on a replica.
    expect(m.onReplicaP50S).toBeCloseTo(2.99, 9);
    expect(m.servedFraction).toBe(1);
  });

  it("the mean wait caps each request's time to success at 120 s and counts one never served as 120 s", () => {
    const request = (id: number, completedAfterS: number | undefined): RequestTrace => ({
      id,
      arrivalMs: 1000 * id,
      attempts: [admitted(1000 * id, false)],
      result: completedAfterS === undefined ? "gave_up" : "served",
      ...(completedAfterS === undefined ? {} : { completedAtMs: 1000 * (id + completedAfterS) }),
      client: "openai_node" as const,
      roundTripMs: 0,
      outputTokens: 1,
    });
    // 2 s, 28 s, 200 s (counted as 120) and never (120): (2 + 28 + 120 + 120) / 4.
    const m = computeMetrics(trace([request(0, 2), request(1, 28), request(2, 200), request(3, undefined)]));
    expect(m.meanWaitS).toBeCloseTo(67.5, 9);
    // Serving a request later within the same horizon (28 s instead of 16 s: both within 30 s) leaves the curve as it
    // is and lengthens the mean wait: what the curve does not count.
    const sooner = computeMetrics(trace([request(0, 2), request(1, 16), request(2, 200), request(3, undefined)]));
    expect(sooner.servedWithinS).toEqual(m.servedWithinS);
    expect(sooner.meanWaitS).toBeCloseTo(64.5, 9);
  });

  it("X counts only hinted retries, the any-retry rate counts backoff retries too; give-ups are counted", () => {
    const requests: RequestTrace[] = [
      {
        id: 0,
        arrivalMs: 0,
        attempts: [rejected(0, false), rejected(2000, true), admitted(4000, true)],
        result: "served",
        completedAtMs: 6000,
        client: "openai_node" as const,
        roundTripMs: 0,
        outputTokens: 1,
      },
      {
        id: 1,
        arrivalMs: 0,
        attempts: [rejected(0, false), admitted(500, false)],
        result: "served",
        completedAtMs: 3000,
        client: "openai_node" as const,
        roundTripMs: 0,
        outputTokens: 1,
      },
      {
        id: 2,
        arrivalMs: 0,
        attempts: [rejected(0, false), rejected(2000, true)],
        result: "gave_up",
        client: "openai_node" as const,
        roundTripMs: 0,
        outputTokens: 1,
      },
    ];
    const m = computeMetrics(trace(requests));
    expect(m.hintedRetries).toBe(3);
    expect(m.admittedRetryRate).toBeCloseTo(1 / 3);
    expect(m.anyRetryAdmittedRate).toBeCloseTo(2 / 4);
    expect(m.attemptsPerSuccess).toBe(2.5);
    expect(m.gaveUp).toBe(1);
    expect(m.goodputRps).toBeCloseTo(2 / 100);
  });

  it("no retries at all: X is n/a (null), not 0 or 1", () => {
    const m = computeMetrics(
      trace([
        {
          id: 0,
          arrivalMs: 0,
          attempts: [admitted(0, false)],
          result: "served",
          completedAtMs: 1000,
          client: "openai_node" as const,
          roundTripMs: 0,
          outputTokens: 1,
        },
      ]),
    );
    expect(m.admittedRetryRate).toBeNull();
    expect(m.attemptsPerSuccess).toBe(1);
  });

  it("drain error is (suggested - observed) / observed; idle capacity is normalised by the fleet's slot-seconds", () => {
    const m = computeMetrics(
      trace([], {
        drainSamples: [
          { atMs: 0, suggestedS: 4, observedS: 2 },
          { atMs: 0, suggestedS: 1, observedS: 2 },
          { atMs: 0, suggestedS: 2, observedS: 2 },
        ],
        idleWhileWaitingSlotS: 40,
      }),
    );
    expect(m.drainRelErrorMedian).toBe(0);
    expect(m.drainAbsRelErrorP90).toBe(1);
    expect(m.idleWhileWaitingFraction).toBeCloseTo(40 / (4 * 100));
  });

  it("nearest-rank percentiles", () => {
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 99)).toBe(5);
    expect(percentile([], 50)).toBeNull();
  });
});

describe("observed drain time (RouterCore's tracker, every observation through the hook)", () => {
  it("equals the moment the drain counter passes C0 + D", () => {
    let now = 0;
    const seen: DrainObservation[] = [];
    const core = new RouterCore(
      {
        replicas: ["a"],
        maxOngoingRequests: 10,
        maxQueuedRequests: 3,
        queueTimeoutMs: 60_000,
        leaseTimeoutMs: 600_000,
        statusCode: 429,
        retryAfter: {
          retryAfterPolicy: "static",
          retryAfterS: 5,
          jitter: 0,
          saturation: DEFAULT_SATURATION_OPTIONS,
        },
        drainRate: DEFAULT_DRAIN_RATE_OPTIONS,
      },
      { now: () => now },
      () => 0.5,
      new DrainAccuracyTracker(1_000_000, 0, (o) => seen.push(o)),
    );
    const drainOne = () => {
      const plan = core.beginRound();
      if (!plan) throw new Error("nothing queued");
      for (const r of plan.probe) core.reportProbe(r, 0);
      expect(core.finishRound(plan).kind).toBe("placed");
    };
    // C0 = 1 drain before the rejection.
    core.submit("warm");
    drainOne();
    for (const t of ["q1", "q2", "q3"]) core.submit(t);
    now = 1_000;
    expect(core.submit("refused").kind).toBe("rejected"); // D = 3 queued, C0 = 1: target counter 4
    now = 2_000;
    drainOne(); // counter 2
    now = 3_500;
    drainOne(); // counter 3
    expect(seen).toHaveLength(0);
    now = 7_250;
    drainOne(); // counter 4 = C0 + D
    expect(seen).toEqual([{ atMs: 1_000, queueDepth: 3, suggestedS: 5, observedS: 6.25 }]);
  });
});
