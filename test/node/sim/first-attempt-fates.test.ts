import { describe, expect, it } from "vitest";
import { firstAttemptsByArrival } from "../../../src/sim/first-attempt-fates";
import type { AttemptRecord, RequestTrace } from "../../../src/sim/trace";
import { admittedAt, refusedAt } from "./run-trace";
import { defaultRunOfSmallBurst } from "./small-scenario";

const request = (id: number, arrivalS: number, attempts: AttemptRecord[], tookS?: number): RequestTrace => ({
  id,
  arrivalMs: arrivalS * 1000,
  client: "openai_node",
  roundTripMs: 0,
  attempts,
  result: tookS === undefined ? "gave_up" : "served",
  ...(tookS === undefined ? {} : { completedAtMs: (arrivalS + tookS) * 1000 }),
  outputTokens: 1,
});

describe("firstAttemptsByArrival", () => {
  it("tells, per bin of first arrival, first attempts refused (and their mean hint) from those that waited long", () => {
    const bins = firstAttemptsByArrival(
      {
        requests: [
          request(1, 1, [admittedAt(1, { waitS: 0.2 })], 3),
          request(2, 2, [admittedAt(2, { waitS: 2.5 })], 6),
          request(3, 3, [refusedAt(3, 10), admittedAt(13, { waitS: 0 })], 14),
          request(4, 4, [refusedAt(4, 20), refusedAt(24, 30), refusedAt(54)]),
          request(5, 12, [refusedAt(12)], undefined),
        ],
      },
      10,
    );
    expect(bins).toEqual([
      {
        fromS: 0,
        requests: 4,
        refused: 2,
        meanHintS: 15,
        waitedLong: 1,
        servedWithin5s: 1,
        lost: 1,
        attemptsPerRequest: 7 / 4,
      },
      {
        fromS: 10,
        requests: 1,
        refused: 1,
        meanHintS: undefined,
        waitedLong: 0,
        servedWithin5s: 0,
        lost: 1,
        attemptsPerRequest: 1,
      },
    ]);
  });

  it("accounts for every request of a simulated run once", () => {
    const run = defaultRunOfSmallBurst(20);
    const bins = firstAttemptsByArrival(run, 3);
    expect(bins.reduce((n, b) => n + b.requests, 0)).toBe(run.requests.length);
    expect(bins.reduce((n, b) => n + b.lost, 0)).toBe(run.requests.filter((r) => r.result !== "served").length);
    expect(bins.some((b) => b.refused > 0)).toBe(true);
  });

  it("refuses a bin that is not a positive number of seconds", () => {
    expect(() => firstAttemptsByArrival({ requests: [] }, 0)).toThrow(/positive/);
  });
});
