import { COMPLETION_HORIZONS_S, percentile } from "../src/sim/metrics";
import type { E2eOpenAiPolicy } from "../src/sim/report-markdown";

/** What a client process reports for one request. */
export interface E2eOutcome {
  /** The request's id (policy, seed and arrival index), also its `x-e2e-id` header and part of its API key. */
  key: string;
  /** The SDK resolved (a 200, possibly after retries). */
  ok: boolean;
  /** Seconds from its first attempt to its answer; 0 when not served. */
  latencyS: number;
  headerless: boolean;
  /** Still running when the run was cut (counted as not served). */
  unfinished: boolean;
}

export type { E2eOpenAiPolicy };

/**
 * Summarises one policy's outcomes: served share, the completion curve (share of all offered requests served
 * within each horizon of their first attempt), attempts per offered request (`attempts` counts every attempt the
 * proxy saw, failed requests' included), p50 time to success, and the served share of header-less and of
 * SDK-header clients (unfinished requests count as not served in both). To pool several seeds, pass all their
 * outcomes and the sum of their attempts: every figure is a ratio over the pooled requests.
 *
 * @example
 * ```ts
 * summarizeE2ePolicy("static-30", [
 *   { key: "a", ok: true, latencyS: 2, headerless: false, unfinished: false },
 *   { key: "b", ok: false, latencyS: 0, headerless: true, unfinished: false },
 * ], 4); // servedFraction 0.5, servedWithinS["5"] 0.5, attemptsPerOffered 2
 * ```
 */
export function summarizeE2ePolicy(id: string, outcomes: readonly E2eOutcome[], attempts: number): E2eOpenAiPolicy {
  const total = outcomes.length;
  const served = outcomes.filter((o) => o.ok);
  const ratio = (n: number) => (total > 0 ? n / total : 0);
  const share = (list: readonly E2eOutcome[]) =>
    list.length > 0 ? list.filter((o) => o.ok).length / list.length : null;
  return {
    id,
    requests: total,
    served: served.length,
    servedFraction: ratio(served.length),
    servedWithinS: Object.fromEntries(
      COMPLETION_HORIZONS_S.map((h) => [String(h), ratio(served.filter((o) => o.latencyS <= h).length)]),
    ),
    attemptsPerOffered: ratio(attempts),
    timeToSuccessP50S: percentile(
      served.map((o) => o.latencyS),
      50,
    ),
    headerlessServedFraction: share(outcomes.filter((o) => o.headerless)),
    sdkServedFraction: share(outcomes.filter((o) => !o.headerless)),
    unfinished: outcomes.filter((o) => o.unfinished).length,
  };
}
