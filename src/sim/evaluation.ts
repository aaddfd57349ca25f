import { measureCapacity } from "./capacity";
import { type ClientsConfig, describeClients } from "./client-mix";
import type { ScenarioCurveBound } from "./curve-bound";
import { computeMetrics, type RunMetrics } from "./metrics";
import { computeOracle, type OracleResult, poolOracles } from "./oracle";
import { DEFAULT_POLICY_ID, type PolicySpec } from "./policies";
import { type Scenario, trafficDurationS } from "./scenario";
import { runSimulation } from "./simulation";
import type { RunTrace } from "./trace";
import { generateWorkload } from "./workload";

/** Retry attempts per time bin of one run, for the timeline figures. */
export interface RetryTimeline {
  binS: number;
  /** Retries sent in each bin, and how many of them were admitted. */
  retries: number[];
  admitted: number[];
}

/** One policy's figures in one scenario: pooled over the seeds, plus X per seed. */
export interface PolicyResult {
  id: string;
  label: string;
  /** The headline measures (also in `metrics`): served share, attempts per offered, hint coverage, completion curve. */
  servedFraction: number;
  attemptsPerOffered: number;
  hintCoverage: number | null;
  servedWithinS: RunMetrics["servedWithinS"];
  metrics: RunMetrics;
  /** X (admitted-retry rate) of each seed's run, in seed order. */
  admittedRetryRateBySeed: (number | null)[];
  /** The first seed's retry timeline. */
  timeline: RetryTimeline;
}

/**
 * The 60 s bound of a burst (fluid model, capacity C, burst at r x C for T s, queue Q): the burst's refused
 * requests number about (r - 1) C T - Q. Between the burst's start and 60 s after its end, at most
 * C (T + 60) + Q requests can enter the queue (and so be admitted); the burst's first attempts took C T + Q of
 * those, so their first retries, each within 60 s, share at most 60 C, or (60 - 60 b) C if the baseline
 * b x C keeps its own share of those 60 s.
 */
export interface BurstBound {
  refusedEstimate: number;
  firstRetryBound: number;
  firstRetryBoundWithBaseline: number;
}

export interface ScenarioResult {
  name: string;
  title: string;
  description: string;
  seeds: number[];
  capacityRps: number;
  offeredRequests: number;
  trafficS: number;
  spanS: number;
  bound?: BurstBound;
  /** Who the clients are: the mix and round-trip model, as configured and in words. */
  clients: ClientsConfig & { description: string };
  /** Queue bound per shard, and its full queue's drain time at capacity (s). */
  maxQueuedRequests: number;
  queueDrainS: number;
  /** The best any hint policy could do for these clients (src/sim/oracle.ts). */
  oracle: OracleResult;
  /**
   * The clairvoyant bound against the curve target (src/sim/curve-bound.ts), when `npm run eval` computed it:
   * how close to the best other policy at every horizon at once any schedule comes.
   */
  curveBound?: ScenarioCurveBound;
  /** The id of the default policy (the config's default `retryAfterPolicy`). */
  defaultPolicy: string;
  policies: PolicyResult[];
}

/**
 * The burst bound of a scenario whose `burstPhase` is set (see {@link BurstBound}).
 *
 * @example
 * ```ts
 * burstBound(scenario, 8.5)?.firstRetryBound; // 0.77 for 10x over 10 s with a queue of 100
 * ```
 */
export function burstBound(scenario: Scenario, capacityRps: number): BurstBound | undefined {
  if (scenario.burstPhase === undefined) return undefined;
  const burst = scenario.phases[scenario.burstPhase];
  const after = scenario.phases[scenario.burstPhase + 1];
  if (!burst) return undefined;
  const q = scenario.router.maxQueuedRequests * scenario.router.shards;
  const c = capacityRps;
  const refused = Math.max(0, (burst.load - 1) * c * burst.durationS - q);
  const baseline = after?.load ?? 0;
  const cap = (x: number) => Math.max(0, Math.min(1, x));
  return {
    refusedEstimate: refused,
    firstRetryBound: refused > 0 ? cap((60 * c) / refused) : 1,
    firstRetryBoundWithBaseline: refused > 0 ? cap(((60 - 60 * baseline) * c) / refused) : 1,
  };
}

/** Retry attempts per bin of a trace. */
export function retryTimeline(trace: RunTrace, binS = 2): RetryTimeline {
  const bins = Math.ceil(trace.spanS / binS);
  const retries = new Array<number>(bins).fill(0);
  const admitted = new Array<number>(bins).fill(0);
  for (const r of trace.requests) {
    r.attempts.forEach((a, i) => {
      if (i === 0) return;
      const b = Math.min(bins - 1, Math.floor(a.atMs / 1000 / binS));
      retries[b] = (retries[b] ?? 0) + 1;
      if (a.outcome === "admitted") admitted[b] = (admitted[b] ?? 0) + 1;
    });
  }
  return { binS, retries, admitted };
}

/** Concatenates runs of different seeds into one trace, so rates are pooled over every request. */
export function poolTraces(traces: readonly RunTrace[]): RunTrace {
  return {
    requests: traces.flatMap((t) => t.requests),
    drainSamples: traces.flatMap((t) => t.drainSamples),
    idleWhileWaitingSlotS: traces.reduce((s, t) => s + t.idleWhileWaitingSlotS, 0),
    fleetSlots: traces[0]?.fleetSlots ?? 0,
    spanS: traces.reduce((s, t) => s + t.spanS, 0),
    trafficS: traces.reduce((s, t) => s + t.trafficS, 0),
    ...(traces.length > 0 && traces.every((t) => t.ledger) ? { ledger: traces.flatMap((t) => t.ledger ?? []) } : {}),
  };
}

/**
 * One policy's runs on a scenario's seeds, one trace per seed (each seed's arrivals at `capacityRps`, generated
 * here unless given): what {@link evaluatePolicy} measures, and what the reports that look at single requests read.
 *
 * @example
 * ```ts
 * const requests = policyTraces(scenario, result.seeds, result.capacityRps, spec).flatMap((t) => t.requests);
 * ```
 */
export function policyTraces(
  scenario: Scenario,
  seeds: readonly number[],
  capacityRps: number,
  policy: PolicySpec,
  workloads = seeds.map((seed) => generateWorkload({ ...scenario, seed }, capacityRps)),
): RunTrace[] {
  return seeds.map((seed, i) =>
    runSimulation({ ...scenario, seed }, policy, workloads[i] ?? [], undefined, { capacityRps }),
  );
}

/**
 * One policy on a scenario's seeds (the seeds and the fleet capacity of an earlier {@link evaluateScenario}, so
 * the same arrivals): its pooled measures. The variants of the default use it beside the scenario's result.
 *
 * @example
 * ```ts
 * const variant = evaluatePolicy(scenario, result.seeds, result.capacityRps, spec);
 * variant.servedFraction;
 * ```
 */
export function evaluatePolicy(
  scenario: Scenario,
  seeds: readonly number[],
  capacityRps: number,
  policy: PolicySpec,
  workloads = seeds.map((seed) => generateWorkload({ ...scenario, seed }, capacityRps)),
): PolicyResult {
  const traces = policyTraces(scenario, seeds, capacityRps, policy, workloads);
  const metrics = computeMetrics(poolTraces(traces));
  return {
    id: policy.id,
    label: policy.label,
    servedFraction: metrics.servedFraction,
    attemptsPerOffered: metrics.attemptsPerOffered,
    hintCoverage: metrics.hintCoverage,
    servedWithinS: metrics.servedWithinS,
    metrics,
    admittedRetryRateBySeed: traces.map((t) => computeMetrics(t).admittedRetryRate),
    timeline: retryTimeline(traces[0] as RunTrace),
  };
}

/**
 * Runs one scenario under every policy, for `seedCount` seeds (scenario.seed, +1, ...): each seed's arrivals
 * are generated once and given to every policy, so the policies are compared on the same requests.
 *
 * @example
 * ```ts
 * const result = evaluateScenario(scenario, EVAL_POLICIES, 3);
 * result.policies.find((p) => p.id === "router_queue_drain_rate")?.metrics.admittedRetryRate;
 * ```
 */
export function evaluateScenario(
  scenario: Scenario,
  policies: readonly PolicySpec[],
  seedCount: number,
): ScenarioResult {
  const capacityRps = measureCapacity(scenario);
  const seeds = Array.from({ length: seedCount }, (_, i) => scenario.seed + i);
  const workloads = seeds.map((seed) => generateWorkload({ ...scenario, seed }, capacityRps));
  const results = policies.map((policy) => evaluatePolicy(scenario, seeds, capacityRps, policy, workloads));
  const trafficS = trafficDurationS(scenario);
  const bound = burstBound(scenario, capacityRps);
  const oracle = poolOracles(
    seeds.map((seed, i) => computeOracle({ ...scenario, seed }, workloads[i] ?? [], capacityRps)),
  );
  return {
    name: scenario.name,
    title: scenario.title,
    description: scenario.description,
    seeds,
    capacityRps,
    offeredRequests: workloads.reduce((s, w) => s + w.length, 0),
    trafficS,
    spanS: trafficS + scenario.tailS,
    ...(bound ? { bound } : {}),
    clients: { ...scenario.clients, description: describeClients(scenario.clients) },
    maxQueuedRequests: scenario.router.maxQueuedRequests,
    queueDrainS: (scenario.router.maxQueuedRequests * scenario.router.shards) / capacityRps,
    oracle,
    defaultPolicy: DEFAULT_POLICY_ID,
    policies: results,
  };
}
