import { describe, expect, it } from "vitest";
import { e2eAttemptsTable } from "../../../src/sim/report-markdown";
import { e2ePolicy, e2eRun } from "../../support/e2e-run";

describe("e2eAttemptsTable", () => {
  it("gives each policy's attempts by status and its requests by attempt count, other statuses pooled", () => {
    const table = e2eAttemptsTable(
      e2eRun([
        e2ePolicy("a", {
          attemptsByStatus: { "200": 10, "429": 4, "502": 1, failed: 1 },
          requestsByAttempts: { "1": 7, "2": 2, "3": 0, "5": 1 },
        }),
        e2ePolicy("old"),
      ]),
    );
    expect(table.split("\n")).toHaveLength(3);
    expect(table).toContain("| a | 10 | 4 | 0 | 2 | 7 / 2 / 0 / 1 |");
    expect(table).not.toContain("| old |");
  });

  it("is empty for runs made before the proxy counted them", () => {
    expect(e2eAttemptsTable(e2eRun([e2ePolicy("a")]))).toBe("");
  });
});
