import { percentile } from "./metrics";
import type { RunTrace } from "./trace";

/** One bin of a run's timeline: what arrived, what the router answered and what the fleet did in it. */
export interface TimelineRow {
  /** Start of the bin, seconds of simulated time. */
  fromS: number;
  /** Requests whose first attempt was sent in the bin. */
  firstAttempts: number;
  /**
   * Slot-seconds spent serving over the slot-seconds the fleet had in the bin (all its slots before a loss of
   * replicas, those left after it, time-weighted in the bin the loss falls in; 0 in a bin with no slots), a request
   * counted from its admission to the moment its client had the whole response: that includes the way back, so a
   * saturated fleet reads a little above 1, and the bin just after a loss higher still (the lost replicas finish the
   * requests they held).
   */
  busyShare: number;
  /** Attempts refused in the bin, and those of them told to come back more than 30 s later. */
  refusals: number;
  hintsOver30s: number;
  /** Mean hint of the bin's refusals that carried one, seconds (`undefined`: none did). */
  meanHintS: number | undefined;
  /** Attempts admitted in the bin: first attempts, and retries. */
  admittedFirst: number;
  admittedRetries: number;
  /** Responses completed in the bin, and those of them more than 30 s and 120 s after their first attempt. */
  served: number;
  servedAfter30s: number;
  servedAfter120s: number;
  /**
   * First attempts admitted in the bin and served: the median wait at the router for a slot (from reaching it to
   * being placed), and the median time from placement to the client holding the whole response (the replica's
   * service, batch included, plus the way back). `undefined`: none. A request's share served within a short horizon
   * is these two and its round trip: after an overload, how much of it is a full fleet's wait and slower batches.
   */
  firstSlotWaitP50S: number | undefined;
  firstOnReplicaP50S: number | undefined;
  /**
   * `booked_capacity` only (undefined for the other policies): the promises its ledgers made in the bin and those
   * that ended in it (kept, broken, no-show), and their trust in the forecast, averaged over the bin's seconds. A
   * ledger whose promises break lowers its trust and promises less: this shows when, and what followed.
   */
  promises: { made: number; kept: number; broken: number; noShow: number } | undefined;
  meanTrust: number | undefined;
}

/**
 * A run cut into bins of simulated time: when refusals happened and how far away their hints sent clients, what
 * the fleet served, how late, and how busy it was. The completion curve says how many were served late; this says
 * when capacity went unused while clients slept, or was spent on requests already past a horizon.
 *
 * @example
 * ```ts
 * const rows = timelineOf(runSimulation(scenario, policy, workload), 10);
 * rows[6]; // burst-3x, seed 1: { fromS: 60, firstAttempts: 229, busyShare: 0.96, refusals: 37, meanHintS: 31.3, firstSlotWaitP50S: 6.41, ... }
 * ```
 */
export function timelineOf(trace: RunTrace, binS: number): TimelineRow[] {
  if (!(binS > 0)) throw new Error(`bin must be positive seconds, got ${binS}`);
  const binMs = binS * 1000;
  const rows: TimelineRow[] = Array.from({ length: Math.max(1, Math.ceil(trace.spanS / binS)) }, (_, i) => ({
    fromS: i * binS,
    firstAttempts: 0,
    busyShare: 0,
    refusals: 0,
    hintsOver30s: 0,
    meanHintS: undefined,
    admittedFirst: 0,
    admittedRetries: 0,
    served: 0,
    servedAfter30s: 0,
    servedAfter120s: 0,
    firstSlotWaitP50S: undefined,
    firstOnReplicaP50S: undefined,
    promises: trace.ledger ? { made: 0, kept: 0, broken: 0, noShow: 0 } : undefined,
    meanTrust: undefined,
  }));
  const rowAt = (ms: number) => rows[Math.min(rows.length - 1, Math.floor(ms / binMs))] as TimelineRow;
  const busyMs = new Map<TimelineRow, number>();
  const hintSums = new Map<TimelineRow, { sum: number; n: number }>();
  const firstServed = new Map<TimelineRow, { waits: number[]; onReplica: number[] }>();
  for (const request of trace.requests) {
    rowAt(request.arrivalMs).firstAttempts += 1;
    request.attempts.forEach((attempt, i) => {
      const row = rowAt(attempt.atMs);
      if (attempt.outcome === "admitted") {
        if (i === 0) row.admittedFirst += 1;
        else row.admittedRetries += 1;
        return;
      }
      row.refusals += 1;
      if (attempt.hintMs === undefined) return;
      if (attempt.hintMs > 30_000) row.hintsOver30s += 1;
      const sums = hintSums.get(row) ?? { sum: 0, n: 0 };
      hintSums.set(row, { sum: sums.sum + attempt.hintMs, n: sums.n + 1 });
    });
    const done = request.completedAtMs;
    const admitted = request.attempts.find((a) => a.outcome === "admitted");
    if (done === undefined || !admitted) continue;
    const first = request.attempts[0];
    if (first === admitted) {
      const bin = rowAt(first.atMs);
      const samples = firstServed.get(bin) ?? { waits: [], onReplica: [] };
      samples.waits.push((first.answeredAtMs - first.atMs) / 1000);
      samples.onReplica.push((done - first.answeredAtMs) / 1000);
      firstServed.set(bin, samples);
    }
    const row = rowAt(done);
    row.served += 1;
    if (done - request.arrivalMs > 30_000) row.servedAfter30s += 1;
    if (done - request.arrivalMs > 120_000) row.servedAfter120s += 1;
    // Busy from the admission to the response's end, split over the bins it spans.
    for (let t = admitted.answeredAtMs; t < done; ) {
      const end = Math.min(done, (Math.floor(t / binMs) + 1) * binMs);
      const row = rowAt(t);
      busyMs.set(row, (busyMs.get(row) ?? 0) + (end - t));
      t = end;
    }
  }
  for (const [row, ms] of busyMs) {
    const slotMs = slotMsBetween(trace, row.fromS * 1000, row.fromS * 1000 + binMs);
    row.busyShare = slotMs > 0 ? ms / slotMs : 0;
  }
  // A sample closes its second: it belongs to the bin that second began in.
  const trustSums = new Map<TimelineRow, { sum: number; n: number }>();
  for (const sample of trace.ledger ?? []) {
    const row = rowAt(sample.atMs - 1);
    const promises = row.promises as NonNullable<TimelineRow["promises"]>;
    promises.made += sample.made;
    promises.kept += sample.kept;
    promises.broken += sample.broken;
    promises.noShow += sample.noShow;
    const sums = trustSums.get(row) ?? { sum: 0, n: 0 };
    trustSums.set(row, { sum: sums.sum + sample.trust, n: sums.n + 1 });
  }
  for (const [row, { sum, n }] of trustSums) row.meanTrust = sum / n;
  for (const [row, { sum, n }] of hintSums) row.meanHintS = sum / n / 1000;
  for (const [row, { waits, onReplica }] of firstServed) {
    row.firstSlotWaitP50S = percentile(waits, 50) ?? undefined;
    row.firstOnReplicaP50S = percentile(onReplica, 50) ?? undefined;
  }
  return rows;
}

/**
 * The fleet's slot-milliseconds from `fromMs` to `toMs`: `fleetSlots` throughout, or with replicas lost part way
 * (`slotLoss`) all the slots until the loss and those left after it, as `meanFleetSlots` weighs them over the run.
 */
function slotMsBetween(trace: RunTrace, fromMs: number, toMs: number): number {
  const loss = trace.slotLoss;
  if (!loss) return trace.fleetSlots * (toMs - fromMs);
  const lossMs = Math.min(Math.max(fromMs, loss.atS * 1000), toMs);
  return loss.slotsBefore * (lossMs - fromMs) + loss.slotsAfter * (toMs - lossMs);
}
