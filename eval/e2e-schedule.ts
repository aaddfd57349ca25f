import { UsageError } from "../scripts/command-line";
import { seededRandom } from "../src/engine/rng";

/** One load phase of the end-to-end run: `load` times the fleet's capacity for `durationS` seconds. */
export interface E2ePhase {
  durationS: number;
  load: number;
}

/**
 * The end-to-end runs' load (`npm run eval:e2e`): 0.5x for 10 s, a 3x burst for 10 s, 0.5x for 20 s. The simulator's
 * twin of those runs (`npm run eval:e2e-twin`) replays the same phases.
 *
 * @example
 * ```ts
 * E2E_PHASES.reduce((s, p) => s + p.durationS, 0); // 40
 * ```
 */
export const E2E_PHASES: readonly E2ePhase[] = [
  { durationS: 10, load: 0.5 },
  { durationS: 10, load: 3 },
  { durationS: 20, load: 0.5 },
];

/**
 * Seconds of the end-to-end schedule during which the fleet is saturated whatever the policy: from 2 s into the 3x
 * burst (the queue has filled) to 2 s after it (the queue it left still drains). Answers in it measure the fleet's pace.
 *
 * @example
 * ```ts
 * const [fromS, toS] = E2E_SATURATED_WINDOW_S; // [12, 22]
 * ```
 */
export const E2E_SATURATED_WINDOW_S: readonly [number, number] = [12, 22];

/**
 * The spike train's shape (`E2E_SCHEDULES.spikes`): the overload of `docs/burst-train.md` shortened to the
 * end-to-end run's scale. Mean load over the train, the train's length, one spike's length and the spike period.
 */
const SPIKES_BASE_LOAD = 0.5;
const SPIKES_TRAIN_LOAD = 1.5;
const SPIKES_TRAIN_S = 30;
const SPIKE_S = 0.2;
const SPIKE_PERIOD_S = 3;

/**
 * 10 s at 0.5x, then {@link SPIKES_TRAIN_S} s whose mean load is 1.5x: a {@link SPIKE_S} s spike at the start of every
 * {@link SPIKE_PERIOD_S} s (load 0.5 + (1.5 - 0.5) x 3 / 0.2 = 15.5x, 10 spikes), 0.5x between spikes; then 20 s at
 * 0.5x. The same load over the overload as a steady 1.5x, all of its excess in the spikes.
 *
 * Why: the simulator's default (`booked_capacity`) loses to static 30 s when the overload comes as a train of short
 * spikes (docs/burst-train.md: the fleet clears each spike and sits idle while refused clients sleep on its hint);
 * the end-to-end run had only the one block burst of {@link E2E_PHASES}, so it could not check that on the real stack.
 *
 * @example
 * ```ts
 * E2E_SPIKE_PHASES.slice(0, 3); // [{ durationS: 10, load: 0.5 }, { durationS: 0.2, load: 15.5 }, { durationS: 2.8, load: 0.5 }]
 * E2E_SPIKE_PHASES.filter((p) => p.load > 1).length; // 10
 * ```
 */
export const E2E_SPIKE_PHASES: readonly E2ePhase[] = [
  { durationS: 10, load: SPIKES_BASE_LOAD },
  ...Array.from({ length: SPIKES_TRAIN_S / SPIKE_PERIOD_S }, () => [
    {
      durationS: SPIKE_S,
      load: SPIKES_BASE_LOAD + ((SPIKES_TRAIN_LOAD - SPIKES_BASE_LOAD) * SPIKE_PERIOD_S) / SPIKE_S,
    },
    { durationS: SPIKE_PERIOD_S - SPIKE_S, load: SPIKES_BASE_LOAD },
  ]).flat(),
  { durationS: 20, load: SPIKES_BASE_LOAD },
];

/** A named arrival schedule of the end-to-end run (`eval/e2e-openai.ts --schedule <name>`). */
export interface E2eSchedule {
  phases: readonly E2ePhase[];
  /**
   * The seconds during which the fleet is saturated whatever the policy, where answers per second measure its pace
   * (`saturatedRps`); absent where no such window exists.
   */
  saturatedWindowS?: readonly [number, number];
}

/**
 * The end-to-end run's arrival schedules by name. `burst` (the default, every run before `--schedule` existed):
 * {@link E2E_PHASES}, saturated in {@link E2E_SATURATED_WINDOW_S}. `spikes`: {@link E2E_SPIKE_PHASES}, without a
 * saturated window: between spikes the load is 0.5x, so whether the fleet stays busy depends on what the policy
 * queued or sent away, and answers there measure the policy, not the fleet's pace.
 *
 * @example
 * ```ts
 * Object.keys(E2E_SCHEDULES); // ["burst", "spikes"]
 * E2E_SCHEDULES.burst.phases === E2E_PHASES; // true
 * E2E_SCHEDULES.spikes.saturatedWindowS; // undefined
 * ```
 */
export const E2E_SCHEDULES: Readonly<Record<"burst" | "spikes", E2eSchedule>> = {
  burst: { phases: E2E_PHASES, saturatedWindowS: E2E_SATURATED_WINDOW_S },
  spikes: { phases: E2E_SPIKE_PHASES },
};

/** The name of one of {@link E2E_SCHEDULES}. */
export type E2eScheduleName = keyof typeof E2E_SCHEDULES;

/**
 * The `--schedule <name>` flag of `eval/e2e-openai.ts`: the name, `burst` without the flag.
 *
 * @throws UsageError (exit code 2) for a name that is none of {@link E2E_SCHEDULES}, listing those.
 * @example
 * ```ts
 * e2eScheduleFlag(undefined); // "burst"
 * e2eScheduleFlag("spikes"); // "spikes"
 * e2eScheduleFlag("spike"); // UsageError: --schedule: unknown schedule spike (known: burst, spikes)
 * ```
 */
export function e2eScheduleFlag(text: string | undefined): E2eScheduleName {
  if (text === undefined) return "burst";
  if (Object.hasOwn(E2E_SCHEDULES, text)) return text as E2eScheduleName;
  throw new UsageError(`--schedule: unknown schedule ${text} (known: ${Object.keys(E2E_SCHEDULES).join(", ")})`, 2);
}

/**
 * A schedule's length, seconds: the sum of its phases.
 *
 * @example
 * ```ts
 * scheduleSeconds(E2E_SCHEDULES.spikes.phases); // 60 (up to float rounding)
 * ```
 */
export function scheduleSeconds(phases: readonly E2ePhase[]): number {
  return phases.reduce((s, p) => s + p.durationS, 0);
}

/** One scheduled request: when it starts (seconds after the run's start) and whether its SDK headers are stripped. */
export interface E2eArrival {
  /** Its position in the schedule (0, 1, ...): with the policy and seed, it names the request. */
  index: number;
  atS: number;
  /** The proxy strips this request's `x-stainless-*` headers (a client without the SDK's retry header). */
  headerless: boolean;
}

/** What fixes a schedule: the same inputs give the same arrivals, so every policy sees the same load. */
export interface E2eScheduleInput {
  seed: number;
  phases: readonly E2ePhase[];
  capacityRps: number;
  /** Share of the requests whose SDK headers the proxy strips. */
  headerlessShare: number;
}

/**
 * The seeded arrival schedule of one end-to-end run: Poisson arrivals at `load x capacityRps` within each phase
 * (a phase's arrivals never spill into the next), each request header-less with probability `headerlessShare`.
 * Computed once per seed, before any client starts, and replayed for every policy.
 *
 * @example
 * ```ts
 * const arrivals = arrivalSchedule({ seed: 2026, phases: [{ durationS: 10, load: 3 }], capacityRps: 17,
 *   headerlessShare: 0.3 }); // about 510 arrivals, ascending atS, the same on every call
 * ```
 */
export function arrivalSchedule(input: E2eScheduleInput): E2eArrival[] {
  // One generator draws both the gaps and the header-less coin, in this order: the runs made before the clients
  // moved into their own processes used the same sequence, so seed 2026 still gives their arrivals.
  const random = seededRandom(input.seed);
  const arrivals: E2eArrival[] = [];
  let t = 0;
  let phaseStart = 0;
  for (const phase of input.phases) {
    const rate = phase.load * input.capacityRps;
    for (;;) {
      t += -Math.log(1 - random()) / rate;
      if (t >= phaseStart + phase.durationS) break;
      arrivals.push({ index: arrivals.length, atS: t, headerless: random() < input.headerlessShare });
    }
    phaseStart += phase.durationS;
    t = phaseStart;
  }
  return arrivals;
}

/**
 * Deals a schedule to `clients` client processes, round-robin in arrival order, so that each process carries an
 * even share of every phase (a burst is spread over all of them, not handed to one).
 *
 * @example
 * ```ts
 * dealArrivals(["a", "b", "c", "d", "e"], 2); // [["a", "c", "e"], ["b", "d"]]
 * ```
 */
export function dealArrivals<T>(arrivals: readonly T[], clients: number): T[][] {
  if (!Number.isInteger(clients) || clients < 1) throw new Error(`clients must be a positive integer, got ${clients}`);
  const hands: T[][] = Array.from({ length: clients }, () => []);
  arrivals.forEach((arrival, i) => {
    hands[i % clients]?.push(arrival);
  });
  return hands;
}
