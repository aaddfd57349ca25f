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
 * ```
 */
export function outcomesByClientStyle(run: RunTrace): ClientStyleOutcome[] {
  const total = run.requests.length;
  const by = new Map<ClientStyle, { requests: number; served: number; within60: number }>();
  for (const r of run.requests) {
    const row = by.get(r.client) ?? { requests: 0, served: 0, within60: 0 };
    row.requests += 1;
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
      },
    ];
  });
}
