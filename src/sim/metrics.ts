import type { PromiseOutcomes } from "../core/capacity-booking";
import type { RunTrace } from "./trace";

/** Horizons of the completion curve, seconds from a request's first attempt. */
export const COMPLETION_HORIZONS_S = [5, 15, 30, 60, 120] as const;

/** Share of offered requests served within each horizon (keys: seconds). */
export type CompletionCurve = Record<string, number>;

/** The figures of one scenario under one policy. Rates are fractions in [0, 1]; times are seconds. */
export interface RunMetrics {
  requests: number;
  served: number;
  gaveUp: number;
  unfinished: number;
  /** Retries (attempts after the first). */
  retries: number;
  /** Retries made at the server's suggested time. */
  hintedRetries: number;
  /**
   * X: of the retries made at the suggested time, the share admitted on that attempt (placed on a replica).
   * `null` when no retry followed a hint (the no-header policy).
   */
  admittedRetryRate: number | null;
  /** The same over every retry, hinted or SDK backoff (the only retry rate the no-header policy has). */
  anyRetryAdmittedRate: number | null;
  /** Mean attempts of the requests that were served. */
  attemptsPerSuccess: number | null;
  /** All attempts (failed requests' included) per offered request. */
  attemptsPerOffered: number;
  /** Refusals (every refused attempt), and the share of them that carried a hint. */
  refusals: number;
  hintCoverage: number | null;
  /** The completion curve: share of offered requests served within 5, 15, 30, 60 and 120 s of their first attempt. */
  servedWithinS: CompletionCurve;
  /** Served share per client style (offered, served). */
  byClient: Record<string, { requests: number; served: number; servedFraction: number }>;
  /**
   * The mean wait, seconds: from the first attempt to the end of the response, capped at {@link MEAN_WAIT_CAP_S},
   * over every offered request, one never served counting the cap - the area above the completion curve up to its
   * last horizon. What clients feel between the curve's horizons, which the curve does not count: a policy that
   * serves a request later within the same horizon scores the same curve and a longer mean wait.
   */
  meanWaitS: number;
  /** From the first attempt to the end of the response, served requests only. */
  timeToSuccessP50S: number | null;
  timeToSuccessP99S: number | null;
  /**
   * From the placement of a served request's admitted attempt to the end of its response, p50: the time on a
   * replica (its queue wait at the engine and its decode, which is slower in a fuller batch).
   */
  onReplicaP50S: number | null;
  /** Served requests per second over the simulated span, and as a share of the offered requests. */
  goodputRps: number;
  servedFraction: number;
  /** Slot-seconds idle while a refused client slept, as a share of the fleet's slot-seconds in the span. */
  idleWhileWaitingFraction: number;
  idleWhileWaitingSlotS: number;
  /** Rejections with a hint whose queue drain was observed. */
  drainSamples: number;
  /** Relative error of the suggested delay vs the observed drain time, (suggested - observed) / observed. */
  drainRelErrorMedian: number | null;
  drainAbsRelErrorMedian: number | null;
  drainAbsRelErrorP90: number | null;
  /** `booked_capacity` only: what its ledgers promised and how it ended (absent for the other policies). */
  ledger?: LedgerMetrics;
}

/**
 * A run's promises (`booked_capacity`'s ledgers, every router shard): how many were made, how they ended (kept:
 * the retry was placed; broken: it came back on time and was refused, or shed; no-show: it did not come back in
 * time), and the trust they were made at (the mean of each second's trust, weighted by the promises made in it):
 * the ledger promises that share of the capacity it forecasts, so a low figure is a ledger that learnt its
 * forecast was wrong.
 */
export interface LedgerMetrics extends PromiseOutcomes {
  /** `null` when no promise was made. */
  trustAtPromise: number | null;
}

/**
 * The cap of the mean wait, seconds: the completion curve's last horizon (a request not served by then is lost to
 * its client, whether or not it is served later).
 *
 * @example
 * ```ts
 * MEAN_WAIT_CAP_S; // 120
 * ```
 */
export const MEAN_WAIT_CAP_S: number = COMPLETION_HORIZONS_S[COMPLETION_HORIZONS_S.length - 1] as number;

/**
 * Nearest-rank percentile (p in [0, 100]) of unsorted values; `null` for none.
 *
 * @example
 * ```ts
 * percentile([3, 1, 2], 50); // 2
 * ```
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

/**
 * The evaluation's metrics from a run's trace (definitions in docs/evaluation.md, "Metrics").
 *
 * @example
 * ```ts
 * const m = computeMetrics(runSimulation(scenario, policy, workload));
 * m.admittedRetryRate; // e.g. 0.93
 * ```
 */
export function computeMetrics(trace: RunTrace): RunMetrics {
  let served = 0;
  let gaveUp = 0;
  let unfinished = 0;
  let retries = 0;
  let retriesAdmitted = 0;
  let hinted = 0;
  let hintedAdmitted = 0;
  let servedAttempts = 0;
  let attempts = 0;
  let refusals = 0;
  let hintedRefusals = 0;
  const times: number[] = [];
  const onReplica: number[] = [];
  const byClient: RunMetrics["byClient"] = {};
  for (const r of trace.requests) {
    attempts += r.attempts.length;
    for (const a of r.attempts) {
      if (a.outcome !== "rejected") continue;
      refusals += 1;
      if (a.hintMs !== undefined) hintedRefusals += 1;
    }
    const group = byClient[r.client] ?? { requests: 0, served: 0, servedFraction: 0 };
    group.requests += 1;
    if (r.result === "served") group.served += 1;
    group.servedFraction = group.served / group.requests;
    byClient[r.client] = group;
    r.attempts.forEach((a, i) => {
      if (i === 0) return;
      retries += 1;
      if (a.outcome === "admitted") retriesAdmitted += 1;
      if (a.hinted) {
        hinted += 1;
        if (a.outcome === "admitted") hintedAdmitted += 1;
      }
    });
    if (r.result === "served") {
      served += 1;
      servedAttempts += r.attempts.length;
      times.push(((r.completedAtMs as number) - r.arrivalMs) / 1000);
      const placed = r.attempts.at(-1);
      if (placed?.outcome === "admitted") onReplica.push(((r.completedAtMs as number) - placed.answeredAtMs) / 1000);
    } else if (r.result === "gave_up") gaveUp += 1;
    else unfinished += 1;
  }
  const relErrors: number[] = [];
  for (const s of trace.drainSamples) if (s.observedS > 0) relErrors.push((s.suggestedS - s.observedS) / s.observedS);
  const total = trace.requests.length;
  return {
    requests: total,
    served,
    gaveUp,
    unfinished,
    retries,
    hintedRetries: hinted,
    admittedRetryRate: ratio(hintedAdmitted, hinted),
    anyRetryAdmittedRate: ratio(retriesAdmitted, retries),
    attemptsPerSuccess: ratio(servedAttempts, served),
    attemptsPerOffered: total > 0 ? attempts / total : 0,
    refusals,
    hintCoverage: ratio(hintedRefusals, refusals),
    servedWithinS: Object.fromEntries(
      COMPLETION_HORIZONS_S.map((h) => [String(h), total > 0 ? times.filter((t) => t <= h).length / total : 0]),
    ),
    byClient,
    meanWaitS:
      total > 0
        ? (times.reduce((sum, t) => sum + Math.min(t, MEAN_WAIT_CAP_S), 0) + (total - served) * MEAN_WAIT_CAP_S) / total
        : 0,
    timeToSuccessP50S: percentile(times, 50),
    timeToSuccessP99S: percentile(times, 99),
    onReplicaP50S: percentile(onReplica, 50),
    goodputRps: trace.spanS > 0 ? served / trace.spanS : 0,
    servedFraction: total > 0 ? served / total : 0,
    idleWhileWaitingFraction:
      trace.fleetSlots > 0 && trace.spanS > 0 ? trace.idleWhileWaitingSlotS / (trace.fleetSlots * trace.spanS) : 0,
    idleWhileWaitingSlotS: trace.idleWhileWaitingSlotS,
    drainSamples: relErrors.length,
    drainRelErrorMedian: percentile(relErrors, 50),
    drainAbsRelErrorMedian: percentile(
      relErrors.map((e) => Math.abs(e)),
      50,
    ),
    drainAbsRelErrorP90: percentile(
      relErrors.map((e) => Math.abs(e)),
      90,
    ),
    ...(trace.ledger ? { ledger: ledgerMetrics(trace.ledger) } : {}),
  };
}

function ledgerMetrics(samples: NonNullable<RunTrace["ledger"]>): LedgerMetrics {
  const sum = (f: (s: (typeof samples)[number]) => number) => samples.reduce((n, s) => n + f(s), 0);
  const made = sum((s) => s.made);
  return {
    made,
    kept: sum((s) => s.kept),
    broken: sum((s) => s.broken),
    noShow: sum((s) => s.noShow),
    trustAtPromise: made > 0 ? sum((s) => s.made * s.trust) / made : null,
  };
}
