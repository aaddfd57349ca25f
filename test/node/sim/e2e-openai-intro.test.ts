import { describe, expect, it } from "vitest";
import { E2E_SCHEDULES } from "../../../eval/e2e-schedule";
import { e2eOpenAiIntro, e2eOpenAiTable } from "../../../src/sim/report-markdown";
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

  it("renders a run of the spikes schedule (no saturatedRps) with its spikes and its cut", () => {
    const run = e2eRun([e2ePolicy("static-30")], {
      schedule: "spikes",
      phases: [...E2E_SCHEDULES.spikes.phases],
      maxRunS: 170,
    });
    const text = e2eOpenAiIntro(run);
    expect(text).toContain("Load: 0.5x for 10 s, 15.5x for 0.2 s, 0.5x for 2.8 s, 15.5x for 0.2 s");
    expect(text).toContain("0.5x for 2.8 s, 0.5x for 20 s of 17.0 req/s");
    expect(text).toContain("a run is cut 170 s after its first arrival");
    expect(e2eOpenAiTable(run)).toContain("| static-30 | 10 | 100.0% |");
  });
});
