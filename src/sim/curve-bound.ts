import type { Highs } from "highs";
import { decodeStepSeconds, defaultTimingModel, prefillSeconds } from "../engine/timing-model";
import type { ScenarioResult } from "./evaluation";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import { fleetSpeed, oracleModel } from "./oracle";
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
  /**
   * Ways to serve it, when they differ in speed and cost (src/sim/batch-bound.ts: in a smaller batch a request
   * finishes sooner and the fleet does less at once), from the fastest to the cheapest: each no faster and no
   * costlier than the one before (checked). Absent: one way, `minCompletionS` for one start.
   */
  ways?: readonly BoundWay[];
  /**
   * The latest start on its first attempt (its arrival at the router plus the queue's timeout): a start up to it
   * may come from the queue, without a retry. Read only when its set bounds the queue or the attempts.
   */
  queueEndS?: number;
  /**
   * Whether the client certainly makes another attempt when it is not served from the queue on its first one (it
   * has a retry left, and time for it before the run ends). Read only when its set bounds the attempts.
   */
  certainRetry?: boolean;
}

/** One way to serve a request: how soon after starting it can be done, and what it takes of the start budget. */
export interface BoundWay {
  minCompletionS: number;
  /** In the instance's budget units (`startRateAt`, `burstStarts`): 1 for a start. */
  work: number;
}

/** One seed's requests and the fleet that serves them. */
export interface BoundInstance {
  jobs: readonly BoundJob[];
  /**
   * Starts per second the fleet sustains at time t (its measured capacity; less after replicas are lost), or, when
   * the jobs have `ways`, the work per second in their units.
   */
  startRateAt: (tS: number) => number;
  /** Starts the fleet can make at once from idle (its slots), or the work: the depth of the start budget. */
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
  /** The same schedule by when requests reached the router (see `JointCurveBoundResult.byRelease`). */
  byRelease: ReleaseRow[];
  /** Size of the linear program solved (columns, rows), for the report. */
  size: { columns: number; rows: number };
}

interface Group {
  set: number;
  /** The instance's index in its set. */
  instance: number;
  /** The instance's index over all sets (its start-budget rows). */
  bucket: number;
  count: number;
  first: number;
  last: number;
  /** Per way to serve it, per horizon, the last bin a start in which completes within it (first - 1: none). */
  within: number[][];
  /** Per way, what a start costs of the start budget. */
  work: number[];
  /** The last bin a start from the queue on its first attempt may take (first - 1: none, or no queue model). */
  queueEnd: number;
  /** 1 when its client makes another attempt if not served from the queue (the attempts row), else 0. */
  retry: number;
  /** Its jobs' indices in their instance's `jobs`. */
  members: number[];
  /**
   * The last bin a start may take at all (its window and the run's end), `last` or later: only in a set with
   * `servedAtLeast`, whose starts after `last` serve the request after every horizon.
   */
  lateLast: number;
  /** Its columns: one per bin from `first` to `lateLast` and way that serves within some horizon (and per start kind). */
  columns: Array<{ t: number; way: number; col: number; fromQueue?: boolean }>;
}

/** How a bound picks among the schedules that reach its margin. */
export interface BoundOptions {
  /**
   * Of the schedules that reach the margin, one that serves the most requests within every horizon (a second
   * solve): the first solve's schedule is any of them, and may serve requests later than it needs to. The margin
   * and the curve's target rows are the same; only which schedule is shown changes. For `byRelease`.
   */
  preferSooner?: boolean;
  /**
   * Also hold every set to a median: at least `share` of the requests it serves within its longest horizon are
   * served within `horizonS` (one of the horizons). Issue 15's sustained-overload target, p50 time to success at
   * most 5 s, implies it with share 0.5 (a policy serves at least what it serves within 120 s, and half of what it
   * serves within 5 s): a margin below the curve target's with it says the two targets cannot both be met.
   */
  medianWithin?: { horizonS: number; share: number };
  /** Also return the schedule request by request (`JointCurveBoundResult.plans`), its fractional starts rounded. */
  plans?: boolean;
}

/** One scenario's part of a {@link jointCurveBound}: its seeds' instances and the curve it is held to. */
export interface BoundSet {
  instances: readonly BoundInstance[];
  target: CompletionCurve;
  /**
   * The queue's bound (all shards'): at no moment do more requests wait on their first attempt, to be started from
   * the queue, than this, in each instance. A start from the queue must come by the job's `queueEndS`.
   */
  queueBound?: number;
  /**
   * Attempts per offered request at most: every request not started from the queue on its first attempt (served
   * on a retry, or never) whose client makes a `certainRetry` counts one attempt more.
   */
  attemptsAtMost?: number;
  /**
   * Served at all, by the run's end and within its window, at least this share of the offered requests (issue 15's
   * served and oracle targets are on the final served share): starts after every horizon count here, and only here.
   */
  servedAtLeast?: number;
}

/** What a joint bound found: one margin for every set, and each set's curve. */
export interface JointCurveBoundResult {
  /** The largest m such that, in every set, one schedule reaches its target + m at every horizon at once. */
  margin: number;
  /** Per set, the completion curve of a schedule that reaches the margin. */
  curves: CompletionCurve[];
  /**
   * Per set, the same schedule by when requests reached the router, one row per bin with any (pooled over the
   * set's instances): who it serves when, beside a policy's `curveByArrival` (src/sim/arrival-bins.ts).
   */
  byRelease: ReleaseRow[][];
  size: { columns: number; rows: number };
  /**
   * Per set, the share of its offered requests the schedule serves at all: within the longest horizon, or later
   * where the set has `servedAtLeast`.
   */
  servedShares: number[];
  /**
   * With `BoundOptions.plans`: per set, per instance, per job (by its index in the instance's `jobs`), when the
   * schedule starts it and whether from the queue on its first attempt; `undefined` for a job it does not serve
   * within a horizon. A group of like jobs' fractional starts are handed out in order of start, each job taking
   * the start where the running sum of the group's starts passes it (rounded), so the counts stay within one.
   */
  plans?: Array<Array<Array<PlannedStart | undefined>>>;
}

/** When a bound's schedule starts one request (see `JointCurveBoundResult.plans`). */
export interface PlannedStart {
  /** The start: its bin's beginning, or the request's release within its first bin. */
  startS: number;
  /** Started from the queue on its first attempt (the queue model), not after a retry. */
  fromQueue: boolean;
}

/** The requests released in one bin of a bound's schedule, and how many of them it starts within each horizon. */
export interface ReleaseRow {
  releaseS: number;
  requests: number;
  /** Per horizon (`COMPLETION_HORIZONS_S` order), requests started in time to complete within it (fractional). */
  servedWithin: number[];
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
 * (or at its release, in its first bin), and starts may be split (fractional). A set with `queueBound` or
 * `attemptsAtMost` (src/sim/queue-bound.ts) takes two of those relaxations back: a start on a first attempt must
 * come from a bounded queue by its `queueEndS`, and every other request costs its client an attempt.
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
  options: BoundOptions = {},
): CurveBoundResult {
  const joint = jointCurveBound(highs, [{ instances, target }], 0, binS, options);
  return {
    margin: joint.margin,
    curve: joint.curves[0] as CompletionCurve,
    byRelease: joint.byRelease[0] as ReleaseRow[],
    size: joint.size,
  };
}

/**
 * {@link curveBound} over several scenarios at once, with one margin for all, and optionally *without
 * foresight* of what tells them apart: when the sets are twins that no one can tell apart before
 * `sharedBeforeS` (the same requests and clients until then, e.g. a burst that ends at 10 s and one that goes
 * on to 20 s), every start made before it is the same in all of them, as it is for any policy that decides
 * from what it has seen (an online policy). Each set's k-th instance is the twin of the others' k-th; the
 * requests released before `sharedBeforeS` must be the same in all of them (checked: it throws otherwise).
 * With `sharedBeforeS` 0 the sets are simply bounded together.
 *
 * If this margin is below what the target allows (-0.02 for "within 2 points"), no online policy meets the
 * target in every one of these scenarios, however it is tuned: its clairvoyant margin in each alone may be
 * positive, since the clairvoyant schedule decides before the twins part on knowing which one it is in.
 *
 * @example
 * ```ts
 * const joint = jointCurveBound(highs, [{ instances: long, target: longEnvelope },
 *   { instances: short, target: shortEnvelope }], 20);
 * joint.margin; // e.g. -0.04: no online policy is within 2 points of both envelopes at every horizon
 * ```
 */
export function jointCurveBound(
  highs: Highs,
  sets: readonly BoundSet[],
  sharedBeforeS = 0,
  binS = 1,
  options: BoundOptions = {},
): JointCurveBoundResult {
  const horizons = COMPLETION_HORIZONS_S;
  const sharedBins = Math.floor(sharedBeforeS / binS);
  const instances = sets.flatMap((set, si) => set.instances.map((inst, k) => ({ inst, set: si, k })));
  const bins = instances.map(({ inst }) => Math.max(1, Math.ceil(inst.endS / binS)));
  const offered = sets.map((set) => set.instances.reduce((n, inst) => n + inst.jobs.length, 0));
  // Per set, its groups by key: requests with the same window and horizons are one column per bin.
  const groupsBySet = sets.map(() => new Map<string, Group>());
  // The queue model (`queueBound`, `attemptsAtMost`): starts from the queue on a first attempt are columns of their own.
  const queueModel = sets.map((set) => set.queueBound !== undefined || set.attemptsAtMost !== undefined);
  if (queueModel.some(Boolean) && sharedBins > 0)
    throw new Error("curve bound: the queue model is not tied across twins");
  const countsAttempts = sets.map((set) => set.attemptsAtMost !== undefined);
  // A floor on the served share adds starts after every horizon: not tied across twins (nothing needs it yet).
  const hasServedFloor = sets.map((set) => set.servedAtLeast !== undefined);
  if (hasServedFloor.some(Boolean) && sharedBins > 0)
    throw new Error("curve bound: a served floor is not tied across twins");
  // Per set, the requests that no schedule serves within a horizon and whose clients retry (the attempts row).
  const unservedRetries = sets.map(() => 0);
  // Every request by its release bin, served in time or not (a request no schedule can serve has no group).
  const releasesBySet = sets.map(() => new Map<number, ReleaseRow>());
  instances.forEach(({ inst, set, k }, bucket) => {
    const endBin = (bins[bucket] as number) - 1;
    const groups = groupsBySet[set] as Map<string, Group>;
    inst.jobs.forEach((job, jobIndex) => {
      const first = Math.floor(job.releaseS / binS);
      const releases = releasesBySet[set] as Map<number, ReleaseRow>;
      const row = releases.get(first) ?? { releaseS: first * binS, requests: 0, servedWithin: horizons.map(() => 0) };
      row.requests += 1;
      releases.set(first, row);
      const ways = job.ways ?? [{ minCompletionS: job.minCompletionS, work: 1 }];
      for (let w = 1; w < ways.length; w++)
        if (
          (ways[w] as BoundWay).minCompletionS < (ways[w - 1] as BoundWay).minCompletionS ||
          (ways[w] as BoundWay).work > (ways[w - 1] as BoundWay).work
        )
          throw new Error("curve bound: a job's ways must go from the fastest to the cheapest");
      const within = ways.map((way) =>
        horizons.map((h) => {
          const latestStart = job.arrivalS + h - way.minCompletionS;
          return job.releaseS <= latestStart ? Math.floor(latestStart / binS) : first - 1;
        }),
      );
      const latest = Math.max(...within.map((w) => w[w.length - 1] as number));
      const last = Math.min(Math.floor(job.deadlineS / binS), latest, endBin);
      // With a served floor, a start may also come after every horizon: by its deadline, completing by the run's
      // end at its fastest way's least time, costing its cheapest way's work (both in the request's favour).
      const fastestS = Math.min(...ways.map((way) => way.minCompletionS));
      const lateLast = hasServedFloor[set]
        ? Math.max(last, Math.min(Math.floor(Math.min(job.deadlineS, inst.endS - fastestS) / binS), endBin))
        : last;
      if (queueModel[set] && ways.length > 1) throw new Error("curve bound: the queue model takes one way per job");
      const retry = countsAttempts[set] && job.certainRetry ? 1 : 0;
      if (lateLast < first) {
        // Never served (within a horizon, or at all where a served floor counts later starts): refused or shed at
        // least once, one attempt more if its client retries.
        unservedRetries[set] = (unservedRetries[set] as number) + retry;
        return;
      }
      const clipped = within.map((w) => w.map((b) => Math.min(last, Math.max(first - 1, b))));
      const work = ways.map((way) => way.work);
      const queueEnd =
        queueModel[set] && job.queueEndS !== undefined ? Math.min(last, Math.floor(job.queueEndS / binS)) : first - 1;
      const key = `${k}:${first}:${last}:${lateLast}:${clipped.map((w) => w.join(",")).join(";")}:${work.join(",")}:${queueEnd}:${retry}`;
      const group = groups.get(key);
      if (group) {
        group.count += 1;
        group.members.push(jobIndex);
      } else
        groups.set(key, {
          set,
          instance: k,
          bucket,
          count: 1,
          first,
          last,
          lateLast,
          within: clipped,
          work,
          columns: [],
          queueEnd,
          retry,
          members: [jobIndex],
        });
    });
  });
  if (sharedBins > 0 && sets.length > 2) throw new Error("joint curve bound: only two sets can be tied");
  // The groups released before the sets part: the same in every set, their starts before then tied together.
  const links: Array<[Group, Group]> = [];
  const shared = [...(groupsBySet[0] as Map<string, Group>)].filter(([, g]) => g.first < sharedBins);
  for (let si = 1; si < sets.length && sharedBins > 0; si++) {
    const others = groupsBySet[si] as Map<string, Group>;
    const theirShared = [...others.values()].filter((g) => g.first < sharedBins).length;
    for (const [key, g] of shared) {
      const twin = others.get(key);
      if (!twin || twin.count !== g.count || theirShared !== shared.length)
        throw new Error(`joint curve bound: set ${si} differs from set 0 before ${sharedBeforeS} s`);
      links.push([g, twin]);
    }
  }

  // Rows: one per group (its requests start at most once), one per instance and bin (the start budget), one
  // per set and horizon (served within it >= target + margin), one per tied start.
  const groupList = groupsBySet.flatMap((groups) => [...groups.values()]);
  const bucketRow0: number[] = [];
  let rows = groupList.length;
  for (const b of bins) {
    bucketRow0.push(rows);
    rows += b;
  }
  const horizonRow0 = sets.map(() => {
    const row = rows;
    rows += horizons.length;
    return row;
  });
  // The median's row per set (served within its horizon - share x served within the longest >= 0).
  const median = options.medianWithin;
  const medianHi = median ? (horizons as readonly number[]).indexOf(median.horizonS) : -1;
  if (median && medianHi < 0) throw new Error(`curve bound: ${median.horizonS} s is not a completion horizon`);
  const medianRow0 = rows;
  if (median) rows += sets.length;
  // A tied start's row (one per bin before the parting): +1 for set 0's column, -1 for the twin's (lower = upper = 0).
  const linkRow0 = rows;
  const linkEntry = new Map<Group, { row0: number; sign: number }>();
  for (const [g, twin] of links) {
    linkEntry.set(g, { row0: rows, sign: 1 });
    linkEntry.set(twin, { row0: rows, sign: -1 });
    rows += (Math.min(g.last, sharedBins - 1) - g.first + 1) * g.work.length;
  }
  // The queue model's rows: per instance of a set with a queue bound, one per bin (requests waiting on their first
  // attempt at its end <= the bound); per set with an attempts bound, one (-starts from the queue <= what is left).
  const queueRow0 = rows;
  const occupancyRow0 = instances.map(({ set }, bucket) => {
    if (sets[set]?.queueBound === undefined) return -1;
    const row = rows;
    rows += bins[bucket] as number;
    return row;
  });
  const attemptsRow = sets.map((set) => (set.attemptsAtMost === undefined ? -1 : rows++));
  // Per set with a served floor, one (every start of it >= the floor).
  const servedRow = sets.map((set) => (set.servedAtLeast === undefined ? -1 : rows++));

  const starts: number[] = [0];
  const indices: number[] = [];
  const values: number[] = [];
  const colLower: number[] = [];
  const colUpper: number[] = [];
  const colCost: number[] = [];
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
  // Per column, the share of its set's offered requests it adds to the served-within counts (preferSooner).
  const soonerCost: number[] = [];
  // A start from the queue on the first attempt: it waits there through the bins before it, and saves its client's
  // retry.
  const pushFromQueue = (g: Group, t: number, way: number, entries: [number, number][], sooner: number) => {
    const queued: [number, number][] = [...entries];
    const occupancy = occupancyRow0[g.bucket] as number;
    if (occupancy >= 0) for (let w = g.first; w < t; w++) queued.push([occupancy + w, 1]);
    const attempts = attemptsRow[g.set] as number;
    if (attempts >= 0 && g.retry > 0) queued.push([attempts, -1]);
    g.columns.push({ t, way, col: colCost.length, fromQueue: true });
    soonerCost[colCost.length] = sooner;
    push(0, g.count, 0, queued);
  };
  groupList.forEach((g, gi) => {
    const link = linkEntry.get(g);
    const served = servedRow[g.set] as number;
    // After every horizon (a served floor only): the cheapest way, counted as served and in the median's whole; never
    // from the queue (`queueEnd` is at most `last`).
    const cheapest = g.work.length - 1;
    for (let t = g.last + 1; t <= g.lateLast; t++) {
      const entries: [number, number][] = [
        [gi, 1],
        [(bucketRow0[g.bucket] as number) + t, g.work[cheapest] as number],
        [served, 1],
      ];
      if (median) entries.push([medianRow0 + g.set, -median.share]);
      g.columns.push({ t, way: cheapest, col: colCost.length });
      soonerCost[colCost.length] = 0;
      push(0, g.count, 0, entries);
    }
    for (let t = g.first; t <= g.last; t++) {
      // Per way, the horizons a start in this bin completes within: ways are ordered slower and cheaper, so each
      // way's horizons include the next one's.
      const counts = g.within.map((within) => horizons.filter((_, hi) => t <= (within[hi] as number)).length);
      g.within.forEach((within, way) => {
        const counted = counts[way] as number;
        // No column for a start that serves nothing (within no horizon), nor for one that serves no more than the
        // next, cheaper way in the same bin: the cheaper start does all it does for less (an empty tied row, if
        // any, is the same in both twins).
        if (counted === 0) return;
        if (way < counts.length - 1 && counted === counts[way + 1]) return;
        const entries: [number, number][] = [
          [gi, 1],
          [(bucketRow0[g.bucket] as number) + t, g.work[way] as number],
        ];
        horizons.forEach((_, hi) => {
          if (t <= (within[hi] as number)) entries.push([(horizonRow0[g.set] as number) + hi, 1]);
        });
        if (served >= 0) entries.push([served, 1]);
        // Every column here serves within the longest horizon (it serves within some, and they are nested).
        if (median) entries.push([medianRow0 + g.set, (t <= (within[medianHi] as number) ? 1 : 0) - median.share]);
        if (link && t < sharedBins) entries.push([link.row0 + (t - g.first) * g.work.length + way, link.sign]);
        g.columns.push({ t, way, col: colCost.length });
        soonerCost[colCost.length] = counted / (offered[g.set] || 1);
        push(0, g.count, 0, entries);
        if (t <= g.queueEnd) pushFromQueue(g, t, way, entries, counted / (offered[g.set] || 1));
      });
    }
  });
  // Start budget of each instance: level[t] tokens at the start of bin t; level[t+1] <= level[t] + rate -
  // starts[t]; the first level is the full budget.
  instances.forEach(({ inst }, bucket) => {
    const n = bins[bucket] as number;
    for (let t = 0; t <= n; t++) {
      const entries: [number, number][] = [];
      if (t < n) entries.push([(bucketRow0[bucket] as number) + t, -1]);
      if (t > 0) entries.push([(bucketRow0[bucket] as number) + t - 1, 1]);
      push(t === 0 ? inst.burstStarts : 0, inst.burstStarts, 0, entries);
    }
  });
  // The margin, in each set's requests' share: maximised.
  const marginCol = colCost.length;
  push(
    -1,
    1,
    1,
    sets.flatMap((_, si) =>
      horizons.map((_, hi) => [(horizonRow0[si] as number) + hi, -(offered[si] as number)] as [number, number]),
    ),
  );

  const rowLower: number[] = [];
  const rowUpper: number[] = [];
  for (const g of groupList) {
    rowLower.push(-highs.infinity);
    rowUpper.push(g.count);
  }
  instances.forEach(({ inst }, bucket) => {
    for (let t = 0; t < (bins[bucket] as number); t++) {
      rowLower.push(-highs.infinity);
      rowUpper.push(inst.startRateAt(t * binS) * binS);
    }
  });
  sets.forEach((set, si) => {
    for (const h of horizons) {
      rowLower.push((offered[si] as number) * (set.target[String(h)] ?? 0));
      rowUpper.push(highs.infinity);
    }
  });
  if (median)
    for (let si = 0; si < sets.length; si++) {
      rowLower.push(0);
      rowUpper.push(highs.infinity);
    }
  for (let r = linkRow0; r < queueRow0; r++) {
    rowLower.push(0);
    rowUpper.push(0);
  }
  instances.forEach(({ set }, bucket) => {
    if ((occupancyRow0[bucket] as number) < 0) return;
    for (let t = 0; t < (bins[bucket] as number); t++) {
      rowLower.push(-highs.infinity);
      rowUpper.push(sets[set]?.queueBound as number);
    }
  });
  sets.forEach((set, si) => {
    if (set.attemptsAtMost === undefined) return;
    // Attempts = offered + one per request not started from the queue whose client retries; at most the bound.
    const retrying = groupList.filter((g) => g.set === si).reduce((n, g) => n + g.retry * g.count, 0);
    const offeredHere = offered[si] as number;
    rowLower.push(-highs.infinity);
    rowUpper.push((set.attemptsAtMost - 1) * offeredHere - retrying - (unservedRetries[si] as number));
  });
  sets.forEach((set, si) => {
    if (set.servedAtLeast === undefined) return;
    rowLower.push((offered[si] as number) * set.servedAtLeast);
    rowUpper.push(highs.infinity);
  });

  const columns = colCost.length;
  const solve = (cost: readonly number[], lower: readonly number[]) =>
    highs.withModel(
      {
        numCols: columns,
        numRows: rows,
        sense: highs.constants.objectiveSense.maximize,
        colCost: [...cost],
        colLower: [...lower],
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
  let x = solve(colCost, colLower);
  if (options.preferSooner) {
    // Among the schedules that reach the margin, one that serves the most within every horizon: the margin is
    // held (less a solver tolerance) and the served-within counts are maximised.
    const lower = colLower.map((v, i) => (i === marginCol ? (x[marginCol] as number) - 1e-6 : v));
    const cost = colCost.map((_, i) => soonerCost[i] ?? 0);
    x = solve(cost, lower);
  }
  // One pass over the schedule: each set's served-within counts (in the same order as ever, group by group) and
  // each release row's.
  const within = sets.map(() => horizons.map(() => 0));
  const servedCounts = sets.map(() => 0);
  for (const g of groupList) {
    for (const { col } of g.columns) servedCounts[g.set] = (servedCounts[g.set] as number) + (x[col] as number);
    const row = releasesBySet[g.set]?.get(g.first) as ReleaseRow;
    const counts = within[g.set] as number[];
    horizons.forEach((_, hi) => {
      for (const { t, way, col } of g.columns) {
        if (t > (g.within[way]?.[hi] as number)) continue;
        const started = x[col] as number;
        counts[hi] = (counts[hi] as number) + started;
        row.servedWithin[hi] = (row.servedWithin[hi] as number) + started;
      }
    });
  }
  const curves = sets.map((_, si) =>
    Object.fromEntries(
      horizons.map((h, hi) => [
        String(h),
        (offered[si] as number) > 0 ? (within[si]?.[hi] as number) / (offered[si] as number) : 0,
      ]),
    ),
  );
  const byRelease = releasesBySet.map((releases) => [...releases.values()].sort((a, b) => a.releaseS - b.releaseS));
  const servedShares = servedCounts.map((n, si) => ((offered[si] as number) > 0 ? n / (offered[si] as number) : 0));
  const result = { margin: x[marginCol] as number, curves, byRelease, servedShares, size: { columns, rows } };
  return options.plans ? { ...result, plans: planOf(x, groupList, instances, sets.length, binS) } : result;
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
  const fastest = { ...defaultTimingModel, speed: fleetSpeed(scenario).fastest };
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
  /**
   * In a scenario held to a p50 time to success too (issue 15's sustained overload): the same bound with that
   * target added (`BoundOptions.medianWithin`, half of what it serves within `p50S`). A margin below `margin` is
   * what meeting both targets at once costs with foresight; the same margin, nothing.
   */
  withP50?: { p50S: number; margin: number; curve: CompletionCurve };
}

/**
 * The clairvoyant bound of an evaluated scenario against its curve target (the best other policy at each
 * horizon), on the same seeds' requests and clients and the same measured capacity.
 *
 * @example
 * ```ts
 * const bound = scenarioCurveBound(highs, scenario, evaluateScenario(scenario, EVAL_POLICIES, 3));
 * bound.margin; // e.g. 0.03: one schedule is 3 points above the best other policy at every horizon
 * scenarioCurveBound(highs, sustained, result, 5).withP50?.margin; // the same, half of it served within 5 s
 * ```
 */
export function scenarioCurveBound(
  highs: Highs,
  scenario: Scenario,
  result: ScenarioResult,
  p50S?: number,
): ScenarioCurveBound {
  const { instances, target } = scenarioBoundSet(scenario, result);
  const { margin, curve, size } = curveBound(highs, instances, target);
  if (p50S === undefined) return { target, margin, curve, size };
  const held = curveBound(highs, instances, target, 1, { medianWithin: { horizonS: p50S, share: 0.5 } });
  return { target, margin, curve, size, withP50: { p50S, margin: held.margin, curve: held.curve } };
}

/**
 * An evaluated scenario as the bounds see it: its seeds' instances (same requests, clients and measured capacity)
 * and its curve target (the best other policy at each horizon).
 *
 * @example
 * ```ts
 * const set = scenarioBoundSet(scenario, evaluateScenario(scenario, EVAL_POLICIES, 3));
 * jointCurveBound(highs, [set, twinSet], 70).margin;
 * ```
 */
export function scenarioBoundSet(scenario: Scenario, result: ScenarioResult): BoundSet {
  return { instances: seedInstances(scenario, result, boundInstance), target: bestOtherCurve(result) };
}

/**
 * An evaluated scenario's instances, one per seed, each built by `instanceOf` from that seed's requests and the
 * evaluation's measured capacity: what `boundInstance` and the batch-aware `batchBoundInstance` are given.
 *
 * @example
 * ```ts
 * const instances = seedInstances(scenario, result, batchBoundInstance);
 * curveBound(highs, instances, bestOtherCurve(result)).margin;
 * ```
 */
export function seedInstances<I extends BoundInstance>(
  scenario: Scenario,
  result: Pick<ScenarioResult, "seeds" | "capacityRps">,
  instanceOf: (scenario: Scenario, workload: readonly WorkloadRequest[], capacityRps: number) => I,
): I[] {
  return result.seeds.map((seed) => {
    const seeded = { ...scenario, seed };
    return instanceOf(seeded, generateWorkload(seeded, result.capacityRps), result.capacityRps);
  });
}

/** The schedule `x` request by request: each group's starts handed out in order of start (see `plans`). */
function planOf(
  x: ArrayLike<number>,
  groups: readonly Group[],
  instances: ReadonlyArray<{ inst: BoundInstance; set: number; k: number }>,
  setCount: number,
  binS: number,
): Array<Array<Array<PlannedStart | undefined>>> {
  const plans: Array<Array<Array<PlannedStart | undefined>>> = Array.from({ length: setCount }, () => []);
  for (const { inst, set, k } of instances)
    (plans[set] as Array<Array<PlannedStart | undefined>>)[k] = inst.jobs.map(() => undefined);
  for (const g of groups) {
    const jobs = (instances[g.bucket] as { inst: BoundInstance }).inst.jobs;
    const plan = plans[g.set]?.[g.instance] as Array<PlannedStart | undefined>;
    const started = g.columns.filter((c) => (x[c.col] as number) > 1e-9).sort((a, b) => a.t - b.t);
    let sum = 0;
    let handed = 0;
    for (const c of started) {
      sum += x[c.col] as number;
      for (const upTo = Math.min(g.members.length, Math.round(sum)); handed < upTo; handed++) {
        const index = g.members[handed] as number;
        const startS = Math.max((jobs[index] as BoundJob).releaseS, c.t * binS);
        plan[index] = { startS, fromQueue: c.fromQueue === true };
      }
    }
  }
  return plans;
}
