import { describe, expect, it } from "vitest";
import { measureCapacity } from "../../../src/sim/capacity";
import { EVAL_POLICIES } from "../../../src/sim/policies";
import { meanFleetSlots, runSimulation } from "../../../src/sim/simulation";
import { timelineOf } from "../../../src/sim/timeline";
import type { AttemptRecord, RequestTrace } from "../../../src/sim/trace";
import { generateWorkload } from "../../../src/sim/workload";
import { admittedAt, refusedAt, runTraceOf } from "./run-trace";
import { defaultPolicySpec, defaultRunOfSmallBurst, smallBurst } from "./small-scenario";

const request = (arrivalS: number, attempts: AttemptRecord[], completedS?: number): RequestTrace => ({
  id: arrivalS,
  arrivalMs: arrivalS * 1000,
  client: "openai_node",
  roundTripMs: 80,
  attempts,
  result: completedS === undefined ? "gave_up" : "served",
  ...(completedS === undefined ? {} : { completedAtMs: completedS * 1000 }),
  outputTokens: 1,
});
const trace = (requests: RequestTrace[]) => runTraceOf(requests, { fleetSlots: 2, spanS: 200, trafficS: 200 });

describe("timelineOf", () => {
  it("counts refusals and their hints, admissions and late completions in the bin where each happened", () => {
    const rows = timelineOf(
      trace([
        request(1, [admittedAt(1, { hinted: true })], 6), // served at once
        request(2, [refusedAt(2, 40), admittedAt(42, { hinted: true })], 47), // back at its hint, served 45 s after its first attempt
        request(3, [refusedAt(3, 10), refusedAt(13, 60), refusedAt(73)]), // a best effort, then no hint: gave up
        request(5, [refusedAt(5, 20), admittedAt(140, { hinted: true })], 150), // served 145 s after its first attempt
      ]),
      50,
    );
    expect(rows.map((r) => r.fromS)).toEqual([0, 50, 100, 150]);
    expect(rows[0]).toMatchObject({ firstAttempts: 4, refusals: 4, hintsOver30s: 2, admittedFirst: 1 });
    expect(rows[0]?.admittedRetries).toBe(1); // the retry at 42 s
    expect(rows[0]?.meanHintS).toBeCloseTo((40 + 10 + 60 + 20) / 4, 9);
    expect(rows[0]).toMatchObject({ served: 2, servedAfter30s: 1, servedAfter120s: 0 });
    expect(rows[1]).toMatchObject({ refusals: 1, meanHintS: undefined }); // the refusal at 73 s carried no hint
    expect(rows[2]).toMatchObject({ admittedRetries: 1, served: 0 });
    // Completed at 150 s, 145 s after its first attempt.
    expect(rows[3]).toMatchObject({ served: 1, servedAfter30s: 1, servedAfter120s: 1 });
    // Busy: 5 + 5 slot-seconds in the first bin, 10 in the bins of the last request (140-150 s) of 2 x 50.
    expect(rows[0]?.busyShare).toBeCloseTo(10 / 100, 9);
    expect(rows[2]?.busyShare).toBeCloseTo(10 / 100, 9);
    expect(() => timelineOf(trace([]), 0)).toThrow(/positive/);
  });

  it("divides each bin's busy slot-seconds by the slots the fleet had in it when replicas are lost part way", () => {
    // 4 slots until a loss at 15 s, 2 after it: 2.75 slots on average over the 40 s.
    const lossTrace = (requests: RequestTrace[]) =>
      runTraceOf(requests, {
        fleetSlots: meanFleetSlots(4, 2, 15, 40),
        slotLoss: { atS: 15, slotsBefore: 4, slotsAfter: 2 },
        spanS: 40,
        trafficS: 40,
      });
    const busy = (fromS: number, toS: number, n: number) =>
      Array.from({ length: n }, () => request(fromS, [admittedAt(fromS)], toS));
    const rows = timelineOf(
      lossTrace([
        ...busy(0, 10, 4), // every slot before the loss: 40 of 4 x 10 slot-seconds
        ...busy(10, 15, 4), // the bin of the loss: 4 x 5 + 2 x 5 = 30 slot-seconds, all of them busy
        ...busy(15, 20, 2),
        ...busy(20, 30, 2), // both slots left after the loss: 20 of 2 x 10
        request(30, [admittedAt(30)], 35), // one of the two slots for half the last bin
      ]),
      10,
    );
    expect(rows.map((r) => r.fromS)).toEqual([0, 10, 20, 30]);
    // Over the run's mean of 2.75 slots these read 1.45, 1.09, 0.73 and 0.18.
    expect(rows[0]?.busyShare).toBeCloseTo(1, 9);
    expect(rows[1]?.busyShare).toBeCloseTo(1, 9);
    expect(rows[2]?.busyShare).toBeCloseTo(1, 9);
    expect(rows[3]?.busyShare).toBeCloseTo(5 / 20, 9);
    // A fleet that lost every replica has no slots to be busy in: its bins read 0, not a division by zero.
    const gone = runTraceOf([request(12, [admittedAt(12)], 14)], {
      fleetSlots: meanFleetSlots(4, 0, 10, 20),
      slotLoss: { atS: 10, slotsBefore: 4, slotsAfter: 0 },
      spanS: 20,
    });
    expect(timelineOf(gone, 10).map((r) => r.busyShare)).toEqual([0, 0]);
  });

  it("in a simulated run with a replica lost, bins before the loss count every slot, after it those left", () => {
    const base = smallBurst();
    // One of the two replicas (4 slots each) is lost at 13 s, during the burst (10-18 s).
    const scenario = smallBurst({ fleet: { ...base.fleet, loss: { atS: 13, replicas: 1 } } });
    const run = runSimulation(scenario, defaultPolicySpec(), generateWorkload(scenario, measureCapacity(base)));
    expect(run.slotLoss).toEqual({ atS: 13, slotsBefore: 8, slotsAfter: 4 });
    expect(run.fleetSlots).toBeCloseTo(meanFleetSlots(8, 4, 13, run.spanS), 9);
    // The same trace read as a fleet that kept 8 slots, or had 4 throughout, gives each bin's busy slot-seconds.
    const { slotLoss: _, ...withoutLoss } = run;
    const rows = timelineOf(run, 2);
    const all = timelineOf({ ...withoutLoss, fleetSlots: 8 }, 2);
    const left = timelineOf({ ...withoutLoss, fleetSlots: 4 }, 2);
    rows.forEach((row, i) => {
      const busySlotS = (all[i]?.busyShare ?? Number.NaN) * 8 * 2;
      expect(busySlotS).toBeCloseTo((left[i]?.busyShare ?? Number.NaN) * 4 * 2, 6);
      // 12-14 s holds the loss: 8 slots for 1 s, 4 for 1 s.
      const slotS = row.fromS + 2 <= 13 ? 8 * 2 : row.fromS >= 13 ? 4 * 2 : 8 + 4;
      expect(row.busyShare).toBeCloseTo(busySlotS / slotS, 9);
    });
    // The burst and its retries keep the fleet full on both sides of the loss: its busiest bins before it (the
    // burst's first seconds) and after it (past the bins where the lost replica finishes what it held) read alike.
    const peak = (rs: typeof rows) => Math.max(...rs.map((r) => r.busyShare));
    const before = peak(rows.filter((r) => r.fromS + 2 <= 13));
    const after = peak(rows.filter((r) => r.fromS >= 20 && r.fromS < 38));
    expect(after / before).toBeGreaterThan(0.9);
    expect(after / before).toBeLessThan(1.1);
  });

  it("gives the median slot wait and time on a replica of the first attempts admitted in each bin, and served", () => {
    const placedAt = (atS: number, placedS: number) => admittedAt(atS, { waitS: placedS - atS, hinted: true });
    const rows = timelineOf(
      trace([
        request(1, [placedAt(1, 1)], 5), // no wait, 4 s on a replica
        request(2, [placedAt(2, 3)], 8), // 1 s, 5 s
        request(3, [placedAt(3, 6)], 9), // 3 s, 3 s
        request(4, [refusedAt(4, 10), admittedAt(14, { hinted: true })], 18), // a retry: not a first attempt's figure
        request(5, [placedAt(5, 6)]), // placed but never served: left out
        request(12, [placedAt(12, 12.5)], 16), // the next bin: 0.5 s, 3.5 s
      ]),
      10,
    );
    expect(rows[0]?.firstSlotWaitP50S).toBe(1);
    expect(rows[0]?.firstOnReplicaP50S).toBe(4);
    expect(rows[1]).toMatchObject({ firstSlotWaitP50S: 0.5, firstOnReplicaP50S: 3.5 });
    expect(rows[2]).toMatchObject({ firstSlotWaitP50S: undefined, firstOnReplicaP50S: undefined });
  });

  it("in a simulated run, the bins add up to the run: every first attempt, refusal and completion once", () => {
    const run = defaultRunOfSmallBurst(10);
    const rows = timelineOf(run, 7);
    const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
    expect(sum((r) => r.firstAttempts)).toBe(run.requests.length);
    const attempts = run.requests.flatMap((r) => r.attempts);
    expect(sum((r) => r.refusals)).toBe(attempts.filter((a) => a.outcome === "rejected").length);
    expect(sum((r) => r.admittedFirst + r.admittedRetries)).toBe(
      attempts.filter((a) => a.outcome === "admitted").length,
    );
    expect(sum((r) => r.served)).toBe(run.requests.filter((r) => r.completedAtMs !== undefined).length);
    expect(Math.max(...rows.map((r) => r.busyShare))).toBeLessThanOrEqual(1.05);
  });

  it("puts each second of the ledgers' samples in its bin: promises made and ended, and the mean trust", () => {
    const sample = (atS: number, made: number, kept: number, broken: number, noShow: number, trust: number) => ({
      atMs: atS * 1000,
      made,
      kept,
      broken,
      noShow,
      trust,
    });
    const rows = timelineOf(
      runTraceOf([request(1, [refusedAt(1, 40), admittedAt(41, { hinted: true })], 45)], {
        spanS: 20,
        ledger: [sample(1, 3, 0, 0, 0, 1), sample(10, 1, 2, 1, 0, 0.5), sample(11, 0, 0, 1, 1, 0.3)],
      }),
      10,
    );
    // The sample at 10 s closes the second from 9 to 10 s: the first bin's.
    expect(rows[0]).toMatchObject({ promises: { made: 4, kept: 2, broken: 1, noShow: 0 }, meanTrust: 0.75 });
    expect(rows[1]).toMatchObject({ promises: { made: 0, kept: 0, broken: 1, noShow: 1 }, meanTrust: 0.3 });
    // Without a ledger (another policy) there is nothing to show.
    expect(timelineOf(trace([]), 10)[0]).toMatchObject({ promises: undefined, meanTrust: undefined });
  });

  it("in a simulated run, booked_capacity's ledger is sampled every second, and no other policy's", () => {
    const scenario = smallBurst();
    // At the fleet's measured capacity the burst is a 3x overload (at 10 requests a second nothing is refused).
    const workload = generateWorkload(scenario, measureCapacity(scenario));
    const booked = EVAL_POLICIES.find((p) => p.id === "booked_capacity");
    const other = EVAL_POLICIES.find((p) => p.id === "router_queue_drain_rate");
    if (!booked || !other) throw new Error("no such policy");
    const run = runSimulation(scenario, booked, workload);
    expect(run.ledger?.length).toBe(run.spanS);
    const rows = timelineOf(run, 5);
    const refusals = run.requests.flatMap((r) => r.attempts).filter((a) => a.outcome === "rejected").length;
    expect(rows.reduce((n, r) => n + r.refusals, 0)).toBe(refusals);
    const made = rows.reduce((n, r) => n + (r.promises?.made ?? 0), 0);
    const ended = rows.reduce(
      (n, r) => n + (r.promises ? r.promises.kept + r.promises.broken + r.promises.noShow : 0),
      0,
    );
    // The burst's refusals are promised capacity, and their promises end within the run.
    expect(made).toBeGreaterThan(0);
    expect(ended).toBeGreaterThan(0);
    expect(ended).toBeLessThanOrEqual(made);
    for (const r of rows) {
      expect(r.meanTrust).toBeGreaterThanOrEqual(0.2);
      expect(r.meanTrust).toBeLessThanOrEqual(1);
    }
    expect(runSimulation(scenario, other, workload).ledger).toBeUndefined();
  });
});
