import type { ReleaseRow } from "./curve-bound";
import { policyTraces, type ScenarioResult } from "./evaluation";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import type { PolicySpec } from "./policies";
import type { Scenario } from "./scenario";
import type { RunTrace } from "./trace";
import { generateWorkload } from "./workload";

/** The requests whose first attempt fell in one bin of time, and the share of them served within each horizon. */
export interface ArrivalBin {
  /** The bin's start, seconds into the run. */
  fromS: number;
  requests: number;
  servedWithinS: CompletionCurve;
}

/** Requests counted per bin, and per horizon (`COMPLETION_HORIZONS_S` order) those served within it. */
class BinTally {
  private readonly bins = new Map<number, { requests: number; within: number[] }>();

  constructor(private readonly binS: number) {
    if (!(binS > 0)) throw new Error(`the bin must be positive seconds, got ${binS}`);
  }

  add(atS: number, requests: number, within: readonly number[]): void {
    const fromS = Math.floor(atS / this.binS) * this.binS;
    const bin = this.bins.get(fromS) ?? { requests: 0, within: COMPLETION_HORIZONS_S.map(() => 0) };
    bin.requests += requests;
    within.forEach((n, i) => {
      bin.within[i] = (bin.within[i] ?? 0) + n;
    });
    this.bins.set(fromS, bin);
  }

  result(): ArrivalBin[] {
    return [...this.bins]
      .sort(([a], [b]) => a - b)
      .map(([fromS, bin]) => ({
        fromS,
        requests: bin.requests,
        servedWithinS: Object.fromEntries(
          COMPLETION_HORIZONS_S.map((h, i) => [String(h), (bin.within[i] ?? 0) / bin.requests]),
        ),
      }));
  }
}

/**
 * The completion curve by when requests first arrived: which requests a policy serves late, not only how many.
 * A policy can match another's overall curve while serving a burst's requests a minute later and the requests
 * after it sooner; this shows that trade. Pooled over the traces (seeds of one scenario: the same bins of time).
 * Bins without requests are left out.
 *
 * @example
 * ```ts
 * const bins = curveByArrival([runSimulation(scenario, policy, workload)], 5);
 * bins.find((b) => b.fromS === 65)?.servedWithinS["60"]; // the share of 65-70 s's requests served within 60 s
 * ```
 */
export function curveByArrival(traces: readonly RunTrace[], binS: number): ArrivalBin[] {
  const tally = new BinTally(binS);
  for (const trace of traces)
    for (const r of trace.requests) {
      const tookS =
        r.result === "served" && r.completedAtMs !== undefined ? (r.completedAtMs - r.arrivalMs) / 1000 : NaN;
      tally.add(
        r.arrivalMs / 1000,
        1,
        COMPLETION_HORIZONS_S.map((h) => (tookS <= h ? 1 : 0)),
      );
    }
  return tally.result();
}

/**
 * A bound's schedule (`curveBound(...).byRelease`, src/sim/curve-bound.ts) in the same bins as `curveByArrival`:
 * what the best conceivable schedule does with each bin's requests, beside what a policy does. A request reaches
 * the router half a round trip after its first attempt, so a bin boundary can fall between the two.
 *
 * @example
 * ```ts
 * const best = curveBound(highs, instances, target);
 * binReleases(best.byRelease, 5).find((b) => b.fromS === 65)?.servedWithinS["30"];
 * ```
 */
export function binReleases(rows: readonly ReleaseRow[], binS: number): ArrivalBin[] {
  const tally = new BinTally(binS);
  for (const row of rows) tally.add(row.releaseS, row.requests, row.servedWithin);
  return tally.result();
}

/** One scenario's curves by first arrival: the default, the policies it is held to, and the bound's schedule. */
export interface ArrivalCurves {
  scenario: string;
  binS: number;
  /** The default first, then the others, each with its bins (`curveByArrival`, the scenario's seeds pooled). */
  policies: { id: string; label: string; bins: ArrivalBin[] }[];
  /** The clairvoyant bound's schedule (`curveBound` with `preferSooner`) in the same bins; absent without it. */
  bound?: ArrivalBin[];
  /** The scenario's burst (its `burstPhase`), seconds into the run; absent when it names none. */
  burst?: { fromS: number; toS: number };
  /** The scenario's phases, seconds into the run, with their load (a multiple of capacity); absent in older runs. */
  phases?: { fromS: number; toS: number; load: number }[];
}

/**
 * Runs `policies` again on an evaluated scenario's seeds (the same arrivals) and bins each one's requests by first
 * arrival: who each policy serves when.
 *
 * @example
 * ```ts
 * const curves = arrivalCurves(scenario, result, [defaultSpec, static30], 10);
 * curves.policies[1]?.bins.find((b) => b.fromS === 70)?.servedWithinS["60"];
 * ```
 */
export function arrivalCurves(
  scenario: Scenario,
  result: Pick<ScenarioResult, "seeds" | "capacityRps">,
  policies: readonly PolicySpec[],
  binS: number,
): ArrivalCurves {
  const workloads = result.seeds.map((seed) => generateWorkload({ ...scenario, seed }, result.capacityRps));
  const phase = scenario.burstPhase === undefined ? undefined : scenario.phases[scenario.burstPhase];
  const burstFromS = scenario.phases.slice(0, scenario.burstPhase).reduce((t, p) => t + p.durationS, 0);
  let fromS = 0;
  const phases = scenario.phases.map((p) => {
    fromS += p.durationS;
    return { fromS: fromS - p.durationS, toS: fromS, load: p.load };
  });
  return {
    scenario: scenario.name,
    binS,
    ...(phase ? { burst: { fromS: burstFromS, toS: burstFromS + phase.durationS } } : {}),
    phases,
    policies: policies.map((policy) => ({
      id: policy.id,
      label: policy.label,
      bins: curveByArrival(policyTraces(scenario, result.seeds, result.capacityRps, policy, workloads), binS),
    })),
  };
}
