import type { CompletionCurve } from "./metrics";
import { DEFAULT_POLICY_ID } from "./policies";
import { pct, pts } from "./report-format";
import type { Scenario } from "./scenario";
import { TARGET_TOLERANCE, withinTolerance } from "./targets";

/** The train's length, seconds, and its mean load (a multiple of capacity) over that time. */
export const TRAIN_S = 60;
export const TRAIN_LOAD = 1.5;
/** Each spike's length, seconds. */
export const SPIKE_S = 0.2;
/** The completion curve's horizons the doc shows, seconds. */
const CURVE_HORIZONS_S = [30, 60] as const;

/**
 * A one-burst scenario with its burst replaced by a train of short spikes: its lead-in kept, then {@link TRAIN_S}
 * seconds whose mean load is {@link TRAIN_LOAD} x capacity, the excess over the lead-in's load arriving as a spike
 * of {@link SPIKE_S} s at the start of every `periodS` (load `base + (1.5 - base) * periodS / 0.2`, so each period
 * averages 1.5x), the rest of each period at the lead-in's load; then the scenario's own last phase and tail. When
 * `periodS` does not divide 60 s, the last period is cut at 60 s and its spike scaled to its length, so it too
 * averages 1.5x. `periodS` 0 is no spikes: 60 s at a steady 1.5x. `burstPhase` names the first spike (or the
 * steady phase), so the burst bound and the arrival bins read the train's first overload.
 *
 * Why: the bursts of `docs/evaluation.md` are one block above capacity. An overload that comes as a train of short
 * spikes, each cleared between spikes, offers as much over the minute but leaves the queue empty most of the
 * time: the default's forecast, reading recent arrivals, may hint long waits at a fleet that is often idle.
 *
 * @example
 * ```ts
 * const burst = readScenario("burst-3x"); // 60 s at 0.5x, 20 s at 3x, 160 s at 0.5x
 * spikeTrain(burst, 4).phases.slice(0, 3); // [{ durationS: 60, load: 0.5 }, { durationS: 0.2, load: 20.5 }, { durationS: 3.8, load: 0.5 }]
 * spikeTrain(burst, 0).phases; // [{ durationS: 60, load: 0.5 }, { durationS: 60, load: 1.5 }, { durationS: 160, load: 0.5 }]
 * spikeTrain(readScenario("waves"), 4); // throws: waves is not a scenario of one burst
 * ```
 */
export function spikeTrain(scenario: Scenario, periodS: number): Scenario {
  if (!(periodS === 0 || (periodS > SPIKE_S && Number.isFinite(periodS))))
    throw new Error(`a spike period must be 0 (no spikes) or longer than the ${SPIKE_S} s spike, not ${periodS}`);
  const [leadIn, burst, tail, ...more] = scenario.phases;
  if (!leadIn || !burst || !tail || more.length > 0 || burst.load <= 1 || scenario.burstPhase !== 1)
    throw new Error(`${scenario.name}: not a scenario of one burst (a lead-in, the burst, a tail; burstPhase 1)`);
  const base = leadIn.load;
  const train: Scenario["phases"] = [];
  if (periodS === 0) train.push({ durationS: TRAIN_S, load: TRAIN_LOAD });
  else
    for (let i = 0; i * periodS < TRAIN_S; i++) {
      // Whole periods first; a last one cut at 60 s keeps the same mean with a smaller spike.
      const lengthS = Math.min(periodS, TRAIN_S - i * periodS);
      const spikeS = Math.min(SPIKE_S, lengthS);
      train.push({ durationS: spikeS, load: base + ((TRAIN_LOAD - base) * lengthS) / spikeS });
      if (lengthS > spikeS) train.push({ durationS: lengthS - spikeS, load: base });
    }
  return { ...scenario, phases: [leadIn, ...train, tail], burstPhase: 1 };
}

/** The fleets the trains run on: `burst-3x`'s own, and {@link smallFleet}'s. */
export const BURST_TRAIN_FLEETS = ["burst-3x", "small"] as const;
export type BurstTrainFleet = (typeof BURST_TRAIN_FLEETS)[number];

/** The small fleet: one replica of 4 slots and 16384 tokens, serving fixed 16-token prompts and 32-token outputs. */
export const SMALL_FLEET = {
  fleet: { replicas: [{ count: 1, speed: 1 }], maxOngoingRequests: 4, maxTotalTokens: 16384 },
  promptTokens: 16,
  outputTokens: 32,
} as const;

/**
 * A scenario with its fleet replaced by {@link SMALL_FLEET}'s (one replica of 4 slots) and its requests by fixed
 * 16-token prompts and fixed 32-token outputs; the rest kept: phases, router, clients, network, seed and tail. The
 * phases' loads are multiples of the measured capacity, so the same phases overload the small fleet as much, relative
 * to what it serves.
 *
 * Why: `burst-3x`'s fleet has 32 slots that each free every few seconds; a small deployment has a handful that each
 * free in a fraction of a second, so one spike fills fleet and queue at once and a hint that overshoots the drain
 * leaves a larger share of the fleet idle.
 *
 * @example
 * ```ts
 * const small = smallFleet(readScenario("burst-3x"));
 * small.fleet; // { replicas: [{ count: 1, speed: 1 }], maxOngoingRequests: 4, maxTotalTokens: 16384 }
 * small.requests.output; // { kind: "fixed", tokens: 32 }
 * spikeTrain(small, 4); // the same train, on the small fleet
 * ```
 */
export function smallFleet(scenario: Scenario): Scenario {
  const { fleet, promptTokens, outputTokens } = SMALL_FLEET;
  return {
    ...scenario,
    name: `${scenario.name}-small-fleet`,
    fleet: { ...fleet, replicas: fleet.replicas.map((r) => ({ ...r })) },
    requests: {
      ...scenario.requests,
      prompt: { kind: "fixed", tokens: promptTokens },
      output: { kind: "fixed", tokens: outputTokens },
    },
  };
}

/** `scenario` on the named fleet: its own for `burst-3x`, {@link smallFleet}'s for `small`. */
export function onFleet(scenario: Scenario, fleet: BurstTrainFleet): Scenario {
  return fleet === "small" ? smallFleet(scenario) : scenario;
}

/** A fleet as the report records it: its replicas and slots, the requests it serves, and its measured capacity. */
export interface BurstTrainFleetShape {
  fleet: BurstTrainFleet;
  replicas: Scenario["fleet"]["replicas"];
  maxOngoingRequests: number;
  maxTotalTokens: number;
  requests: Scenario["requests"];
  /** Requests per second at full load (`measureCapacity`); the trains' loads are multiples of it. */
  capacityRps: number;
}

/**
 * The fleet of `scenario` as the report records it, to check it against what {@link onFleet} builds.
 *
 * @example
 * ```ts
 * fleetShape(smallFleet(burst), "small", 5.67); // { fleet: "small", replicas: [{ count: 1, speed: 1 }], maxOngoingRequests: 4, ... }
 * ```
 */
export function fleetShape(scenario: Scenario, fleet: BurstTrainFleet, capacityRps: number): BurstTrainFleetShape {
  const { replicas, maxOngoingRequests, maxTotalTokens } = scenario.fleet;
  return { fleet, replicas, maxOngoingRequests, maxTotalTokens, requests: scenario.requests, capacityRps };
}

/** A train's shape as the report records it, to check it against what {@link spikeTrain} builds. */
export interface TrainShape {
  periodS: number;
  /** Spikes in the train (0: the steady row), and their loads, distinct, highest first. */
  spikes: number;
  spikeLoads: number[];
  /** The train's mean load over its {@link TRAIN_S} s (1.5, up to float rounding). */
  meanLoad: number;
}

/**
 * The shape of the train in a scenario built by {@link spikeTrain}: the phases between the lead-in and the tail.
 *
 * @example
 * ```ts
 * trainShape(spikeTrain(burst, 8), 8); // { periodS: 8, spikes: 8, spikeLoads: [40.5, 20.5], meanLoad: 1.5 }
 * ```
 */
export function trainShape(scenario: Scenario, periodS: number): TrainShape {
  const train = scenario.phases.slice(1, -1);
  const base = scenario.phases[0]?.load ?? 0;
  const spikes = periodS === 0 ? [] : train.filter((p) => p.load > base);
  const seconds = train.reduce((s, p) => s + p.durationS, 0);
  return {
    periodS,
    spikes: spikes.length,
    spikeLoads: [...new Set(spikes.map((p) => p.load))].sort((a, b) => b - a),
    meanLoad: train.reduce((s, p) => s + p.load * p.durationS, 0) / seconds,
  };
}

/** One point: a fleet, a spike period and a queue bound, every policy's figures (3 seeds pooled). */
export interface BurstTrainPoint {
  fleet: BurstTrainFleet;
  periodS: number;
  maxQueuedRequests: number;
  /** A full queue's drain time at capacity, seconds (the queue-bound sweep's setting). */
  queueDrainS: number;
  offeredRequests: number;
  /** Per policy id: the final served share, the completion curve, and the share of the fleet idle while clients waited. */
  served: Record<string, number>;
  servedWithinS: Record<string, CompletionCurve>;
  idleWhileWaiting: Record<string, number>;
  /** The default's promises (its ledgers, every router shard): how many it made and how many ended broken. */
  defaultPromises: PromiseCounts;
  /**
   * A counterfactual, not a policy: the default told the run's own fresh arrivals of every coming second in advance
   * (the variant `clairvoyant-forecast`, {@link BurstTrainReport.clairvoyantPolicy}; no router knows its arrivals),
   * on the same arrivals, seeds, capacity and queue bound. Its figures less the default's are what the default's
   * forecast of fresh arrivals costs at this point: its final served share, completion curve and idle share.
   */
  clairvoyantDefault: VariantFigures;
  /**
   * A measured variant, not the default: the default with one trust per lead time (the variant `trust-by-lead`,
   * {@link BurstTrainReport.trustByLeadPolicy}: ledger `trustBucketS` 4, so a broken promise made a few seconds ahead
   * does not lower the trust of promises made further ahead), on the same arrivals, seeds, capacity and queue bound.
   */
  trustByLead: VariantFigures;
}

/** A variant of the default run at a point: its final served share, completion curve and idle share (3 seeds pooled). */
export interface VariantFigures {
  served: number;
  servedWithinS: CompletionCurve;
  idleWhileWaiting: number;
  /** Its promises: how many it made and how many ended broken. */
  promises: PromiseCounts;
}

/** Promises a ledger made at a point (3 seeds pooled) and how many ended broken (a retry refused, or shed). */
export interface PromiseCounts {
  made: number;
  broken: number;
}

/** What `npm run eval:burst-train` writes to docs/burst-train.json. */
export interface BurstTrainReport {
  generatedBy: string;
  scenario: string;
  seeds: number[];
  /** The scenario's own fleet's capacity, requests/s (the `burst-3x` entry of `fleets`). */
  capacityRps: number;
  /** The fleets the trains ran on, each with its capacity; the trains (`trains`) are the same on each. */
  fleets: BurstTrainFleetShape[];
  /** The scenario's lead-in and last phase, as kept, and its tail, seconds. */
  leadIn: { durationS: number; load: number };
  after: { durationS: number; load: number };
  tailS: number;
  trains: TrainShape[];
  /** The id of the policy each point's `clairvoyantDefault` ran: the default with its fresh arrivals known. */
  clairvoyantPolicy: string;
  /** The id of the policy each point's `trustByLead` ran: the default with one trust per lead time. */
  trustByLeadPolicy: string;
  points: BurstTrainPoint[];
}

/**
 * The best policy other than the default by a figure of each policy (the served share, or the curve at a horizon).
 *
 * @example
 * ```ts
 * bestOther({ booked_capacity: 0.9, "static-30": 0.92, "static-5": 0.8 }); // { id: "static-30", value: 0.92 }
 * ```
 */
export function bestOther(byPolicy: Record<string, number>): { id: string; value: number } {
  let best = { id: "", value: Number.NEGATIVE_INFINITY };
  for (const [id, value] of Object.entries(byPolicy))
    if (id !== DEFAULT_POLICY_ID && value > best.value) best = { id, value };
  return best;
}

/** Each policy's completion curve at `horizonS`. */
function curveAt(p: BurstTrainPoint, horizonS: number): Record<string, number> {
  return Object.fromEntries(Object.entries(p.servedWithinS).map(([id, c]) => [id, c[String(horizonS)] ?? 0]));
}

/** The default's final served share less the best other policy's at a point. */
export function servedGap(p: BurstTrainPoint): number {
  return (p.served[DEFAULT_POLICY_ID] ?? 0) - bestOther(p.served).value;
}

/** The default's completion curve at `horizonS` less the best other policy's there. */
export function curveGapAt(p: BurstTrainPoint, horizonS: number): number {
  const curve = curveAt(p, horizonS);
  return (curve[DEFAULT_POLICY_ID] ?? 0) - bestOther(curve).value;
}

/** A fleet's points, in the report's order; throws when the report has none on it (a summary of nothing). */
function fleetPoints(report: BurstTrainReport, fleet: BurstTrainFleet): BurstTrainPoint[] {
  const points = report.points.filter((p) => p.fleet === fleet);
  if (points.length === 0) throw new Error(`no points on the ${fleet} fleet`);
  return points;
}

/** Where a point is, as the summaries name it: its spike period and queue bound. */
const pointAt = (p: BurstTrainPoint) => ({ periodS: p.periodS, maxQueuedRequests: p.maxQueuedRequests });

/** A fleet as the doc's headings name it: "small fleet" or "`burst-3x` fleet". */
const fleetName = (fleet: BurstTrainFleet) => (fleet === "small" ? "small fleet" : `\`${fleet}\` fleet`);

/**
 * What a fleet's last paragraph in the doc reads from that fleet's points: where the default misses the served
 * target (more than a point behind the best other policy), with spikes and steady; its widest served loss and to
 * whom; at 30 and 60 s, where it is more than 2 points behind the best other policy's curve (the curve target's
 * tolerance); and the share of the fleet idle while refused clients waited, the default's against static 30 s's.
 *
 * @example
 * ```ts
 * burstTrainSummary(report, "small").servedMisses; // e.g. [{ periodS: 8, maxQueuedRequests: 11, gap: -0.031, bestOther: "static-30" }]
 * ```
 */
export function burstTrainSummary(report: BurstTrainReport, fleet: BurstTrainFleet) {
  const points = fleetPoints(report, fleet);
  const servedMisses = points
    .filter((p) => !withinTolerance(servedGap(p), TARGET_TOLERANCE.served))
    .map((p) => ({ ...pointAt(p), gap: servedGap(p), bestOther: bestOther(p.served).id }));
  const widest = points.reduce((w, p) => (servedGap(p) < servedGap(w) ? p : w), points[0] as BurstTrainPoint);
  const curveMisses = Object.fromEntries(
    CURVE_HORIZONS_S.map((h) => [
      String(h),
      points.filter((p) => !withinTolerance(curveGapAt(p, h), TARGET_TOLERANCE.curve)).map(pointAt),
    ]),
  );
  const worstCurve = Object.fromEntries(
    CURVE_HORIZONS_S.map((h) => {
      const w = points.reduce((a, p) => (curveGapAt(p, h) < curveGapAt(a, h) ? p : a), points[0] as BurstTrainPoint);
      return [String(h), { ...pointAt(w), gap: curveGapAt(w, h), bestOther: bestOther(curveAt(w, h)).id }];
    }),
  );
  // The default's worst curve gap at each horizon over the rows with spikes and over the steady row.
  const worstGap = (ps: BurstTrainPoint[], h: number) => Math.min(...ps.map((p) => curveGapAt(p, h)));
  const spikeVsSteady = Object.fromEntries(
    CURVE_HORIZONS_S.map((h) => [
      String(h),
      {
        spikes: worstGap(
          points.filter((p) => p.periodS > 0),
          h,
        ),
        steady: worstGap(
          points.filter((p) => p.periodS === 0),
          h,
        ),
      },
    ]),
  );
  const idle = (id: string) => points.map((p) => p.idleWhileWaiting[id] ?? 0);
  return {
    points: points.length,
    spikePoints: points.filter((p) => p.periodS > 0).length,
    servedMisses,
    spikeServedMisses: servedMisses.filter((m) => m.periodS > 0).length,
    widest: { ...pointAt(widest), gap: servedGap(widest), bestOther: bestOther(widest.served).id },
    curveMisses,
    worstCurve,
    spikeVsSteady,
    idleDefault: { lowest: Math.min(...idle(DEFAULT_POLICY_ID)), highest: Math.max(...idle(DEFAULT_POLICY_ID)) },
    idleStatic30: { lowest: Math.min(...idle("static-30")), highest: Math.max(...idle("static-30")) },
    idleDefaultAbove: points.filter(
      (p) => (p.idleWhileWaiting[DEFAULT_POLICY_ID] ?? 0) > (p.idleWhileWaiting["static-30"] ?? 0),
    ).length,
  };
}

/** The horizon of the variants' tables and sentences (the clairvoyant default, trust by lead), seconds: where the default loses most. */
export const VARIANT_HORIZON_S = 60;

/** At a point, a completion curve at {@link VARIANT_HORIZON_S} less static 30 s's there. */
function lessStatic30(p: BurstTrainPoint, curve: CompletionCurve | undefined): number {
  const h = String(VARIANT_HORIZON_S);
  return (curve?.[h] ?? 0) - (p.servedWithinS["static-30"]?.[h] ?? 0);
}

/** At a point, the default's and the clairvoyant default's completion curve at {@link VARIANT_HORIZON_S} less static 30 s's. */
export function clairvoyantGaps(p: BurstTrainPoint): { default: number; clairvoyant: number } {
  return {
    default: lessStatic30(p, p.servedWithinS[DEFAULT_POLICY_ID]),
    clairvoyant: lessStatic30(p, p.clairvoyantDefault.servedWithinS),
  };
}

/**
 * What a fleet's clairvoyant paragraph reads from that fleet's points: within {@link VARIANT_HORIZON_S} s, the
 * default's and the clairvoyant default's worst gap to static 30 s (and where), the points where each is within the
 * curve target's 2 points of it, the clairvoyant default's gap where the default's is worst, and the highest share of
 * the fleet idle while refused clients waited, each of the three's.
 *
 * @example
 * ```ts
 * clairvoyantSummary(report, "burst-3x").clairvoyantWithin; // e.g. 25: at every point within 2 points of static 30 s
 * ```
 */
export function clairvoyantSummary(report: BurstTrainReport, fleet: BurstTrainFleet) {
  const points = fleetPoints(report, fleet);
  const worstPoint = (which: "default" | "clairvoyant") =>
    points.reduce(
      (a, p) => (clairvoyantGaps(p)[which] < clairvoyantGaps(a)[which] ? p : a),
      points[0] as BurstTrainPoint,
    );
  const within = (which: "default" | "clairvoyant") =>
    points.filter((p) => withinTolerance(clairvoyantGaps(p)[which], TARGET_TOLERANCE.curve)).length;
  const [worstDefault, worstClairvoyant] = [worstPoint("default"), worstPoint("clairvoyant")];
  return {
    points: points.length,
    worstDefault: { ...pointAt(worstDefault), gap: clairvoyantGaps(worstDefault).default },
    worstClairvoyant: { ...pointAt(worstClairvoyant), gap: clairvoyantGaps(worstClairvoyant).clairvoyant },
    clairvoyantAtWorstDefault: clairvoyantGaps(worstDefault).clairvoyant,
    defaultWithin: within("default"),
    clairvoyantWithin: within("clairvoyant"),
    // Where knowing the arrivals does worse than forecasting them: that loss is not the forecast's.
    clairvoyantBelowDefault: points.filter((p) => clairvoyantGaps(p).clairvoyant < clairvoyantGaps(p).default).length,
    idleHighest: {
      default: Math.max(...points.map((p) => p.idleWhileWaiting[DEFAULT_POLICY_ID] ?? 0)),
      clairvoyant: Math.max(...points.map((p) => p.clairvoyantDefault.idleWhileWaiting)),
      static30: Math.max(...points.map((p) => p.idleWhileWaiting["static-30"] ?? 0)),
    },
  };
}

/** A fleet's clairvoyant counterfactual in docs/burst-train.md: its table and what it says. */
function renderClairvoyant(
  points: BurstTrainPoint[],
  s: ReturnType<typeof clairvoyantSummary>,
  row: (p: BurstTrainPoint) => string,
  at: (m: { periodS: number; maxQueuedRequests: number }) => string,
): string[] {
  const h = String(VARIANT_HORIZON_S);
  const lines = [
    "### The default with its fresh arrivals known in advance",
    "",
    "A counterfactual, not a policy: the default's variant `clairvoyant-forecast` is told the run's own fresh arrivals of every coming second (a 5 s mean) in place of its forecast, on the same arrivals, seeds and queue bounds. No router knows its arrivals; this measures how much of the default's loss is its forecast's. " +
      `Served within ${h} s, and the share of the fleet idle while refused clients waited, the default's, the clairvoyant default's and static 30 s's:`,
    "",
    `| spike period | queue (drain s) | ${h} s: default | ${h} s: clairvoyant default | ${h} s: static-30 | idle while waiting: default | clairvoyant default | static-30 |`,
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const p of points)
    lines.push(
      `| ${row(p)} | ${pct(p.servedWithinS[DEFAULT_POLICY_ID]?.[h])} | ${pct(p.clairvoyantDefault.servedWithinS[h])} | ${pct(p.servedWithinS["static-30"]?.[h])} | ${pct(p.idleWhileWaiting[DEFAULT_POLICY_ID])} | ${pct(p.clairvoyantDefault.idleWhileWaiting)} | ${pct(p.idleWhileWaiting["static-30"])} |`,
    );
  const same =
    s.worstDefault.periodS === s.worstClairvoyant.periodS &&
    s.worstDefault.maxQueuedRequests === s.worstClairvoyant.maxQueuedRequests;
  const defaultWorst = same
    ? "at the same point"
    : `with ${at(s.worstDefault)}, where the clairvoyant default is ${pts(s.clairvoyantAtWorstDefault)}`;
  lines.push(
    "",
    `What the counterfactual says: within ${h} s the clairvoyant default is at worst ${pts(s.worstClairvoyant.gap)} points from static 30 s (with ${at(s.worstClairvoyant)}), the default ${pts(s.worstDefault.gap)} (${defaultWorst}); the clairvoyant default is within 2 points of static 30 s at ${s.clairvoyantWithin} of ${s.points} points, the default at ${s.defaultWithin}, and below the default at ${s.clairvoyantBelowDefault} (where knowing the arrivals does worse than forecasting them); the clairvoyant default leaves at most ${pct(s.idleHighest.clairvoyant)} of the fleet's slots idle while refused clients wait, the default ${pct(s.idleHighest.default)}, static 30 s ${pct(s.idleHighest.static30)}.`,
    "",
  );
  return lines;
}

/**
 * What a fleet's trust-by-lead paragraph reads from that fleet's points: within {@link VARIANT_HORIZON_S} s, the
 * points where trust by lead and the default are each within the curve target's 2 points of static 30 s; the final
 * served share of each less the best policy's other than the default (the same yardstick for both): the points where
 * it is more than the served target's point behind, and the worst, where;
 * the points where trust by lead serves less than the default in the end, and by how much at most; and the highest
 * share of the fleet idle while refused clients waited, trust by lead's, the default's and static 30 s's.
 *
 * @example
 * ```ts
 * trustByLeadSummary(report, "burst-3x").within; // e.g. { trustByLead: 20, default: 8 }
 * ```
 */
export function trustByLeadSummary(report: BurstTrainReport, fleet: BurstTrainFleet) {
  const points = fleetPoints(report, fleet);
  const mine = (p: BurstTrainPoint) => p.served[DEFAULT_POLICY_ID] ?? 0;
  const within = (curve: (p: BurstTrainPoint) => CompletionCurve | undefined) =>
    points.filter((p) => withinTolerance(lessStatic30(p, curve(p)), TARGET_TOLERANCE.curve)).length;
  // The first of the fleet's points where a figure is lowest, and the figure there.
  const lowest = (by: (p: BurstTrainPoint) => number) => {
    const w = points.reduce((a, p) => (by(p) < by(a) ? p : a), points[0] as BurstTrainPoint);
    return { point: w, at: { ...pointAt(w), gap: by(w) } };
  };
  const worstServed = (by: (p: BurstTrainPoint) => number) => {
    const { point, at } = lowest(by);
    return { ...at, bestOther: bestOther(point.served).id };
  };
  const lessDefault = (p: BurstTrainPoint) => p.trustByLead.served - mine(p);
  const leadServedGap = (p: BurstTrainPoint) => p.trustByLead.served - bestOther(p.served).value;
  const servedMisses = (gap: (p: BurstTrainPoint) => number) =>
    points.filter((p) => !withinTolerance(gap(p), TARGET_TOLERANCE.served)).length;
  return {
    points: points.length,
    within: {
      trustByLead: within((p) => p.trustByLead.servedWithinS),
      default: within((p) => p.servedWithinS[DEFAULT_POLICY_ID]),
    },
    servedMisses: { trustByLead: servedMisses(leadServedGap), default: servedMisses(servedGap) },
    worstServed: { trustByLead: worstServed(leadServedGap), default: worstServed(servedGap) },
    belowDefault: { points: points.filter((p) => lessDefault(p) < 0).length, furthest: lowest(lessDefault).at },
    // Over the fleet's points: the promises each made, and the share of those that ended broken.
    promises: {
      trustByLead: promiseTotals(points.map((p) => p.trustByLead.promises)),
      default: promiseTotals(points.map((p) => p.defaultPromises)),
    },
    idleHighest: {
      trustByLead: Math.max(...points.map((p) => p.trustByLead.idleWhileWaiting)),
      default: Math.max(...points.map((p) => p.idleWhileWaiting[DEFAULT_POLICY_ID] ?? 0)),
      static30: Math.max(...points.map((p) => p.idleWhileWaiting["static-30"] ?? 0)),
    },
  };
}

/** Promises made over some points, and the share of them that ended broken (0 when none was made). */
function promiseTotals(counts: readonly PromiseCounts[]): { made: number; brokenShare: number } {
  const made = counts.reduce((sum, c) => sum + c.made, 0);
  const broken = counts.reduce((sum, c) => sum + c.broken, 0);
  return { made, brokenShare: made > 0 ? broken / made : 0 };
}

/** A fleet's trust-by-lead variant in docs/burst-train.md: its table and what it says. */
function renderTrustByLead(
  points: BurstTrainPoint[],
  s: ReturnType<typeof trustByLeadSummary>,
  row: (p: BurstTrainPoint) => string,
  at: (m: { periodS: number; maxQueuedRequests: number }) => string,
): string[] {
  const h = String(VARIANT_HORIZON_S);
  const three = "default | trust-by-lead | static-30";
  const lines = [
    "### Trust by lead time",
    "",
    "A measured variant, not the default: `trust-by-lead` is the default with its promises' trust kept per lead time (ledger `trustBucketS` 4: buckets of 4 s, doubling), so a promise's outcome moves only the trust of promises made about as far ahead. " +
      "It was tried because on a spike train the default's near promises (made a few seconds ahead, landing in the next spike) break and drag its one trust down to its floor (`minTrust`), so it books its promises past the train on that share of the capacity and the fleet idles after the train while clients sleep. " +
      `On the same arrivals, seeds and queue bounds: served within ${h} s, the final served share, and the share of the fleet idle while refused clients waited, the default's, trust by lead's and static 30 s's:`,
    "",
    `| spike period | queue (drain s) | ${h} s: ${three} | served: ${three} | idle while waiting: ${three} |`,
    `| --- | --- | ${Array(9).fill("---").join(" | ")} |`,
  ];
  for (const p of points) {
    const cells = [
      [p.servedWithinS[DEFAULT_POLICY_ID]?.[h], p.trustByLead.servedWithinS[h], p.servedWithinS["static-30"]?.[h]],
      [p.served[DEFAULT_POLICY_ID], p.trustByLead.served, p.served["static-30"]],
      [p.idleWhileWaiting[DEFAULT_POLICY_ID], p.trustByLead.idleWhileWaiting, p.idleWhileWaiting["static-30"]],
    ];
    lines.push(`| ${row(p)} | ${cells.flat().map(pct).join(" | ")} |`);
  }
  const worst = (w: { periodS: number; maxQueuedRequests: number; gap: number; bestOther: string }) =>
    `${pts(w.gap)} points (with ${at(w)}, against \`${w.bestOther}\`)`;
  const below =
    s.belowDefault.points > 0
      ? `it serves less than the default in the end at ${s.belowDefault.points} of ${s.points} points (at worst ${pts(s.belowDefault.furthest.gap)} points, with ${at(s.belowDefault.furthest)})`
      : `it serves less than the default in the end at none of the ${s.points} points`;
  lines.push(
    "",
    `What trust by lead says: within ${h} s it is within 2 points of static 30 s at ${s.within.trustByLead} of ${s.points} points, the default at ${s.within.default}; its final served share is more than a point behind the best policy other than the default (the served target's tolerance) at ${s.servedMisses.trustByLead} of ${s.points} points, the default's at ${s.servedMisses.default}, at worst ${worst(s.worstServed.trustByLead)}, the default's ${worst(s.worstServed.default)}; ${below}; it leaves at most ${pct(s.idleHighest.trustByLead)} of the fleet's slots idle while refused clients wait, the default ${pct(s.idleHighest.default)}, static 30 s ${pct(s.idleHighest.static30)}. Over the ${s.points} points it makes ${s.promises.trustByLead.made} promises, the default ${s.promises.default.made}, and ${pct(s.promises.trustByLead.brokenShare)} of them end broken, the default's ${pct(s.promises.default.brokenShare)}: each broken promise is a retry its client spent.`,
    "",
  );
  return lines;
}

/** A fleet in words: its replicas and slots, and the requests it serves. */
function fleetWords(f: BurstTrainFleetShape): string {
  const replicas = f.replicas
    .map((r) => `${r.count} ${r.count === 1 ? "replica" : "replicas"}${r.speed === 1 ? "" : ` at speed ${r.speed}`}`)
    .join(" and ");
  const length = (l: Scenario["requests"]["prompt"]) =>
    l.kind === "fixed" ? `fixed ${l.tokens}-token` : `log-normal (median ${l.median} tokens)`;
  return `${replicas} of ${f.maxOngoingRequests} slots and ${f.maxTotalTokens} tokens each, ${length(f.requests.prompt)} prompts and ${length(f.requests.output)} outputs`;
}

/** A fleet's section of docs/burst-train.md: its two tables and what they say. */
function renderFleet(report: BurstTrainReport, f: BurstTrainFleetShape): string[] {
  const points = fleetPoints(report, f.fleet);
  const period = (p: number) => (p === 0 ? `none (steady ${TRAIN_LOAD}x)` : `${p} s`);
  const queue = (p: BurstTrainPoint) => `${p.maxQueuedRequests} (${p.queueDrainS.toFixed(1)})`;
  const lines = [
    `## The ${fleetName(f.fleet)}: ${fleetWords(f)}`,
    "",
    `Capacity ${f.capacityRps.toFixed(2)} requests/s; queue bounds ${points
      .filter((p) => p.periodS === points[0]?.periodS)
      .map((p) => p.maxQueuedRequests)
      .join(", ")}.`,
    "",
    `Final served share; the last column is the default's less the best other policy's (the served target asks for at least ${pts(-TARGET_TOLERANCE.served)}):`,
    "",
    "| spike period | queue (drain s) | default | static-30 | best other (policy) | default - best other |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const p of points) {
    const best = bestOther(p.served);
    const mine = p.served[DEFAULT_POLICY_ID] ?? 0;
    lines.push(
      `| ${period(p.periodS)} | ${queue(p)} | ${pct(mine)} | ${pct(p.served["static-30"])} | ${pct(best.value)} (${best.id}) | ${pts(servedGap(p))} |`,
    );
  }
  lines.push(
    "",
    `The completion curve (the share of offered requests served within ${CURVE_HORIZONS_S.join(" and ")} s of their first attempt), the default's beside the best other policy's at that horizon, and the share of the fleet's slot-seconds left idle while a refused client slept (\`idleWhileWaitingFraction\`), the default's and static 30 s's:`,
    "",
    `| spike period | queue (drain s) | ${CURVE_HORIZONS_S.map((h) => `${h} s: default | ${h} s: best other (policy)`).join(" | ")} | idle while waiting: default | static-30 |`,
    `| --- | --- | ${CURVE_HORIZONS_S.map(() => "--- | ---").join(" | ")} | --- | --- |`,
  );
  for (const p of points) {
    const cells = CURVE_HORIZONS_S.map((h) => {
      const curve = curveAt(p, h);
      const best = bestOther(curve);
      return `${pct(curve[DEFAULT_POLICY_ID])} | ${pct(best.value)} (${best.id})`;
    }).join(" | ");
    lines.push(
      `| ${period(p.periodS)} | ${queue(p)} | ${cells} | ${pct(p.idleWhileWaiting[DEFAULT_POLICY_ID])} | ${pct(p.idleWhileWaiting["static-30"])} |`,
    );
  }
  const s = burstTrainSummary(report, f.fleet);
  const at = (m: { periodS: number; maxQueuedRequests: number }) =>
    `${m.periodS === 0 ? `the steady ${TRAIN_LOAD}x` : `spikes every ${m.periodS} s`} and a queue of ${m.maxQueuedRequests}`;
  const served =
    s.servedMisses.length > 0
      ? `the default's final served share is more than a point below the best other policy's at ${s.servedMisses.length} of ${s.points} points (${s.servedMisses.map(at).join("; ")}), ${s.spikeServedMisses} of them with spikes (of ${s.spikePoints}); its widest loss is ${pts(s.widest.gap)} points, with ${at(s.widest)}, to \`${s.widest.bestOther}\``
      : `the default's final served share is within a point of the best other policy's at all ${s.points} points (its widest gap ${pts(s.widest.gap)} points, with ${at(s.widest)}, to \`${s.widest.bestOther}\`)`;
  const curve = CURVE_HORIZONS_S.map((h) => {
    const misses = s.curveMisses[String(h)] ?? [];
    const worst = s.worstCurve[String(h)] as (typeof s.worstCurve)[string];
    const split = s.spikeVsSteady[String(h)] as (typeof s.spikeVsSteady)[string];
    return `within ${h} s it is more than 2 points behind the best other policy at ${misses.length} of ${s.points} points (worst ${pts(worst.gap)}, with ${at(worst)}, behind \`${worst.bestOther}\`; the worst with spikes ${pts(split.spikes)}, steady ${pts(split.steady)})`;
  }).join("; ");
  const idle = `it leaves ${pct(s.idleDefault.lowest)} to ${pct(s.idleDefault.highest)} of the fleet's slots idle while refused clients wait, static 30 s ${pct(s.idleStatic30.lowest)} to ${pct(s.idleStatic30.highest)}, and more than static 30 s at ${s.idleDefaultAbove} of ${s.points} points`;
  lines.push("", `What it says: ${served}; ${curve}; ${idle}.`, "");
  const row = (p: BurstTrainPoint) => `${period(p.periodS)} | ${queue(p)}`;
  lines.push(...renderClairvoyant(points, clairvoyantSummary(report, f.fleet), row, at));
  lines.push(...renderTrustByLead(points, trustByLeadSummary(report, f.fleet), row, at));
  return lines;
}

/** The doc's last table: each fleet's figures from its "What it says", side by side. */
function compareFleets(report: BurstTrainReport): string[] {
  if (report.fleets.length < 2) return [];
  const all = report.fleets.map((f) => burstTrainSummary(report, f.fleet));
  const row = (what: string, figure: (s: ReturnType<typeof burstTrainSummary>) => string) =>
    `| ${what} | ${all.map(figure).join(" | ")} |`;
  return [
    "## The fleets side by side",
    "",
    'The default against the best other policy at each point, from each fleet\'s "What it says":',
    "",
    `| | ${report.fleets.map((f) => fleetName(f.fleet)).join(" | ")} |`,
    `| --- | ${report.fleets.map(() => "---").join(" | ")} |`,
    row(
      "final served share: points more than 1 behind (widest gap)",
      (s) => `${s.servedMisses.length} of ${s.points} (${pts(s.widest.gap)})`,
    ),
    ...CURVE_HORIZONS_S.map((h) =>
      row(
        `within ${h} s: points more than 2 behind (worst gap)`,
        (s) =>
          `${(s.curveMisses[String(h)] ?? []).length} of ${s.points} (${pts((s.worstCurve[String(h)] as (typeof s.worstCurve)[string]).gap)})`,
      ),
    ),
    row(
      "idle while waiting, highest: default / static-30",
      (s) => `${pct(s.idleDefault.highest)} / ${pct(s.idleStatic30.highest)}`,
    ),
    "",
  ];
}

/**
 * docs/burst-train.md from the report: for each fleet, per spike period and queue bound, the default's final served
 * share beside static 30 s's and the best other policy's; its completion curve at 30 and 60 s beside the best other
 * policy's there, and the fleet idle while refused clients waited; and what it says; then the default with its fresh
 * arrivals known in advance (a counterfactual) beside the default and static 30 s, within 60 s and idle; then the
 * default's variant `trust-by-lead` beside them, within 60 s, served in the end and idle.
 *
 * @example
 * ```ts
 * writeFileSync("docs/burst-train.md", renderBurstTrain(report));
 * ```
 */
export function renderBurstTrain(report: BurstTrainReport): string {
  const spikeLoads = report.trains
    .filter((t) => t.periodS > 0)
    .map((t) => `${t.periodS} s: ${t.spikes} spikes at ${t.spikeLoads.map((l) => `${l}x`).join(" and ")}`)
    .join("; ");
  const fleets = report.fleets
    .map(
      (f) =>
        `${f.fleet === "small" ? "a small one" : `\`${f.fleet}\`'s own`} (${fleetWords(f)}; ${f.capacityRps.toFixed(2)} requests/s)`,
    )
    .join(" and ");
  const lines = [
    "# The overload as a train of short spikes",
    "",
    `Generated by \`${report.generatedBy}\`; the data is \`docs/burst-train.json\`.`,
    "",
    `The bursts of \`docs/evaluation.md\` are one block above capacity. Here \`${report.scenario}\`'s burst is replaced by a train of spikes: its ${report.leadIn.durationS} s lead-in at ${report.leadIn.load}x, then ${TRAIN_S} s whose mean load is ${TRAIN_LOAD}x, the excess arriving as a spike of ${SPIKE_S} s at the start of every period P (load ${report.leadIn.load} + (${TRAIN_LOAD} - ${report.leadIn.load}) x P / ${SPIKE_S}), the rest of each period at ${report.leadIn.load}x; then the scenario's own ${report.after.durationS} s at ${report.after.load}x and ${report.tailS} s of tail. A period that does not divide ${TRAIN_S} s ends the train with a shorter period whose spike is scaled to it, so every period averages ${TRAIN_LOAD}x (${spikeLoads}). The row without spikes is the same ${TRAIN_S} s at a steady ${TRAIN_LOAD}x. The trains run on ${report.fleets.length} fleets: ${fleets}; loads are multiples of each fleet's measured capacity. Each runs at the queue-bound sweep's queue bounds at that capacity (a full queue drains in about the seconds shown), the router and the clients unchanged, every policy on the same arrivals (seeds ${report.seeds.join(", ")}, pooled).`,
    "",
  ];
  for (const f of report.fleets) lines.push(...renderFleet(report, f));
  lines.push(...compareFleets(report));
  return lines.join("\n");
}
