import { CLIENT_STYLES, type ClientStyle } from "./client-model";
import type { RunTrace } from "./trace";

/** What one style of client got in a run (see {@link outcomesByClientStyle}). */
export interface ClientStyleOutcome {
  style: ClientStyle;
  /** Requests its clients sent. */
  requests: number;
  /** Share of them served, and served within 60 s of their first attempt. */
  served: number;
  servedWithin60s: number;
  /** Requests of this style not served, as a share of all the run's requests: its part of what the run lost. */
  lostOfAll: number;
  /** Attempts per request (refused and shed ones included). */
  attemptsPerRequest: number;
  /**
   * Attempts queued and then shed at the queue timeout, per request: each is a wait of the whole timeout that ended
   * in a refusal (and one more attempt, if the client had one left).
   */
  timedOutPerRequest: number;
}

/**
 * A run's outcomes per client style (openai-node, openai-python, header-less, backoff-only, no-show, ...), in
 * `CLIENT_STYLES` order, styles absent from the run left out. Which clients a policy loses says which part of the
 * oracle's gap it could close: a backoff-only client or a no-show can only be served on its first attempts or its
 * SDK's short backoff, a hint-honouring one whenever its hint lands on room.
 *
 * @example
 * ```ts
 * const rows = outcomesByClientStyle(runSimulation(scenario, policy, workload));
 * rows.find((r) => r.style === "no_show")?.lostOfAll; // e.g. 0.019: no-shows are 1.9 points of what was lost
 * rows.find((r) => r.style === "openai_node")?.timedOutPerRequest; // e.g. 0.08: 8 attempts in 100 shed at the timeout
 * ```
 */
export function outcomesByClientStyle(run: RunTrace): ClientStyleOutcome[] {
  const total = run.requests.length;
  const by = new Map<
    ClientStyle,
    { requests: number; served: number; within60: number; attempts: number; timedOut: number }
  >();
  for (const r of run.requests) {
    const row = by.get(r.client) ?? { requests: 0, served: 0, within60: 0, attempts: 0, timedOut: 0 };
    row.requests += 1;
    row.attempts += r.attempts.length;
    for (const a of r.attempts) if (a.reason === "queue_timeout") row.timedOut += 1;
    if (r.result === "served") {
      row.served += 1;
      if ((r.completedAtMs ?? Number.POSITIVE_INFINITY) - r.arrivalMs <= 60_000) row.within60 += 1;
    }
    by.set(r.client, row);
  }
  return CLIENT_STYLES.flatMap((style) => {
    const row = by.get(style);
    if (!row) return [];
    return [
      {
        style,
        requests: row.requests,
        served: row.served / row.requests,
        servedWithin60s: row.within60 / row.requests,
        lostOfAll: (row.requests - row.served) / total,
        attemptsPerRequest: row.attempts / row.requests,
        timedOutPerRequest: row.timedOut / row.requests,
      },
    ];
  });
}
