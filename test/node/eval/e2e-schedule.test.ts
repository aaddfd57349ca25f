import { describe, expect, it } from "vitest";
import {
  arrivalSchedule,
  dealArrivals,
  E2E_PHASES,
  E2E_SATURATED_WINDOW_S,
  E2E_SCHEDULES,
  E2E_SPIKE_PHASES,
  type E2ePhase,
  e2eScheduleFlag,
  scheduleSeconds,
} from "../../../eval/e2e-schedule";
import { UsageError } from "../../../scripts/command-line";

const input = {
  seed: 2026,
  phases: [
    { durationS: 10, load: 0.5 },
    { durationS: 10, load: 3 },
    { durationS: 20, load: 0.5 },
  ],
  capacityRps: 17,
  headerlessShare: 0.3,
};

describe("arrivalSchedule (eval:e2e's arrivals, computed once and replayed for every policy)", () => {
  it("is the same for the same seed and differs for another seed", () => {
    expect(arrivalSchedule(input)).toEqual(arrivalSchedule(input));
    expect(arrivalSchedule({ ...input, seed: 2027 })).not.toEqual(arrivalSchedule(input));
  });

  it("keeps seed 2026's arrivals of the runs made before the clients had their own processes (796 requests)", () => {
    // docs/evaluation-e2e-openai.json of those runs records 796 requests per policy at 17 req/s capacity.
    expect(arrivalSchedule(input)).toHaveLength(796);
  });

  it("numbers the arrivals in ascending time, each inside its phase, at roughly each phase's rate", () => {
    const arrivals = arrivalSchedule(input);
    arrivals.forEach((a, i) => {
      expect(a.index).toBe(i);
      if (i > 0) expect(a.atS).toBeGreaterThan(arrivals[i - 1]?.atS ?? 0);
    });
    const count = (from: number, to: number) => arrivals.filter((a) => a.atS >= from && a.atS < to).length;
    expect(arrivals.every((a) => a.atS >= 0 && a.atS < 40)).toBe(true);
    // Expected 85, 510 and 170 arrivals; Poisson counts stay well within these bounds.
    expect(count(0, 10)).toBeGreaterThan(50);
    expect(count(0, 10)).toBeLessThan(120);
    expect(count(10, 20)).toBeGreaterThan(420);
    expect(count(10, 20)).toBeLessThan(600);
    expect(count(20, 40)).toBeGreaterThan(120);
    expect(count(20, 40)).toBeLessThan(220);
  });

  it("marks about headerlessShare of the requests header-less, none at 0 and all at 1", () => {
    const arrivals = arrivalSchedule(input);
    const share = arrivals.filter((a) => a.headerless).length / arrivals.length;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.35);
    // The gaps come from the same generator, so these schedules differ in timing, not only in the flag.
    expect(arrivalSchedule({ ...input, headerlessShare: 0 }).some((a) => a.headerless)).toBe(false);
    expect(arrivalSchedule({ ...input, headerlessShare: 1 }).every((a) => a.headerless)).toBe(true);
  });
});

describe("dealArrivals (the schedule split among client processes)", () => {
  it("deals round-robin, so every process gets every phase and nothing is lost or repeated", () => {
    const arrivals = arrivalSchedule(input);
    const hands = dealArrivals(arrivals, 4);
    expect(hands).toHaveLength(4);
    expect(
      hands
        .flat()
        .map((a) => a.index)
        .sort((x, y) => x - y),
    ).toEqual(arrivals.map((a) => a.index));
    for (const hand of hands) {
      expect(Math.abs(hand.length - arrivals.length / 4)).toBeLessThanOrEqual(1);
      expect(hand.some((a) => a.atS >= 10 && a.atS < 20)).toBe(true);
      hand.forEach((a, i) => {
        if (i > 0) expect(a.atS).toBeGreaterThan(hand[i - 1]?.atS ?? 0);
      });
    }
    expect(dealArrivals(["a", "b", "c", "d", "e"], 2)).toEqual([
      ["a", "c", "e"],
      ["b", "d"],
    ]);
  });

  it("gives empty hands to processes beyond the arrivals, and refuses a count below 1", () => {
    expect(dealArrivals(["a"], 3)).toEqual([["a"], [], []]);
    expect(() => dealArrivals(["a"], 0)).toThrow(/positive integer/);
  });
});

/** Each phase's start and end, seconds after the schedule's start. */
function phaseSpans(phases: readonly E2ePhase[]): { fromS: number; toS: number; phase: E2ePhase }[] {
  let t = 0;
  return phases.map((phase) => {
    const span = { fromS: t, toS: t + phase.durationS, phase };
    t += phase.durationS;
    return span;
  });
}

describe("E2E_SCHEDULES (eval:e2e's --schedule)", () => {
  it("keeps burst, the default, as every run before the flag: today's phases and saturated window", () => {
    expect(e2eScheduleFlag(undefined)).toBe("burst");
    expect(E2E_SCHEDULES.burst.phases).toBe(E2E_PHASES);
    expect(E2E_SCHEDULES.burst.phases).toEqual(input.phases);
    expect(E2E_SCHEDULES.burst.saturatedWindowS).toEqual([12, 22]);
    expect(E2E_SCHEDULES.burst.saturatedWindowS).toBe(E2E_SATURATED_WINDOW_S);
  });

  it("spikes: 10 s at 0.5x, ten 0.2 s spikes at 15.5x every 3 s (a 1.5x mean over 30 s), 20 s at 0.5x; no saturated window", () => {
    const spikes = E2E_SCHEDULES.spikes;
    expect(spikes.phases).toBe(E2E_SPIKE_PHASES);
    expect(spikes.saturatedWindowS).toBeUndefined();
    expect(spikes.phases[0]).toEqual({ durationS: 10, load: 0.5 });
    expect(spikes.phases.at(-1)).toEqual({ durationS: 20, load: 0.5 });
    const train = spikes.phases.slice(1, -1);
    expect(train).toHaveLength(20);
    train.forEach((p, i) => {
      expect(p).toEqual(i % 2 === 0 ? { durationS: 0.2, load: 15.5 } : { durationS: 2.8, load: 0.5 });
    });
    const trainS = scheduleSeconds(train);
    expect(trainS).toBeCloseTo(30, 9);
    expect(train.reduce((s, p) => s + p.load * p.durationS, 0) / trainS).toBeCloseTo(1.5, 9);
    // Each spike starts a 3 s period.
    const starts = phaseSpans(spikes.phases)
      .filter((s) => s.phase.load > 1)
      .map((s) => s.fromS);
    starts.forEach((fromS, i) => {
      expect(fromS).toBeCloseTo(10 + 3 * i, 9);
    });
    expect(scheduleSeconds(spikes.phases)).toBeCloseTo(60, 9);
  });

  it("spikes' 0.2 s phases take their share of the arrivals: each phase's count is its mean load within Poisson noise", () => {
    const capacityRps = 17;
    const spans = phaseSpans(E2E_SPIKE_PHASES);
    for (const seed of [2026, 2027, 2028]) {
      const arrivals = arrivalSchedule({ ...input, seed, phases: E2E_SPIKE_PHASES, capacityRps });
      const inSpans = (which: typeof spans) =>
        arrivals.filter((a) => which.some((s) => a.atS >= s.fromS && a.atS < s.toS)).length;
      const meanOf = (which: typeof spans) =>
        which.reduce((n, s) => n + s.phase.load * s.phase.durationS, 0) * capacityRps;
      const spikes = spans.filter((s) => s.phase.load > 1);
      const between = spans.filter((s) => s.phase.load <= 1);
      // Every arrival lies in exactly one phase, the last before 60 s.
      expect(inSpans(spikes) + inSpans(between)).toBe(arrivals.length);
      expect(arrivals.every((a) => a.atS >= 0 && a.atS < 60)).toBe(true);
      // Poisson counts: the standard deviation is the square root of the mean, estimated by the count itself.
      for (const which of [spikes, between, spans]) {
        const count = inSpans(which);
        expect(Math.abs(count - meanOf(which))).toBeLessThan(4 * Math.sqrt(count));
      }
      // The spikes hold about 31 / 60 of the arrivals (31 of the schedule's 60 load-seconds), to within that noise.
      const share = inSpans(spikes) / arrivals.length;
      expect(Math.abs(share - meanOf(spikes) / meanOf(spans))).toBeLessThan(
        (4 * Math.sqrt(inSpans(spikes))) / arrivals.length,
      );
      // Every spike gets arrivals (about 53 each), none of them lost to the short phase.
      for (const spike of spikes) {
        const count = inSpans([spike]);
        expect(count).toBeGreaterThan(0);
        expect(Math.abs(count - meanOf([spike]))).toBeLessThan(4 * Math.sqrt(count));
      }
    }
  });

  it("--schedule takes a known name and refuses any other, listing the names", () => {
    expect(e2eScheduleFlag("burst")).toBe("burst");
    expect(e2eScheduleFlag("spikes")).toBe("spikes");
    for (const name of ["spike", "", "toString", "__proto__"]) {
      expect(() => e2eScheduleFlag(name)).toThrow(UsageError);
      expect(() => e2eScheduleFlag(name)).toThrow(`--schedule: unknown schedule ${name} (known: burst, spikes)`);
    }
  });
});
