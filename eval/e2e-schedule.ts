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
