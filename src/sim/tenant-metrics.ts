import { percentile } from "./metrics";
import type { RequestTrace } from "./trace";
import type { WorkloadRequest } from "./workload";

/** One tenant's (and priority class's) figures over one or more runs. Rates are fractions; times seconds. */
export interface TenantFigures {
  tenant: string;
  priority: "interactive" | "batch";
  requests: number;
  served: number;
  /** served / requests. */
  servedShare: number;
  /** Requests whose first attempt was admitted, as a share of all. */
  firstAttemptAdmission: number;
  /** Attempts refused (first attempts and retries). */
  refusedAttempts: number;
  timeToSuccessP50S: number | null;
  timeToSuccessP99S: number | null;
  /** p99 of the wait from the admitted attempt's arrival at the router to its placement (served requests). */
  admissionWaitP99S: number | null;
}

/**
 * Per-tenant figures of runs: each trace is matched to its workload request by id, and grouped by the request's
 * tenant and class (a request without a tenant counts as `default`). Pass several runs (seeds) to pool them.
 *
 * @example
 * ```ts
 * const figures = tenantFigures([{ workload, requests: runSimulation(scenario, policy, workload).requests }]);
 * ```
 */
export function tenantFigures(
  runs: ReadonlyArray<{ workload: readonly WorkloadRequest[]; requests: readonly RequestTrace[] }>,
): TenantFigures[] {
  const groups = new Map<string, { tenant: string; priority: "interactive" | "batch"; traces: RequestTrace[] }>();
  for (const run of runs) {
    const byId = new Map(run.workload.map((request) => [request.id, request]));
    for (const trace of run.requests) {
      const tenant = byId.get(trace.id)?.tenant ?? { tenant: "default", weight: 1, priority: "interactive" as const };
      const key = `${tenant.tenant}/${tenant.priority}`;
      let group = groups.get(key);
      if (!group) {
        group = { tenant: tenant.tenant, priority: tenant.priority, traces: [] };
        groups.set(key, group);
      }
      group.traces.push(trace);
    }
  }
  return [...groups.values()]
    .sort((a, b) => a.tenant.localeCompare(b.tenant) || a.priority.localeCompare(b.priority))
    .map(({ tenant, priority, traces }) => {
      const served = traces.filter((t) => t.result === "served");
      const times = served.map((t) => ((t.completedAtMs as number) - t.arrivalMs) / 1000);
      const waits = served.flatMap((t) =>
        t.attempts.filter((a) => a.outcome === "admitted").map((a) => (a.answeredAtMs - a.atMs) / 1000),
      );
      return {
        tenant,
        priority,
        requests: traces.length,
        served: served.length,
        servedShare: traces.length === 0 ? 0 : served.length / traces.length,
        firstAttemptAdmission:
          traces.length === 0 ? 0 : traces.filter((t) => t.attempts[0]?.outcome === "admitted").length / traces.length,
        refusedAttempts: traces.reduce((s, t) => s + t.attempts.filter((a) => a.outcome === "rejected").length, 0),
        timeToSuccessP50S: percentile(times, 50),
        timeToSuccessP99S: percentile(times, 99),
        admissionWaitP99S: percentile(waits, 99),
      };
    });
}
