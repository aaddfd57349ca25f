import { DEFAULT_POLICY_ID } from "./policies";
import { pct, pts } from "./report-format";
import type { Scenario } from "./scenario";
import { TARGET_TOLERANCE, withinTolerance } from "./targets";

/**
 * The `waves` scenario with another period: its lead-in kept, every later phase (each wave and each trough) `halfS`
 * long instead of its own length. Loads and everything else stay, so the mean offered load is the same; with the
 * scenario's own half-period the scenario comes back unchanged.
 *
 * Why: in the queue-bound sweep, static 30 s serves more than the default in `waves` at the shortest queues. Its
 * waves last 30 s and so do its troughs, so a request refused in a wave and told 30 s comes back in the next trough,
 * where there is room: the scenario's period may be what static 30 s wins on.
 *
 * @example
 * ```ts
 * const waves = readScenario("waves"); // 30 s at 0.5x, then 30 s at 2x and 30 s at 0.3x, five times
 * wavesWithHalfPeriod(waves, 20).phases.slice(0, 3); // [{ durationS: 30, load: 0.5 }, { durationS: 20, load: 2 }, { durationS: 20, load: 0.3 }]
 * wavesWithHalfPeriod(waves, 0); // throws: a half-period must be a positive number of seconds
 * ```
 */
export function wavesWithHalfPeriod(waves: Scenario, halfS: number): Scenario {
  if (!(halfS > 0) || !Number.isFinite(halfS))
    throw new Error(`a half-period must be a positive number of seconds, not ${halfS}`);
  const [leadIn, ...rest] = waves.phases;
  // Waves: after the lead-in, two loads in turn, each phase as long as the others, at least two waves of them.
  const loads = new Set(rest.map((p) => p.load));
  const alternating = rest.every((p, i) => i === 0 || p.load !== rest[i - 1]?.load);
  const even = rest.every((p) => p.durationS === rest[0]?.durationS);
  if (!leadIn || rest.length < 4 || loads.size !== 2 || !alternating || !even)
    throw new Error(
      `${waves.name}: not a scenario of waves (a lead-in, then two loads in turn, in phases of one length)`,
    );
  return { ...waves, phases: [leadIn, ...rest.map((p) => ({ ...p, durationS: halfS }))] };
}

/** One point: a wave half-period and a queue bound, every policy's final served share (3 seeds pooled). */
export interface WavePeriodPoint {
  halfPeriodS: number;
  maxQueuedRequests: number;
  /** A full queue's drain time at capacity, seconds (the queue-bound sweep's setting). */
  queueDrainS: number;
  /** Final served share per policy id. */
  served: Record<string, number>;
}

/** What `npm run eval:wave-period` writes to docs/wave-period.json. */
export interface WavePeriodReport {
  generatedBy: string;
  scenario: string;
  seeds: number[];
  /** The scenario's own half-period, seconds (the queue-bound sweep's). */
  ownHalfPeriodS: number;
  points: WavePeriodPoint[];
}

/**
 * The best policy other than the default at a point, by final served share (the served target's reference).
 *
 * @example
 * ```ts
 * bestOtherServed({ ...point, served: { booked_capacity: 0.9, "static-30": 0.92, "static-5": 0.8 } }); // { id: "static-30", served: 0.92 }
 * ```
 */
export function bestOtherServed(point: WavePeriodPoint): { id: string; served: number } {
  let best = { id: "", served: Number.NEGATIVE_INFINITY };
  for (const [id, served] of Object.entries(point.served))
    if (id !== DEFAULT_POLICY_ID && served > best.served) best = { id, served };
  return best;
}

/**
 * The points where the default misses the served target (more than a point below the best other policy).
 *
 * @example
 * ```ts
 * servedMisses(report).map((p) => `${p.halfPeriodS}/${p.maxQueuedRequests}`); // e.g. ["30/9", "30/17"]
 * ```
 */
export function servedMisses(report: WavePeriodReport): WavePeriodPoint[] {
  return report.points.filter((p) => !withinTolerance(servedGap(p), TARGET_TOLERANCE.served));
}

/** The default's final served share less the best other policy's at a point. */
function servedGap(p: WavePeriodPoint): number {
  return (p.served[DEFAULT_POLICY_ID] ?? 0) - bestOtherServed(p).served;
}

/**
 * At the report's two shortest queues, the half-periods where static 30 s is the best other policy and the default
 * misses the served target at both (`staticLeads`), and those where the default serves at least as much as every
 * other policy at both (`defaultLeads`).
 *
 * @example
 * ```ts
 * shortQueueLeads(report); // e.g. { shortest: [9, 17], staticLeads: [25, 30, 35, 40], defaultLeads: [15, 20, 45] }
 * ```
 */
export function shortQueueLeads(report: WavePeriodReport): {
  shortest: number[];
  staticLeads: number[];
  defaultLeads: number[];
} {
  const halves = [...new Set(report.points.map((p) => p.halfPeriodS))];
  const shortest = [...new Set(report.points.map((p) => p.maxQueuedRequests))].sort((a, b) => a - b).slice(0, 2);
  const atShortest = (h: number) =>
    report.points.filter((p) => p.halfPeriodS === h && shortest.includes(p.maxQueuedRequests));
  return {
    shortest,
    staticLeads: halves.filter((h) =>
      atShortest(h).every(
        (p) => bestOtherServed(p).id === "static-30" && !withinTolerance(servedGap(p), TARGET_TOLERANCE.served),
      ),
    ),
    defaultLeads: halves.filter((h) => atShortest(h).every((p) => servedGap(p) >= 0)),
  };
}

/**
 * docs/wave-period.md from the report: per half-period and queue bound, the default's final served share beside
 * static 30 s's and the best other policy's, and what it says.
 *
 * @example
 * ```ts
 * writeFileSync("docs/wave-period.md", renderWavePeriod(report));
 * ```
 */
export function renderWavePeriod(report: WavePeriodReport): string {
  const own = report.ownHalfPeriodS;
  const halves = [...new Set(report.points.map((p) => p.halfPeriodS))];
  const lines = [
    "# Is static 30 s's lead in `waves` the waves' period?",
    "",
    `Generated by \`${report.generatedBy}\`; the data is \`docs/wave-period.json\`.`,
    "",
    `In the queue-bound sweep (\`docs/evaluation.md\`, "Queue bounds as operators set them"), the default's final served share is more than a point below the best other policy's only in \`${report.scenario}\`, at its shortest queues, and the best there is static 30 s. \`${report.scenario}\` alternates ${own} s at 2x with ${own} s at 0.3x, so a request refused in a wave and told to come back in 30 s comes back in the next trough, where there is room. Here the same scenario runs with other half-periods (each wave and each trough that long; the lead-in, the loads, the fleet and the clients unchanged, seeds ${report.seeds.join(", ")}), at the sweep's queue bounds, every policy on the same arrivals. The ${own} s rows are the sweep's own figures.`,
    "",
    "Final served share, 3 seeds pooled; the last column is the default's less the best other policy's (the served target asks for at least -1.0):",
    "",
    "| half-period | queue (drain s) | default | static-30 | best other (policy) | default - best other |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const p of report.points) {
    const best = bestOtherServed(p);
    const mine = p.served[DEFAULT_POLICY_ID] ?? 0;
    const half = p.halfPeriodS === own ? `**${p.halfPeriodS} s**` : `${p.halfPeriodS} s`;
    lines.push(
      `| ${half} | ${p.maxQueuedRequests} (${p.queueDrainS.toFixed(1)}) | ${pct(mine)} | ${pct(p.served["static-30"])} | ${pct(best.served)} (${best.id}) | ${pts(mine - best.served)} |`,
    );
  }
  const misses = servedMisses(report);
  const { shortest, staticLeads, defaultLeads } = shortQueueLeads(report);
  const list = (hs: number[]) => (hs.length > 0 ? hs.map((h) => `${h} s`).join(", ") : "none");
  const perHalf = halves
    .map((h) => {
      const ps = report.points.filter((p) => p.halfPeriodS === h);
      const worst = Math.min(...ps.map(servedGap));
      return `${h} s: ${ps.filter((p) => misses.includes(p)).length} (worst ${pts(worst)})`;
    })
    .join("; ");
  // Read only what the points show: the period matters when each side leads at some half-period.
  const reading =
    staticLeads.length > 0 && defaultLeads.length > 0
      ? " So static 30 s's lead in the sweep depends on the waves' period: where a wave and a trough last about as long as its hint, a request refused in a wave and sent back 30 s later lands in the next trough, and static 30 s serves more at the shortest queues; where they are shorter or longer, the default serves more. The default's forecast reads recent arrival rates, not a period, so its hints do not aim at the next trough."
      : staticLeads.length > 0
        ? " So static 30 s serves more than the default at the shortest queues whatever the waves' period here."
        : " So static 30 s's lead is the sweep's own period's: at no other half-period here does it serve more than a point more at both shortest queues.";
  lines.push(
    "",
    `What it says: the default misses the served target at ${misses.length} of ${report.points.length} points; per half-period, the points missed and the default's worst gap: ${perHalf}. At the two shortest queues (${shortest.join(" and ")}), static 30 s serves more than a point more than the default (and is the best other policy) at half-periods of ${list(staticLeads)}; the default serves at least as much as every other policy at ${list(defaultLeads)}.${reading}`,
    "",
  );
  return lines.join("\n");
}
