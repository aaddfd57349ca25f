import { describe, expect, it } from "vitest";
import { e2eOpenAiIntro } from "../../../src/sim/report-markdown";
import { e2ePolicy, e2eRun } from "../../support/e2e-run";

describe("e2eOpenAiIntro", () => {
  it("names the commit whose code the run measured, when the run recorded one", () => {
    const run = e2eRun([e2ePolicy("booked_capacity")], { seeds: [2026, 2027], commit: "0123456789ab" });
    const text = e2eOpenAiIntro(run);
    expect(text).toContain("Each policy's figures pool 2 arrival seeds (2026, 2027)");
    expect(text).toContain("The code run: commit `0123456789ab`.");
  });

  it("says nothing of a commit for a run made before commits were recorded", () => {
    expect(e2eOpenAiIntro(e2eRun([e2ePolicy("booked_capacity")]))).not.toContain("commit");
  });
});
