import { describe, expect, it } from "vitest";
import { type E2eOpenAiPolicy, type E2eOpenAiRun, e2eAttemptsTable } from "../../../src/sim/report-markdown";

const policy = (id: string, extra: Partial<E2eOpenAiPolicy> = {}): E2eOpenAiPolicy => ({
  id,
  requests: 10,
  served: 10,
  servedFraction: 1,
  servedWithinS: { "5": 1 },
  attemptsPerOffered: 1.5,
  timeToSuccessP50S: 1,
  headerlessServedFraction: 1,
  sdkServedFraction: 1,
  unfinished: 0,
  ...extra,
});
const run = (policies: E2eOpenAiPolicy[]): E2eOpenAiRun => ({
  generatedBy: "test",
  capacityRps: 17,
  phases: [],
  headerlessShare: 0.3,
  proxyDelayMs: [50, 300],
  maxRunS: 150,
  policies,
});

describe("e2eAttemptsTable", () => {
  it("gives each policy's attempts by status and its requests by attempt count, other statuses pooled", () => {
    const table = e2eAttemptsTable(
      run([
        policy("a", {
          attemptsByStatus: { "200": 10, "429": 4, "502": 1, failed: 1 },
          requestsByAttempts: { "1": 7, "2": 2, "3": 0, "5": 1 },
        }),
        policy("old"),
      ]),
    );
    expect(table.split("\n")).toHaveLength(3);
    expect(table).toContain("| a | 10 | 4 | 0 | 2 | 7 / 2 / 0 / 1 |");
    expect(table).not.toContain("| old |");
  });

  it("is empty for runs made before the proxy counted them", () => {
    expect(e2eAttemptsTable(run([policy("a")]))).toBe("");
  });
});
