import { describe, expect, it } from "vitest";
import { CapacityBooking, DEFAULT_CAPACITY_BOOKING_OPTIONS } from "../../../src/core/capacity-booking";
import { measureCapacity } from "../../../src/sim/capacity";
import { evaluatePolicy } from "../../../src/sim/evaluation";
import { type HintScheduleTable, hintScheduleOf } from "../../../src/sim/hint-schedule";
import {
  type HintRunFigures,
  type HintSearchScore,
  scoreAgainst,
  searchHintSchedule,
} from "../../../src/sim/hint-search";
import { type HintSearchRow, renderHintSearch } from "../../../src/sim/hint-search-report";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { runSimulation } from "../../../src/sim/simulation";
import { generateWorkload } from "../../../src/sim/workload";
import { defaultPolicySpec, smallBurst } from "./small-scenario";

const curveOf = (values: number[]) =>
  Object.fromEntries([5, 15, 30, 60, 120].map((h, i) => [String(h), values[i] as number]));

describe("hint tables (HintScheduleTable) in place of the ledger's hints", () => {
  it("answers a refusal in the table's buckets with its hint, first and later refusals apart, and leaves the rest", () => {
    const schedule = hintScheduleOf({ fromS: 60, bucketS: 5, first: [30, null], later: [5, 5] });
    expect(schedule(62_000, true)).toBe(30);
    expect(schedule(62_000, false)).toBe(5);
    expect(schedule(66_000, true)).toBeUndefined();
    expect(schedule(59_999, true)).toBeUndefined();
    expect(schedule(70_000, false)).toBeUndefined();
  });

  it("the ledger gives the scheduled hint within its second and the client's horizon, and books nothing", () => {
    const ledger = new CapacityBooking(DEFAULT_CAPACITY_BOOKING_OPTIONS, 0, undefined, (_, first) => (first ? 30 : 90));
    const signals = { queueDepth: 50, drainRate: 10 };
    expect(ledger.hint(10_000, signals, 60, () => 0.5, { first: true })).toEqual({ delayS: 30.5, promised: false });
    expect(ledger.hint(10_000, signals, 60, () => 0.5, { first: false })).toEqual({ delayS: 60, promised: false });
    expect(ledger.outstanding).toBe(0);
    const unscheduled = new CapacityBooking(DEFAULT_CAPACITY_BOOKING_OPTIONS, 0, undefined, () => undefined);
    expect(unscheduled.hint(10_000, signals, 60, () => 0.5, { first: true })?.promised).toBe(true);
  });

  it("with a table over every refusal, a simulated run sends its hints (or the rest of one), not the ledger's", () => {
    const scenario = smallBurst();
    const capacity = measureCapacity(scenario);
    const workload = generateWorkload(scenario, capacity);
    const policy = defaultPolicySpec();
    const table: HintScheduleTable = { fromS: 0, bucketS: 100, first: [7], later: [7] };
    const trace = runSimulation(scenario, { ...policy, hintSchedule: table }, workload);
    const hints = trace.requests.flatMap((r) => r.attempts.flatMap((a) => (a.hintMs === undefined ? [] : [a.hintMs])));
    expect(hints.length).toBeGreaterThan(0);
    // Drawn within the second after 7 s, or the rest of it for a client back early (a backoff without the hint).
    for (const h of hints) expect(h).toBeLessThanOrEqual(8_000);
    expect(hints.filter((h) => h >= 7_000).length).toBeGreaterThan(hints.length / 2);
    const ledgerHints = runSimulation(scenario, policy, workload).requests.flatMap((r) =>
      r.attempts.flatMap((a) => (a.hintMs === undefined ? [] : [a.hintMs])),
    );
    expect(ledgerHints.some((h) => h > 8_000)).toBe(true);
    // The FIFO router of static 30 s with the same table: its hints, not the constant's (no ledger: no rest of one).
    const fifo = EVAL_POLICIES.find((p) => p.id === "static-30");
    if (!fifo) throw new Error("no static-30");
    const fifoHints = runSimulation(scenario, { ...fifo, hintSchedule: table }, workload).requests.flatMap((r) =>
      r.attempts.flatMap((a) => (a.hintMs === undefined ? [] : [a.hintMs])),
    );
    expect(fifoHints.length).toBeGreaterThan(0);
    for (const h of fifoHints) expect(h >= 7_000 && h <= 8_000, String(h)).toBe(true);
  });
});

describe("searchHintSchedule", () => {
  const envelope = curveOf([0.6, 0.8, 0.9, 0.95, 1]);

  it("scores a run by its worst gap to the envelope, the horizon of it and the gaps summed", () => {
    const score = scoreAgainst(
      { servedWithinS: curveOf([0.5, 0.8, 0.92, 0.95, 0.99]), servedFraction: 0.99, attemptsPerOffered: 1.2 },
      envelope,
    );
    expect(score.worstGap).toBeCloseTo(-0.1);
    expect(score.worstHorizonS).toBe(5);
    expect(score.gapSum).toBeCloseTo(-0.09);
  });

  it("keeps, cell by cell, the hint whose run scores best, and reports the runs it made", () => {
    // A made-up scenario whose 5 s share is best with 2 s for first refusals in the first bucket and 30 s for later
    // ones in the second; every other cell is best left to the ledger.
    const evaluate = (t: HintScheduleTable): HintRunFigures => {
      const at5 =
        0.5 + (t.first[0] === 2 ? 0.08 : 0) + (t.later[1] === 30 ? 0.04 : 0) - (t.first[1] !== null ? 0.01 : 0);
      return { servedWithinS: curveOf([at5, 0.8, 0.9, 0.95, 1]), servedFraction: 1, attemptsPerOffered: 1.2 };
    };
    const result = searchHintSchedule(evaluate, envelope, {
      fromS: 60,
      toS: 70,
      bucketS: 5,
      sweeps: 1,
      values: [2, 30],
    });
    expect(result.table).toEqual({ fromS: 60, bucketS: 5, first: [2, null], later: [null, 30] });
    expect(result.start.worstGap).toBeCloseTo(-0.1);
    expect(result.best.worstGap).toBeCloseTo(0);
    expect(result.best.gapSum).toBeCloseTo(0.02);
    // The empty table, then two values in each of four cells.
    expect(result.evaluated).toBe(1 + 4 * 2);
  });

  it("keeps no table that breaks the served or attempts limits, however near the curve it comes", () => {
    // 2 s for first refusals in the first bucket gains the most at 5 s, but gives up requests; 30 s gains less and
    // keeps them; 1 s later gains a little and costs attempts.
    const evaluate = (t: HintScheduleTable): HintRunFigures => {
      const at5 = 0.5 + (t.first[0] === 2 ? 0.08 : t.first[0] === 30 ? 0.03 : 0) + (t.later[0] === 1 ? 0.01 : 0);
      return {
        servedWithinS: curveOf([at5, 0.8, 0.9, 0.95, 1]),
        servedFraction: t.first[0] === 2 ? 0.9 : 0.99,
        attemptsPerOffered: t.later[0] === 1 ? 1.4 : 1.2,
      };
    };
    const settings = { fromS: 0, toS: 5, bucketS: 5, sweeps: 1, values: [1, 2, 30], servedAtLeast: 0.98 };
    expect(searchHintSchedule(evaluate, envelope, settings).table).toMatchObject({ first: [30], later: [1] });
    const kept = searchHintSchedule(evaluate, envelope, { ...settings, attemptsAtMost: 1.3 });
    expect(kept.table).toMatchObject({ first: [30], later: [null] });
    expect(kept.best.worstGap).toBeCloseTo(-0.07);
    // Where the ledger alone already misses a limit, the limit is the ledger's own figure.
    const strict = searchHintSchedule(evaluate, envelope, { ...settings, servedAtLeast: 1, attemptsAtMost: 1 });
    expect(strict.table).toMatchObject({ first: [30], later: [null] });
  });

  it("never ends worse than the ledger alone, on a real simulated scenario", () => {
    const scenario = smallBurst();
    const capacity = measureCapacity(scenario);
    const seeds = [scenario.seed];
    const workloads = seeds.map((seed) => generateWorkload({ ...scenario, seed }, capacity));
    const policy = defaultPolicySpec();
    const evaluate = (table: HintScheduleTable) =>
      evaluatePolicy(scenario, seeds, capacity, { ...policy, hintSchedule: table }, workloads);
    const result = searchHintSchedule(evaluate, envelope, {
      fromS: 10,
      toS: 20,
      bucketS: 5,
      sweeps: 1,
      values: [1, 10],
    });
    expect(result.best.worstGap).toBeGreaterThanOrEqual(result.start.worstGap);
    // The recorded table reproduces the recorded score.
    expect(scoreAgainst(evaluate(result.table), envelope).worstGap).toBeCloseTo(result.best.worstGap, 10);
  });
});

describe("renderHintSearch (docs/hint-search.md)", () => {
  const score = (worstGap: number, served: number): HintSearchScore => ({
    servedWithinS: curveOf([0.5, 0.7, 0.85, 0.95, served]),
    servedFraction: served,
    attemptsPerOffered: 1.2,
    worstGap,
    worstHorizonS: 30,
    gapSum: worstGap,
  });
  // The FIFO router's search: `fifoBest` its best table's worst gap (its start 5 points below the default's).
  const row = (name: string, start: number, best: number, served: number, fifoBest = best - 0.01): HintSearchRow => ({
    name,
    seeds: [1, 2, 3],
    heldSeeds: [1001, 1002, 1003],
    settings: { fromS: 60, toS: 70, bucketS: 5, sweeps: 2, values: [1, 30] },
    runs: 9,
    envelope: curveOf([0.5, 0.7, 0.9, 0.95, 1]),
    start: score(start, 0.99),
    best: score(best, served),
    table: { fromS: 60, bucketS: 5, first: [30, null], later: [null, 1] },
    static30Attempts: 1.25,
    held: {
      envelope: curveOf([0.5, 0.7, 0.9, 0.95, 1]),
      start: score(start, 0.99),
      table: score(best - 0.01, served),
      static30Attempts: 1.25,
    },
    fifo: {
      policy: "static-30",
      runs: 9,
      start: score(start - 0.05, 0.99),
      best: score(fifoBest, 0.99),
      table: { fromS: 60, bucketS: 5, first: [null, 5], later: [60, null] },
      held: { start: score(start - 0.05, 0.99), table: score(fifoBest, 0.99) },
    },
  });

  it("says where the best table meets the target, what it moved, and where it serves less", () => {
    const text = renderHintSearch({
      generatedBy: "npm run eval:hint-search",
      from: "docs/evaluation.json",
      scenarios: [row("a", -0.05, -0.015, 0.99), row("b", -0.08, -0.06, 0.95, -0.01)],
    }).replace(/\s+/g, " ");
    expect(text).toContain("| a | 60-70 s (9) |");
    expect(text).toContain("| a | default | 30 - | - 1 |");
    expect(text).toContain("| a | static-30 | - 5 | 60 - |");
    expect(text).toContain("| b | 9 | -13.0 (30 s) | -1.0 (30 s) | 99.0% / 99.0% |");
    expect(text).toContain(
      "With `static-30`'s FIFO router instead, the best table found meets the target in 1 of 2 scenarios (b) (held out: 1 (b)), and comes nearer it than the default's router with its own best table in 1 (b)",
    );
    expect(text).toContain(
      "meets the curve target in 1 of 2 scenarios on the seeds it was searched on (a) and in 0 of 2 on held-out seeds",
    );
    expect(text).toContain("It moves the worst gap by +2.0 to +3.5 points on the tuning seeds and by +1.0 to +2.5");
    expect(text).toContain("in b (99.0% to 95.0%)");
    expect(text).toContain("So in a timing alone, with foresight of the arrivals, reaches the target");
  });

  it("says plainly when no table found reaches the target", () => {
    const text = renderHintSearch({
      generatedBy: "npm run eval:hint-search",
      from: "docs/evaluation.json",
      scenarios: [row("b", -0.08, -0.06, 0.99)],
    }).replace(/\s+/g, " ");
    expect(text).toContain("meets the curve target in 0 of 1 scenarios");
    expect(text).toContain("does not bring the default to the curve target");
    expect(text).not.toContain("serves less");
    expect(text).toContain(
      "in none does it come as near as the default's router with its own best table: the default's admission does more",
    );
  });
});
