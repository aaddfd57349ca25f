import type { Scenario } from "../src/sim/scenario";
import { generateWorkload, type WorkloadRequest } from "../src/sim/workload";
import { arrivalSchedule, E2E_PHASES, type E2eArrival, type E2ePhase, scheduleSeconds } from "./e2e-schedule";

/** The quiet spell before an end-to-end run: a trickle, as after a warm-up or a run's tail. */
export const QUIET_LEAD_IN: E2ePhase = { durationS: 40, load: 0.02 };

/**
 * The simulator's twins of the end-to-end run (`npm run eval:e2e`): demo-burst-3x's stack and clients under the
 * end-to-end phases (`phases`: one of `E2E_SCHEDULES`' schedules, the burst's without it), from a cold router and
 * after a quiet spell. `burstPhase` is the schedule's second phase: the burst, or the spike train's first spike. Used
 * by `npm run eval:e2e-twin` and, as a check on every candidate it keeps, by `npm run eval:tune`.
 *
 * @example
 * ```ts
 * e2eTwinScenarios(demo).map((t) => t.id); // ["cold", "after-quiet"]
 * e2eTwinScenarios(demo, E2E_SPIKE_PHASES)[0]?.scenario.phases.length; // 22
 * ```
 */
export function e2eTwinScenarios(
  demo: Scenario,
  phases: readonly E2ePhase[] = E2E_PHASES,
): { id: string; description: string; scenario: Scenario }[] {
  const twin = (twinPhases: readonly E2ePhase[], burstPhase: number): Scenario => ({
    ...demo,
    phases: [...twinPhases],
    burstPhase,
  });
  return [
    { id: "cold", description: "the end-to-end phases from a cold router", scenario: twin(phases, 1) },
    {
      id: "after-quiet",
      description: "the same after a quiet spell (40 s at 0.02x)",
      scenario: twin([QUIET_LEAD_IN, ...phases], 2),
    },
  ];
}

/**
 * The end-to-end run as its router lives it: one Durable Object serves all of a policy's seeds, one after another,
 * so whatever its ledger learnt in one burst (trust, show rate, baseline, the refusals it remembers) is there at the
 * next. `bursts` copies of the end-to-end phases on one router, a quiet spell of `quietS` between them (the previous
 * seed's tail and the pause), where each twin of {@link e2eTwinScenarios} starts anew.
 *
 * @example
 * ```ts
 * const chained = e2eChainedTwin(readScenario("demo-burst-3x"), 6, 60); // six bursts, 60 s at 0.02x between them
 * ```
 */
export function e2eChainedTwin(demo: Scenario, bursts: number, quietS: number): Scenario {
  const phases = Array.from({ length: bursts }, (_, i) => [
    ...(i > 0 ? [{ durationS: quietS, load: QUIET_LEAD_IN.load }] : []),
    ...E2E_PHASES,
  ]).flat();
  return { ...demo, phases, burstPhase: 1 };
}

/** Seconds of one end-to-end run's burst schedule (its phases). */
const E2E_RUN_S = scheduleSeconds(E2E_PHASES);

/**
 * A twin's workload that replays end-to-end runs' own arrivals: `schedules[i]` (`arrivalSchedule` of the run's seed
 * i, the instants its clients sent their first attempts) starting `startsS[i]` seconds into the twin, and, outside
 * those runs, the twin's own arrivals (its quiet spells' trickle). Every request the size the runs ask for. The
 * schedule's header-less coin is not replayed: the twin draws its clients' styles from its own mix, in the same
 * shares (70% openai-node, 30% without the SDK's headers). `phases` are the runs' schedule (the burst's without
 * it): outside its length from each start, the arrivals are the twin's own.
 *
 * Why: the twins drew their arrivals from demo-burst-3x's seeds, which the end-to-end runs do not use, and were
 * further from those runs than from each other; replayed, the runs' own arrivals bring the twin to the real figures
 * (docs/benchmarks.md, "The twin replays the run's arrivals").
 *
 * @example
 * ```ts
 * const schedule = arrivalSchedule({ seed: 2026, phases: E2E_PHASES, capacityRps: 17, headerlessShare: 0.3 });
 * const [cold] = e2eTwinScenarios(demo);
 * replayWorkload(cold.scenario, 17, [schedule], [0], { promptTokens: 16, outputTokens: 32 }).length; // schedule.length
 * ```
 */
export function replayWorkload(
  scenario: Scenario,
  capacityRps: number,
  schedules: readonly (readonly E2eArrival[])[],
  startsS: readonly number[],
  sizes: { promptTokens: number; outputTokens: number },
  phases: readonly E2ePhase[] = E2E_PHASES,
): WorkloadRequest[] {
  if (schedules.length !== startsS.length) throw new Error("replayWorkload: one start per schedule");
  const runS = scheduleSeconds(phases);
  const inRun = (ms: number) => startsS.some((s) => ms >= s * 1000 && ms < (s + runS) * 1000);
  const own = generateWorkload(scenario, capacityRps).filter((r) => !inRun(r.arrivalMs));
  const replayed = schedules.flatMap((schedule, i) =>
    schedule.map((a) => ({
      id: 0,
      arrivalMs: ((startsS[i] as number) + a.atS) * 1000,
      promptTokens: sizes.promptTokens,
      outputTokens: sizes.outputTokens,
      maxTokens: sizes.outputTokens,
    })),
  );
  return [...own, ...replayed].sort((a, b) => a.arrivalMs - b.arrivalMs).map((r, id) => ({ ...r, id }));
}

/** Where each run of {@link e2eChainedTwin} starts, seconds into it. */
export function chainedRunStartsS(bursts: number, quietS: number): number[] {
  return Array.from({ length: bursts }, (_, i) => i * (E2E_RUN_S + quietS));
}

/** What a replaying twin needs of an end-to-end run (its JSON): its arrival seeds and how it drew them. */
export interface E2eRunArrivals {
  seeds?: readonly number[];
  capacityRps: number;
  headerlessShare: number;
  /** The schedule's phases, as the run recorded them (runs before `--schedule` recorded the burst's, or none). */
  phases?: readonly E2ePhase[];
}

/** The end-to-end run whose arrivals the replaying twins replay (run 11; runs 13 to 16 drew the same seeds). */
export const E2E_REPLAY_RUN_FILE = "docs/evaluation-e2e-openai-run11.json";

/**
 * An end-to-end run's arrival schedules, one per seed, as its clients sent them (`arrivalSchedule` under `phases`,
 * the burst's without it).
 *
 * @throws Error when the run records no seeds, or records phases other than `phases` (a run of another schedule).
 * @example
 * ```ts
 * runSchedules({ seeds: [2026, 2027], capacityRps: 17, headerlessShare: 0.3 }).length; // 2
 * runSchedules(run24, E2E_SCHEDULES.spikes.phases); // run 24's three spike trains
 * runSchedules(run24); // Error: the end-to-end run ran other phases than the twin's
 * ```
 */
export function runSchedules(run: E2eRunArrivals, phases: readonly E2ePhase[] = E2E_PHASES): E2eArrival[][] {
  if (!run.seeds || run.seeds.length === 0) throw new Error("the end-to-end run records no seeds");
  const same = (a: E2ePhase, b: E2ePhase | undefined) => a.durationS === b?.durationS && a.load === b.load;
  if (run.phases && (run.phases.length !== phases.length || run.phases.some((p, i) => !same(p, phases[i]))))
    throw new Error("the end-to-end run ran other phases than the twin's");
  return run.seeds.map((seed) =>
    arrivalSchedule({ seed, phases, capacityRps: run.capacityRps, headerlessShare: run.headerlessShare }),
  );
}

/** The end-to-end run's request sizes (eval/e2e-openai.ts). */
export const E2E_REQUEST_SIZES = { promptTokens: 16, outputTokens: 32 } as const;

/**
 * The twins of {@link e2eTwinScenarios}, each replaying an end-to-end run's own arrivals: one simulated seed per seed
 * of the run (demo-burst-3x's seed and the next ones draw the clients and the quiet spell's trickle), its workload
 * that seed's schedule after the twin's lead-in. `phases` are the run's schedule (the burst's without it; a run
 * that records other phases is refused). The end-to-end targets' twin: `npm run eval:e2e-twin` records it
 * (`replay` in docs/e2e-twin.json, and `spikes` for run 24's spike trains) and `npm run eval:variant` checks a
 * variant on it.
 *
 * @example
 * ```ts
 * const run = JSON.parse(readFileSync("docs/evaluation-e2e-openai.json", "utf8"));
 * for (const t of e2eReplayTwins(readScenario("demo-burst-3x"), run, 17))
 *   evaluatePolicy(t.scenario, t.seeds, 17, policy, t.workloads);
 * const run24 = JSON.parse(readFileSync("docs/evaluation-e2e-openai-spikes.json", "utf8"));
 * e2eReplayTwins(readScenario("demo-burst-3x"), run24, 17, E2E_SCHEDULES.spikes.phases); // its spike trains
 * ```
 */
export function e2eReplayTwins(
  demo: Scenario,
  run: E2eRunArrivals,
  capacityRps: number,
  phases: readonly E2ePhase[] = E2E_PHASES,
): { id: string; description: string; scenario: Scenario; seeds: number[]; workloads: WorkloadRequest[][] }[] {
  const schedules = runSchedules(run, phases);
  return e2eTwinScenarios(demo, phases).map((t) => {
    const leadS = scheduleSeconds(t.scenario.phases.slice(0, t.scenario.phases.length - phases.length));
    const seeds = schedules.map((_, i) => demo.seed + i);
    const workloads = schedules.map((schedule, i) =>
      replayWorkload(
        { ...t.scenario, seed: seeds[i] as number },
        capacityRps,
        [schedule],
        [leadS],
        E2E_REQUEST_SIZES,
        phases,
      ),
    );
    return { ...t, seeds, workloads };
  });
}
