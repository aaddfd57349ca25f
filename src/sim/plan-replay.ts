import type { SubmitOptions } from "../core/router-core";
import type { AcquireResult } from "../core/router-driver";
import type { PlannedStart } from "./curve-bound";
import type { EventLoop } from "./event-loop";
import { COMPLETION_HORIZONS_S, type CompletionCurve } from "./metrics";
import { pct, marginPts as pts } from "./report-format";
import type { SimRouterPort, SimRouterSetting } from "./simulation";
import { TARGET_TOLERANCE, withinTolerance } from "./targets";

/** The longest hint the planned router gives (the oracle's and the bounds' longest: `ORACLE_MAX_HINT_S`). */
const MAX_HINT_S = 120;

interface Waiting {
  ticket: string;
  plannedMs: number;
  respond: (result: AcquireResult) => void;
}

/**
 * A router that follows a bound's schedule (`jointCurveBound` with `plans`) in the simulator, as one that knew it
 * in advance would: an attempt whose planned start is within the queue's timeout waits in the queue for it (a
 * request planned from the queue on its first attempt, or a retry back in time); one planned later is refused
 * with the planned start as its hint (whole seconds, as `Retry-After` carries them); one the schedule does not
 * serve is refused with the longest hint. Waiting requests are placed on the replica with the most free slots
 * in the order of their planned starts whenever a slot is free, before their planned start if need be - so the
 * schedule meets the real fleet, its batches and its clients (their round trips, whole-second hints, backoff
 * and no-shows). One router for every
 * shard: the schedule is the whole fleet's. Simulator only: no router knows the arrivals in advance.
 *
 * @example
 * ```ts
 * const plan = new Map([[7, { startS: 61, fromQueue: false }]]); // request 7: refused, back at 61 s
 * runSimulation(scenario, policy, workload, (setting) => [new PlannedRouter(setting, plan, 30)]);
 * ```
 */
export class PlannedRouter implements SimRouterPort {
  private readonly waiting: Waiting[] = [];
  private readonly placed = new Map<string, string>();
  private readonly running = new Map<string, number>();
  private readonly loop: EventLoop;

  /**
   * @param plan By request id (the fingerprint's `req-<id>`): when the schedule starts it.
   * @param queueTimeoutS The queue's timeout: a request that waited this long is refused again.
   */
  constructor(
    private readonly setting: SimRouterSetting,
    private readonly plan: ReadonlyMap<number, PlannedStart>,
    private readonly queueTimeoutS: number,
  ) {
    this.loop = setting.loop;
    for (const replica of setting.replicas) this.running.set(replica, 0);
  }

  acquire(ticket: string, options: SubmitOptions, respond: (result: AcquireResult) => void): void {
    const id = Number(options.fingerprint?.replace(/^req-/, ""));
    const planned = this.plan.get(id);
    const now = this.loop.now();
    if (!planned) {
      respond(refusal(MAX_HINT_S));
      return;
    }
    const startMs = planned.startS * 1000;
    // Whole-second hints and round trips bring a retry back up to a second or two late: wait only for what the
    // queue's timeout allows with that margin.
    if (startMs - now > (this.queueTimeoutS - 2) * 1000) {
      // A hint past the client's horizon is not honoured: it comes back at its horizon, to be told the rest.
      respond(refusal(Math.min((startMs - now) / 1000, options.clientHorizonS ?? MAX_HINT_S)));
      return;
    }
    const entry: Waiting = { ticket, plannedMs: startMs, respond };
    this.waiting.push(entry);
    this.loop.after(this.queueTimeoutS * 1000, () => {
      const at = this.waiting.indexOf(entry);
      if (at < 0) return;
      this.waiting.splice(at, 1);
      respond(refusal(1));
    });
    this.dispatch();
  }

  release(ticket: string): void {
    const replica = this.placed.get(ticket);
    if (replica === undefined) return;
    this.placed.delete(ticket);
    this.running.set(replica, (this.running.get(replica) ?? 1) - 1);
    this.loop.after(0, () => this.dispatch());
  }

  /** A restart loses nothing here: the schedule is known in advance. */
  restart(): void {}

  /** Places the waiting requests, earliest planned first, while a slot is free. */
  private dispatch(): void {
    for (;;) {
      let next = -1;
      // Work-conserving: a free slot takes the waiting request planned soonest, even before its planned start
      // (sooner never serves a request later; idling the slot would leave the fleet behind the schedule).
      this.waiting.forEach((w, i) => {
        if (next < 0 || w.plannedMs < (this.waiting[next] as Waiting).plannedMs) next = i;
      });
      if (next < 0) return;
      let replica: string | undefined;
      let free = 0;
      for (const name of this.setting.replicas) {
        const slots = this.setting.lost.has(name) ? 0 : this.setting.maxOngoing - (this.running.get(name) ?? 0);
        if (slots > free) [replica, free] = [name, slots];
      }
      if (replica === undefined) return;
      const [entry] = this.waiting.splice(next, 1) as [Waiting];
      this.running.set(replica, (this.running.get(replica) ?? 0) + 1);
      this.placed.set(entry.ticket, replica);
      entry.respond({ kind: "admitted", replica });
    }
  }
}

/** A 429 with a whole-second hint within [1, MAX_HINT_S]. */
function refusal(hintS: number): AcquireResult {
  const seconds = Math.max(1, Math.min(MAX_HINT_S, Math.ceil(hintS)));
  return {
    kind: "rejected",
    status: 429,
    reason: "queue_full",
    message: "the schedule starts this request later",
    rung: "computed",
    retryAfterS: seconds,
    retryAfterMs: seconds * 1000,
  };
}

/**
 * How a replayed schedule was planned: the queue-aware bound as it is, with a planning margin, or re-planned against
 * its own replays.
 */
export interface ReplaySetting {
  /** A short name for the report. */
  name: string;
  /** Seconds added to every request's least completion (room for the real fleet's batches and late retries). */
  marginS: number;
  /** The start budget's depth (starts the fleet may make at once); `undefined`: the fleet's slots, as the bound. */
  depth?: number;
  /**
   * Plans made in all, each after the first with every request's completion time as the replay of the one before
   * showed it (`replannedCompletionS`); the row reports the last. `undefined`: one plan.
   */
  plans?: number;
}

/**
 * Each request's completion time for the next plan of a re-planned schedule: for a request the last replay served,
 * the time from its planned start to its client holding the answer as that replay showed it (the real fleet's
 * batches, whole-second hints and late retries included), never below its least time; for the others, the time the
 * last plan used. Not a bound any more: a request's time in the replay depends on the plan around it.
 *
 * @param leastS The bound's least completion times (alone on the fastest replica).
 * @param previousS The times the last plan used.
 * @param planned The last plan's starts (`undefined`: not served by it).
 * @param completedAtS When the replay's client held each request's answer (`undefined`: never).
 *
 * @example
 * ```ts
 * replannedCompletionS([2, 2], [2, 2], [{ startS: 10, fromQueue: true }, undefined], [16.5, undefined]); // [6.5, 2]
 * ```
 */
export function replannedCompletionS(
  leastS: readonly number[],
  previousS: readonly number[],
  planned: readonly (PlannedStart | undefined)[],
  completedAtS: readonly (number | undefined)[],
): number[] {
  return leastS.map((least, i) => {
    const start = planned[i]?.startS;
    const done = completedAtS[i];
    if (start === undefined || done === undefined) return previousS[i] ?? least;
    return Math.max(least, done - start);
  });
}

/** One scenario's schedule under one setting, planned and replayed (`npm run eval:plan-replay`). */
export interface PlanReplayRow {
  scenario: string;
  setting: ReplaySetting;
  /** The curve target: the best other policy at each horizon (docs/evaluation.json). */
  target: CompletionCurve;
  /** The planning program's margin and its schedule's curve, under its own model (a bound only with margin 0). */
  planMargin: number;
  planCurve: CompletionCurve;
  /** The schedule replayed in the simulator by `PlannedRouter`: its curve, attempts and final served share. */
  replayed: { curve: CompletionCurve; attemptsPerOffered: number; servedFraction: number };
  /** Re-planned (`ReplaySetting.plans`): every plan's margin under its own model and its replay's curve, in order. */
  passes?: Array<{ planMargin: number; replayedCurve: CompletionCurve }>;
  /** The default policy's curve and attempts (docs/evaluation.json). */
  defaultCurve: CompletionCurve;
  defaultAttempts: number;
  /** Static 30 s's attempts: the attempts target and the plan's attempts bound. */
  staticThirtyAttempts: number;
}

/** docs/plan-replay.json. */
export interface PlanReplayReport {
  generatedBy: string;
  from: string;
  rows: PlanReplayRow[];
}

/**
 * Whether a row replays the queue-aware bound's own schedule: no margin, the bound's depth, one plan.
 *
 * @example
 * ```ts
 * report.rows.filter(isAsBounded); // one row per scenario: the bound's schedule as it is
 * ```
 */
export function isAsBounded(row: PlanReplayRow): boolean {
  return row.setting.marginS === 0 && row.setting.depth === undefined && row.setting.plans === undefined;
}

/** The gap of a curve to a target at one horizon. */
const gapAt = (curve: CompletionCurve, target: CompletionCurve, h: number) =>
  (curve[String(h)] ?? 0) - (target[String(h)] ?? 0);

/** The re-planned rows' paragraph of docs/plan-replay.md (empty without such rows). */
function replannedProse(report: PlanReplayReport): string[] {
  const rows = report.rows.filter((r) => r.setting.plans !== undefined);
  const first = rows[0];
  if (!first) return [];
  const tolerance = TARGET_TOLERANCE.curve;
  const worst = rows.map((r) => {
    const w = worstGap(r.replayed.curve, r.target);
    return `${pts(w.gap)} (${w.horizonS} s) in \`${r.scenario}\``;
  });
  // The horizons where the default misses by more than the tolerance, and those of them the re-planned replay meets.
  const missed = rows.flatMap((r) =>
    COMPLETION_HORIZONS_S.filter((h) => gapAt(r.defaultCurve, r.target, h) < -tolerance).map((h) => ({ r, h })),
  );
  const reached = missed.filter(({ r, h }) => gapAt(r.replayed.curve, r.target, h) >= -tolerance);
  const short = COMPLETION_HORIZONS_S[0];
  const behindShort = rows.filter(
    (r) => gapAt(r.replayed.curve, r.target, short) < gapAt(r.defaultCurve, r.target, short),
  );
  // Where the last plan itself, with the replayed completion times, falls short at the shortest horizon.
  const unplannable = rows.filter((r) => gapAt(r.planCurve, r.target, short) < -tolerance);
  const scenarios = [...new Set(report.rows.map((r) => r.scenario))];
  const meets = (c: CompletionCurve, t: CompletionCurve) => worstGap(c, t).gap >= -tolerance;
  const unmet = scenarios.filter(
    (name) =>
      !report.rows.some(
        (r) => r.scenario === name && (meets(r.replayed.curve, r.target) || meets(r.defaultCurve, r.target)),
      ),
  );
  return [
    `Re-planned: ${first.setting.plans} plans in all, each after the first made with every request's completion time as the replay before it showed it (from its planned start to its client holding the answer, the fleet's batches, whole-second hints and late retries included; never below its least time), so that the plan meets the fleet it will be replayed on; the row reports the last plan, no longer a bound. Its replay's worst gap: ${worst.join(", ")}. At the ${missed.length} horizons where the default misses the target by more than 2 points in these scenarios, it is within them at ${reached.length}${reached.length > 0 ? ` (${reached.map(({ r, h }) => `\`${r.scenario}\` ${h} s`).join(", ")})` : ""}; at ${short} s it is further behind than the default in ${behindShort.length} of ${rows.length} scenarios${behindShort.length > 0 ? ` (${behindShort.map((r) => `\`${r.scenario}\` ${pts(gapAt(r.replayed.curve, r.target, short))} against ${pts(gapAt(r.defaultCurve, r.target, short))}`).join(", ")})` : ""}.${unplannable.length > 0 ? ` The last program itself, given those completion times, plans ${unplannable.map((r) => `${pct(r.planCurve[String(short)])} within ${short} s in \`${r.scenario}\` (the best other policy: ${pct(r.target[String(short)])})`).join(" and ")}: with the completion times its replays met, the shortest horizon is out of reach of the plan itself, not only of its replay.` : ""} ${unmet.length > 0 ? `In ${unmet.map((n) => `\`${n}\``).join(" and ")}, no schedule on this page - planned with foresight, replayed, re-planned, or the default's own - is within 2 points of the best other policy at every horizon at once.` : "Every scenario here has a schedule on this page within 2 points of the best other policy at every horizon."}`,
    "",
  ];
}

/** A curve's worst gap to a target over the completion horizons, and where. */
export function worstGap(curve: CompletionCurve, target: CompletionCurve): { gap: number; horizonS: number } {
  return COMPLETION_HORIZONS_S.map((h) => ({ gap: gapAt(curve, target, h), horizonS: h })).reduce((a, b) =>
    b.gap < a.gap ? b : a,
  );
}

/**
 * docs/plan-replay.md from its JSON: every figure in it is read from the report (a test renders the committed JSON
 * and compares).
 *
 * @example
 * ```ts
 * writeFileSync("docs/plan-replay.md", renderPlanReplay(report));
 * ```
 */
export function renderPlanReplay(report: PlanReplayReport): string {
  const curve = (c: CompletionCurve) => COMPLETION_HORIZONS_S.map((h) => pct(c[String(h)])).join(" / ");
  const gapText = (c: CompletionCurve, t: CompletionCurve) => {
    const w = worstGap(c, t);
    return `${pts(w.gap)} (${w.horizonS} s)`;
  };
  const rows = report.rows.map(
    (r) =>
      `| ${r.scenario} | ${r.setting.name} | ${curve(r.target)} | ${curve(r.planCurve)} (${pts(r.planMargin)}) | ${curve(r.replayed.curve)} | ${gapText(r.replayed.curve, r.target)} | ${r.replayed.attemptsPerOffered.toFixed(3)} / ${r.staticThirtyAttempts.toFixed(3)} | ${curve(r.defaultCurve)} | ${gapText(r.defaultCurve, r.target)} |`,
  );
  const bounded = report.rows.filter(isAsBounded);
  const below = bounded.filter(
    (r) => worstGap(r.replayed.curve, r.target).gap < worstGap(r.defaultCurve, r.target).gap,
  );
  const met = report.rows.filter((r) =>
    withinTolerance(worstGap(r.replayed.curve, r.target).gap, TARGET_TOLERANCE.curve),
  );
  const better = report.rows.filter((r) =>
    COMPLETION_HORIZONS_S.some(
      (h) =>
        withinTolerance((r.replayed.curve[String(h)] ?? 0) - (r.target[String(h)] ?? 0), TARGET_TOLERANCE.curve) &&
        !withinTolerance((r.defaultCurve[String(h)] ?? 0) - (r.target[String(h)] ?? 0), TARGET_TOLERANCE.curve),
    ),
  );
  return [
    "# Can a router that knows the bound's schedule follow it? The schedule replayed",
    "",
    `Generated by \`${report.generatedBy}\` from the targets and seeds of \`${report.from}\`; the data is \`docs/plan-replay.json\`.`,
    "",
    "The curve bounds (`docs/evaluation.md`, `docs/queue-bound.md`) find that one schedule could be within 2 points of the best other policy at every horizon in every scenario. They are relaxations: each request completes in its least time (alone on the fastest replica), the fleet starts requests from a budget as deep as its slots, starts are fractional. Here the queue-aware bound's schedule, request by request (`jointCurveBound` with `plans`, its fractional starts rounded), is handed to a router in the simulator that knows it in advance (`PlannedRouter`, `src/sim/plan-replay.ts`): a request waits in the queue for its planned start when that is within the queue's timeout, and is refused with the planned start as a whole-second hint when it is later; waiting requests are placed in the order of their planned starts. The fleet, its batches and the clients are the simulator's, as for every policy. A setting with a planning margin plans every request's completion that many seconds later than its least time and with a shallower start budget: the schedule then leaves room for the real fleet's batches and late retries, and is no longer a bound. The re-planned setting plans again, several times, with the completion times its own replay showed (below).",
    "",
    "Completion curves (share of offered requests served within 5 / 15 / 30 / 60 / 120 s, 3 seeds pooled); the worst gap is to the best other policy at each horizon (the target asks for at least -2.0):",
    "",
    "| scenario | schedule | best other policy | planned (program's margin) | replayed | replayed: worst gap | replayed attempts / static 30 s | default | default: worst gap |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `What it says: replayed, the bound's own schedule is further from the target than the default in ${below.length} of ${bounded.length} scenarios: it plans starts at the fleet's full rate and against the horizons' edges with each request's least service time, and the simulator's fleet, whose full batches serve each request more slowly, falls behind it, so that requests planned just inside a horizon finish just outside it. Replayed schedules meet the curve target in ${met.length} of ${report.rows.length} rows${met.length > 0 ? ` (${met.map((r) => `\`${r.scenario}\`, ${r.setting.name}, worst gap ${pts(worstGap(r.replayed.curve, r.target).gap)}, ${r.replayed.attemptsPerOffered.toFixed(3)} attempts per offered request against static 30 s's ${r.staticThirtyAttempts.toFixed(3)}`).join("; ")})` : ""}. At some horizon where the default misses the target by more than 2 points, the replayed schedule is within them in ${better.length} of ${report.rows.length} rows: what a planned schedule wins there is what a better policy could aim at, and what it loses elsewhere is what the bounds do not see.`,
    "",
    ...replannedProse(report),
  ].join("\n");
}
