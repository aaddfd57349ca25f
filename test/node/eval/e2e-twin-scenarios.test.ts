import { describe, expect, it } from "vitest";
import { arrivalSchedule, E2E_PHASES, E2E_SPIKE_PHASES, scheduleSeconds } from "../../../eval/e2e-schedule";
import {
  chainedRunStartsS,
  E2E_REQUEST_SIZES,
  e2eChainedTwin,
  e2eReplayTwins,
  e2eTwinScenarios,
  QUIET_LEAD_IN,
  replayWorkload,
  runSchedules,
} from "../../../eval/e2e-twin-scenarios";
import { readScenario } from "../../../eval/scenario-files";

const demo = readScenario("demo-burst-3x");
const schedule = (seed: number) => arrivalSchedule({ seed, phases: E2E_PHASES, capacityRps: 17, headerlessShare: 0.3 });

describe("replayWorkload (a twin replaying an end-to-end run's own arrivals)", () => {
  it("from a cold router: exactly the run's first attempts, at their instants, the run's sizes, numbered in time order", () => {
    const [cold] = e2eTwinScenarios(demo);
    const arrivals = schedule(2026);
    const workload = replayWorkload({ ...(cold?.scenario ?? demo), seed: 21 }, 17, [arrivals], [0], E2E_REQUEST_SIZES);
    expect(workload.map((r) => r.arrivalMs)).toEqual(arrivals.map((a) => a.atS * 1000));
    expect(workload.map((r) => r.id)).toEqual(arrivals.map((_, i) => i));
    for (const r of workload) expect(r).toMatchObject({ promptTokens: 16, outputTokens: 32, maxTokens: 32 });
  });

  it("after a quiet spell: the twin's own trickle before the run, then the run's arrivals shifted by the lead-in", () => {
    const quiet = e2eTwinScenarios(demo).find((t) => t.id === "after-quiet")?.scenario ?? demo;
    const arrivals = schedule(2027);
    const leadS = QUIET_LEAD_IN.durationS;
    const workload = replayWorkload({ ...quiet, seed: 22 }, 17, [arrivals], [leadS], E2E_REQUEST_SIZES);
    const before = workload.filter((r) => r.arrivalMs < leadS * 1000);
    const during = workload.filter((r) => r.arrivalMs >= leadS * 1000);
    // The trickle (0.02x of 17/s for 40 s: about 14 requests) is the twin's; nothing of its own during the run.
    expect(before.length).toBeGreaterThan(0);
    expect(before.length).toBeLessThan(40);
    expect(during.map((r) => r.arrivalMs)).toEqual(arrivals.map((a) => (leadS + a.atS) * 1000));
    expect([...workload].sort((a, b) => a.arrivalMs - b.arrivalMs)).toEqual(workload);
  });

  it("through several runs on one router: each run at its start, the quiet spells between them the twin's own", () => {
    const chain = e2eChainedTwin(demo, 3, 60);
    const starts = chainedRunStartsS(3, 60);
    expect(starts).toEqual([0, 100, 200]);
    const runs = [2026, 2027, 2028].map(schedule);
    const workload = replayWorkload({ ...chain, seed: 21 }, 17, runs, starts, E2E_REQUEST_SIZES);
    runs.forEach((arrivals, i) => {
      const startMs = (starts[i] as number) * 1000;
      const inRun = workload.filter((r) => r.arrivalMs >= startMs && r.arrivalMs < startMs + 40_000);
      expect(inRun.map((r) => r.arrivalMs)).toEqual(arrivals.map((a) => ((starts[i] as number) + a.atS) * 1000));
    });
    expect(() => replayWorkload(chain, 17, runs, [0, 100], E2E_REQUEST_SIZES)).toThrow(/one start per schedule/);
  });
});

describe("e2eReplayTwins", () => {
  it("gives each twin one workload per seed of the run, and refuses a run that records no seeds", () => {
    const run = { seeds: [2026, 2027], capacityRps: 17, headerlessShare: 0.3 };
    const twins = e2eReplayTwins(demo, run, 17);
    expect(twins.map((t) => t.id)).toEqual(["cold", "after-quiet"]);
    for (const t of twins) {
      expect(t.seeds).toEqual([demo.seed, demo.seed + 1]);
      expect(t.workloads).toHaveLength(2);
    }
    const cold = twins[0];
    expect(cold?.workloads[1]?.map((r) => r.arrivalMs)).toEqual(schedule(2027).map((a) => a.atS * 1000));
    expect(() => e2eReplayTwins(demo, { capacityRps: 17, headerlessShare: 0.3 }, 17)).toThrow(/no seeds/);
  });
});

describe("the replaying twins under another schedule (run 24's spike train)", () => {
  const spikes = (seed: number) =>
    arrivalSchedule({ seed, phases: E2E_SPIKE_PHASES, capacityRps: 17, headerlessShare: 0.3 });
  const run = { seeds: [2026, 2027], capacityRps: 17, headerlessShare: 0.3, phases: E2E_SPIKE_PHASES };

  it("replays the train's own arrivals under the train's phases, and after a quiet spell the whole 60 s train", () => {
    const [cold, quiet] = e2eReplayTwins(demo, run, 17, E2E_SPIKE_PHASES);
    expect(cold?.scenario.phases).toEqual(E2E_SPIKE_PHASES);
    expect(cold?.workloads[1]?.map((r) => r.arrivalMs)).toEqual(spikes(2027).map((a) => a.atS * 1000));
    // After the lead-in the twin's own trickle stops for the train's 60 s, not the burst schedule's 40 s.
    const leadS = QUIET_LEAD_IN.durationS;
    const during = quiet?.workloads[0]?.filter((r) => r.arrivalMs >= leadS * 1000) ?? [];
    expect(scheduleSeconds(E2E_SPIKE_PHASES)).toBeGreaterThan(scheduleSeconds(E2E_PHASES));
    expect(during.map((r) => r.arrivalMs)).toEqual(spikes(2026).map((a) => (leadS + a.atS) * 1000));
  });

  it("refuses to replay a run under phases other than those it recorded", () => {
    expect(runSchedules(run, E2E_SPIKE_PHASES)).toEqual([spikes(2026), spikes(2027)]);
    expect(() => runSchedules(run)).toThrow(/other phases/);
    expect(() => e2eReplayTwins(demo, { ...run, phases: E2E_PHASES }, 17, E2E_SPIKE_PHASES)).toThrow(/other phases/);
    expect(runSchedules({ ...run, phases: E2E_PHASES })).toEqual([schedule(2026), schedule(2027)]);
  });
});
