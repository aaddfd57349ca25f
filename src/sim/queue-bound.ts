import { drawClient } from "./client-mix";
import { type BoundInstance, type BoundSet, boundInstance, seedInstances } from "./curve-bound";
import type { ScenarioResult } from "./evaluation";
import type { CompletionCurve } from "./metrics";
import { ORACLE_MAX_HINT_S } from "./oracle";
import { randomStream } from "./random-streams";
import { marginPts as pts } from "./report-format";
import type { Scenario } from "./scenario";
import { bestOtherCurve, TARGET_TOLERANCE, withinTolerance } from "./targets";
import type { WorkloadRequest } from "./workload";

/**
 * One seed's instance for the queue-aware bound: the clairvoyant bound's (`boundInstance`), each request also
 * told how long it may wait in the queue on its first attempt (the queue's timeout) and whether its client
 * certainly retries when it is not served from there - it has a retry left, and the retry comes before the run
 * ends even after the longest hint a policy here gives (`ORACLE_MAX_HINT_S`, plus a margin for the way there).
 *
 * @example
 * ```ts
 * const instance = queueBoundInstance(scenario, generateWorkload(scenario, capacity), capacity);
 * instance.jobs[0]?.queueEndS; // its arrival at the router plus the queue's timeout
 * ```
 */
export function queueBoundInstance(
  scenario: Scenario,
  workload: readonly WorkloadRequest[],
  capacityRps: number,
): BoundInstance {
  const base = boundInstance(scenario, workload, capacityRps);
  const timeoutS = scenario.router.queueTimeoutS;
  return {
    ...base,
    jobs: base.jobs.map((job, i) => {
      const request = workload[i] as WorkloadRequest;
      const client = drawClient(scenario.clients, randomStream(scenario.seed, "client-kind", request.id));
      const retries = client.profile.maxRetries ?? scenario.client.maxRetries;
      const queueEndS = job.releaseS + timeoutS;
      return { ...job, queueEndS, certainRetry: retries > 0 && queueEndS + ORACLE_MAX_HINT_S + 5 <= base.endS };
    }),
  };
}

/**
 * An evaluated scenario as the queue-aware bound sees it: the clairvoyant bound's set with the scenario's queue
 * bound (all shards') and, when given, an attempts bound per offered request (issue 15's attempts target: static
 * 30 s's).
 *
 * @example
 * ```ts
 * const set = queueBoundSet(scenario, result, staticThirtyAttempts);
 * curveBound(highs, set.instances, set.target, 1).margin; // via jointCurveBound(highs, [set])
 * ```
 */
export function queueBoundSet(scenario: Scenario, result: ScenarioResult, attemptsAtMost?: number): BoundSet {
  return {
    instances: seedInstances(scenario, result, queueBoundInstance),
    target: bestOtherCurve(result),
    queueBound: scenario.router.maxQueuedRequests * scenario.router.shards,
    ...(attemptsAtMost !== undefined ? { attemptsAtMost } : {}),
  };
}

/** One scenario as `npm run eval:queue-bound` records it in docs/queue-bound.json. */
export interface QueueBoundScenario {
  name: string;
  seeds: number[];
  /** The curve target: the best other policy at each horizon (docs/evaluation.json). */
  target: CompletionCurve;
  /** The clairvoyant bound's margin without the queue model (docs/evaluation.json). */
  aloneMargin: number;
  /** The queue's bound (all shards') and timeout the bound holds first attempts to. */
  queueBound: number;
  queueTimeoutS: number;
  /** The attempts bound: static 30 s's attempts per offered request (issue 15's attempts target). */
  attemptsAtMost: number;
  /** The bound with the queue's bound and the attempts target, and the curve of a schedule that reaches it. */
  margin: number;
  curve: CompletionCurve;
  /** The default policy's worst curve gap (docs/evaluation.json). */
  defaultWorstGap: number;
  size: { columns: number; rows: number };
}

/** docs/queue-bound.json. */
export interface QueueBoundReport {
  generatedBy: string;
  /** The evaluation the targets and seeds come from. */
  from: string;
  scenarios: QueueBoundScenario[];
}

/**
 * docs/queue-bound.md from its JSON: every figure in it is read from the report (a test renders the committed
 * JSON and compares).
 *
 * @example
 * ```ts
 * writeFileSync("docs/queue-bound.md", renderQueueBound(report));
 * ```
 */
export function renderQueueBound(report: QueueBoundReport): string {
  const s = report.scenarios;
  const rows = s.map(
    (r) =>
      `| ${r.name} | ${r.queueBound} / ${r.queueTimeoutS} s | ${r.attemptsAtMost.toFixed(3)} | ${pts(r.aloneMargin)} | ${pts(r.margin)} | ${pts(r.aloneMargin - r.margin)} | ${pts(r.defaultWorstGap)} | ${r.size.columns} x ${r.size.rows} |`,
  );
  const reachable = s.filter((r) => withinTolerance(r.margin, TARGET_TOLERANCE.curve));
  const costly = s.filter((r) => r.aloneMargin - r.margin >= 0.001);
  const worst = s.reduce((a, b) => (a.aloneMargin - a.margin >= b.aloneMargin - b.margin ? a : b));
  const lowest = s.reduce((a, b) => (a.margin <= b.margin ? a : b));
  const verdict =
    reachable.length === s.length
      ? `So neither the queue's bound nor the attempts target keeps a policy from the curve target: with foresight, one schedule that never holds more first attempts in the queue than it allows, never starts one from there past the queue's timeout, and makes no more attempts per offered request than static 30 s is within 2 points of the best other policy at every horizon in every scenario (lowest: \`${lowest.name}\`, ${pts(lowest.margin)}). The default's gaps (${pts(Math.min(...s.map((r) => r.defaultWorstGap)))} to ${pts(Math.max(...s.map((r) => r.defaultWorstGap)))}) are not a limit these targets set together.`
      : `So the queue's bound and the attempts target together put the curve target out of reach in ${s.length - reachable.length} of ${s.length} scenarios (${s
          .filter((r) => !withinTolerance(r.margin, TARGET_TOLERANCE.curve))
          .map((r) => `\`${r.name}\` ${pts(r.margin)}`)
          .join(
            ", ",
          )}): there no policy, however tuned and however well it foresees, meets the curve target and the attempts target at once with this queue.`;
  return [
    "# Do the queue's bound and the attempts target explain the curve target's gap? A queue-aware bound",
    "",
    `Generated by \`${report.generatedBy}\` from the targets and seeds of \`${report.from}\`; the data is \`docs/queue-bound.json\`.`,
    "",
    "The clairvoyant curve bound (`src/sim/curve-bound.ts`, `docs/evaluation.md`) lets a request start at any moment of its client's window, as if it waited wherever it needed to, and counts no attempts. A real router holds at most its queue's bound of requests at once, sheds one that waited past the queue's timeout, and every request it does not serve from the queue on its first attempt costs its client another attempt, which issue 15's attempts target caps at static 30 s's. The queue-aware bound (`BoundSet.queueBound` and `attemptsAtMost`, built by `queueBoundSet` in `src/sim/queue-bound.ts`) adds both: a start from the queue on a first attempt comes by the request's arrival plus the queue's timeout, the requests waiting there for such a start are at most the queue's bound (all shards') at the end of every second, and every request not started from the queue whose client retries (a retry left, and time for it before the run ends) counts one attempt more, all of it at most static 30 s's attempts per offered request. It stays a relaxation in the requests' favour (it counts only first attempts in the queue, and one retry where a client may need two), so what it cannot reach, nothing can.",
    "",
    `Margins in points of the offered requests (the lowest over every horizon; the target asks for at least ${pts(-TARGET_TOLERANCE.curve)}):`,
    "",
    "| scenario | queue bound / timeout | attempts per offered at most (static 30 s) | bound without the queue | queue-aware bound | what the queue and attempts cost | default's worst curve gap | program (columns x rows) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `What it says: ${
      costly.length === 0
        ? "the queue's bound and the attempts target lower the bound by less than 0.1 point in every scenario"
        : `the queue's bound and the attempts target lower the bound by ${pts(worst.aloneMargin - worst.margin)} at most (\`${worst.name}\`), and by at least 0.1 point in ${costly.length} of ${s.length} scenarios`
    }; the queue-aware margin meets the curve target in ${reachable.length} of ${s.length}. ${verdict}`,
    "",
  ].join("\n");
}
