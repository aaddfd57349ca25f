import type { Highs } from "highs";
import { decodeStepSeconds, defaultTimingModel, prefillSeconds } from "../engine/timing-model";
import type { ScenarioResult } from "./evaluation";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import { oracleModel } from "./oracle";
import type { Scenario } from "./scenario";
import { bestOtherCurve } from "./targets";
import { generateWorkload, type WorkloadRequest } from "./workload";

/** One request as the bound sees it: when it may start, and how soon after starting it can be done. */
export interface BoundJob {
  /** The client's first attempt, seconds (completion horizons count from it). */
  arrivalS: number;
  /** The earliest start: the first attempt reaching the router. */
  releaseS: number;
  /** The latest start: the client's last chance (the oracle's window). */
  deadlineS: number;
  /** The least time from start to the client holding the answer (fastest replica, batch of one, plus the way back). */
  minCompletionS: number;
}

/** One seed's requests and the fleet that serves them. */
export interface BoundInstance {
  jobs: readonly BoundJob[];
  /** Starts per second the fleet sustains at time t (its measured capacity; less after replicas are lost). */
  startRateAt: (tS: number) => number;
  /** Starts the fleet can make at once from idle (its slots): the depth of the start budget. */
  burstStarts: number;
  /** The run's end: nothing completes after it. */
  endS: number;
}

/** What the bound found. */
export interface CurveBoundResult {
  /**
   * The largest m such that one schedule serves at least target(h) + m of the offered requests within every
   * horizon h at once (a share; negative: no schedule reaches the targets, by that much at the worst horizon).
   */
  margin: number;
  /** The completion curve of a schedule that reaches the margin (pooled over the instances). */
  curve: CompletionCurve;
  /** Size of the linear program solved (columns, rows), for the report. */
  size: { columns: number; rows: number };
}

interface Group {
  instance: number;
  count: number;
  first: number;
  last: number;
  /** Per horizon, the last bin a start in which completes within it (first - 1: none). */
  within: number[];
}

/**
 * An upper bound on what any admission and hint policy could do, at every completion horizon *at once*: the
 * largest margin m for which a single schedule serves at least `target(h) + m` of the offered requests within
 * every horizon h. It answers whether "within 2 points of the best other policy at every horizon" is reachable
 * at all, when each horizon's best is a different policy.
 *
 * A linear program (solved with HiGHS), relaxing the real system in the requests' favour, so that what it
 * cannot reach, nothing can: each request may start at any moment of its oracle window (it need not be
 * there: no retry timing, no attempt count), it completes in its least possible time, the fleet starts
 * requests at its measured rate with a budget of `burstStarts` it may spend at once (a token bucket: more
 * than a free fleet can start), in one-second bins where a request counts as starting at its bin's start
 * (or at its release, in its first bin), and starts may be split (fractional).
 *
 * @example
 * ```ts
 * const highs = await loadHighs();
 * const best = curveBound(highs, instances, { "5": 0.8, "15": 0.85, "30": 0.9, "60": 0.95, "120": 0.99 });
 * best.margin; // e.g. -0.06: no schedule is within 6 points of those targets at every horizon
 * ```
 */
export function curveBound(
  highs: Highs,
  instances: readonly BoundInstance[],
  target: CompletionCurve,
  binS = 1,
): CurveBoundResult {
  const horizons = COMPLETION_HORIZONS_S;
  const groups = new Map<string, Group>();
  const bins = instances.map((inst) => Math.max(1, Math.ceil(inst.endS / binS)));
  let offered = 0;
  instances.forEach((inst, k) => {
    offered += inst.jobs.length;
    const endBin = (bins[k] as number) - 1;
    for (const job of inst.jobs) {
      const first = Math.floor(job.releaseS / binS);
      const within = horizons.map((h) => {
        const latestStart = job.arrivalS + h - job.minCompletionS;
        return job.releaseS <= latestStart ? Math.floor(latestStart / binS) : first - 1;
      });
      const last = Math.min(Math.floor(job.deadlineS / binS), within[within.length - 1] as number, endBin);
      if (last < first) continue;
      const clipped = within.map((b) => Math.min(last, Math.max(first - 1, b)));
      const key = `${k}:${first}:${last}:${clipped.join(",")}`;
      const group = groups.get(key);
      if (group) group.count += 1;
      else groups.set(key, { instance: k, count: 1, first, last, within: clipped });
    }
  });

  // Rows: one per group (its requests start at most once), one per instance and bin (the start budget),
  // one per horizon (served within it >= target + margin).
  const groupList = [...groups.values()];
  const bucketRow0: number[] = [];
  let rows = groupList.length;
  for (const b of bins) {
    bucketRow0.push(rows);
    rows += b;
  }
  const horizonRow0 = rows;
  rows += horizons.length;

  const starts: number[] = [0];
  const indices: number[] = [];
  const values: number[] = [];
  const colLower: number[] = [];
  const colUpper: number[] = [];
  const colCost: number[] = [];
  const columnOf: { group: number; bin: number }[] = [];
  const push = (lower: number, upper: number, cost: number, entries: [number, number][]) => {
    for (const [row, value] of entries) {
      indices.push(row);
      values.push(value);
    }
    starts.push(indices.length);
    colLower.push(lower);
    colUpper.push(upper);
    colCost.push(cost);
  };
  groupList.forEach((g, gi) => {
    for (let t = g.first; t <= g.last; t++) {
      const entries: [number, number][] = [
        [gi, 1],
        [(bucketRow0[g.instance] as number) + t, 1],
      ];
      horizons.forEach((_, hi) => {
        if (t <= (g.within[hi] as number)) entries.push([horizonRow0 + hi, 1]);
      });
      push(0, g.count, 0, entries);
      columnOf.push({ group: gi, bin: t });
    }
  });
  // Start budget of instance k: level[t] tokens at the start of bin t; level[t+1] <= level[t] + rate - starts[t];
  // the first level is the full budget.
  instances.forEach((inst, k) => {
    const n = bins[k] as number;
    for (let t = 0; t <= n; t++) {
      const entries: [number, number][] = [];
      if (t < n) entries.push([(bucketRow0[k] as number) + t, -1]);
      if (t > 0) entries.push([(bucketRow0[k] as number) + t - 1, 1]);
      push(t === 0 ? inst.burstStarts : 0, inst.burstStarts, 0, entries);
    }
  });
  // The margin, in requests' share: maximised.
  const marginCol = colCost.length;
  push(
    -1,
    1,
    1,
    horizons.map((_, hi) => [horizonRow0 + hi, -offered] as [number, number]),
  );

  const rowLower: number[] = [];
  const rowUpper: number[] = [];
  for (const g of groupList) {
    rowLower.push(-highs.infinity);
    rowUpper.push(g.count);
  }
  instances.forEach((inst, k) => {
    for (let t = 0; t < (bins[k] as number); t++) {
      rowLower.push(-highs.infinity);
      rowUpper.push(inst.startRateAt(t * binS) * binS);
    }
  });
  for (const h of horizons) {
    rowLower.push(offered * (target[String(h)] ?? 0));
    rowUpper.push(highs.infinity);
  }

  const columns = colCost.length;
  const x = highs.withModel(
    {
      numCols: columns,
      numRows: rows,
      sense: highs.constants.objectiveSense.maximize,
      colCost,
      colLower,
      colUpper,
      rowLower,
      rowUpper,
      matrix: { format: "csc", numRows: rows, numCols: columns, starts, indices, values },
    },
    (model) => {
      // The interior-point method: about ten times faster than simplex on these models (measured: 3 s against 86 s).
      model.options.set({ output_flag: false, solver: "ipm" });
      model.run();
      const status = model.getModelStatus();
      if (status !== highs.constants.modelStatus.optimal)
        throw new Error(`curve bound: the solver stopped with status ${status}, not optimal`);
      return model.getSolution().colValue;
    },
  );
  const curve: CompletionCurve = {};
  horizons.forEach((h, hi) => {
    let within = 0;
    columnOf.forEach((c, j) => {
      const g = groupList[c.group] as Group;
      if (c.bin <= (g.within[hi] as number)) within += x[j] as number;
    });
    curve[String(h)] = offered > 0 ? within / offered : 0;
  });
  return { margin: x[marginCol] as number, curve, size: { columns, rows } };
}

/**
 * One seed's instance for {@link curveBound}: the oracle's windows and start rate (src/sim/oracle.ts) and, per
 * request, its least completion time: prefill and decode alone on the fastest replica (batch of one, the prompt
 * as its only context), plus the way back to the client.
 *
 * @example
 * ```ts
 * const instance = boundInstance(scenario, generateWorkload(scenario, capacity), capacity);
 * curveBound(highs, [instance], target).margin;
 * ```
 */
export function boundInstance(
  scenario: Scenario,
  workload: readonly WorkloadRequest[],
  capacityRps: number,
): BoundInstance {
  const model = oracleModel(scenario, workload, capacityRps);
  const fastest = { ...defaultTimingModel, speed: Math.max(...scenario.fleet.replicas.map((g) => g.speed)) };
  return {
    jobs: model.jobs.map((job, i) => {
      const request = workload[i] as WorkloadRequest;
      const serviceS =
        prefillSeconds(fastest, { extendTokens: request.promptTokens }) +
        request.outputTokens * decodeStepSeconds(fastest, { batchSize: 1, tokensInBatch: request.promptTokens });
      return {
        arrivalS: job.arrival,
        releaseS: job.release,
        deadlineS: job.deadline,
        minCompletionS: serviceS + job.tail,
      };
    }),
    startRateAt: model.rateAt,
    burstStarts: model.slots,
    endS: model.endS,
  };
}

/** A scenario's clairvoyant bound against the curve target, as `npm run eval` records it. */
export interface ScenarioCurveBound {
  /** The target: the best other policy at each horizon. */
  target: CompletionCurve;
  /** The best worst-horizon gap any schedule reaches against it (share; the default's is its worst curve gap). */
  margin: number;
  /** The curve of a schedule that reaches it. */
  curve: CompletionCurve;
  size: { columns: number; rows: number };
}

/**
 * The clairvoyant bound of an evaluated scenario against its curve target (the best other policy at each
 * horizon), on the same seeds' requests and clients and the same measured capacity.
 *
 * @example
 * ```ts
 * const bound = scenarioCurveBound(highs, scenario, evaluateScenario(scenario, EVAL_POLICIES, 3));
 * bound.margin; // e.g. 0.03: one schedule is 3 points above the best other policy at every horizon
 * ```
 */
export function scenarioCurveBound(highs: Highs, scenario: Scenario, result: ScenarioResult): ScenarioCurveBound {
  const instances = result.seeds.map((seed) => {
    const seeded = { ...scenario, seed };
    return boundInstance(seeded, generateWorkload(seeded, result.capacityRps), result.capacityRps);
  });
  const target = bestOtherCurve(result);
  const { margin, curve, size } = curveBound(highs, instances, target);
  return { target, margin, curve, size };
}
