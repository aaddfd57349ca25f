import type { PriorityClass } from "../core/fair-queue";
import type { Scenario } from "./scenario";
import { generateWorkload, type WorkloadRequest } from "./workload";

/** One tenant's traffic in a tenant scenario: its plan and its offered load over time (multiples of capacity). */
export interface TenantStream {
  tenant: string;
  weight: number;
  priority: PriorityClass;
  phases: Array<{ durationS: number; load: number }>;
}

/**
 * The merged arrivals of several tenants: each tenant's Poisson arrivals are drawn as the scenario's own would be,
 * from its own seed (the scenario's seed and the tenant's index), so adding a tenant does not move another's
 * requests. Requests are renumbered in arrival order and tagged with their tenant.
 *
 * @example
 * ```ts
 * const requests = tenantWorkload(scenario, 9.5, [
 *   { tenant: "a", weight: 1, priority: "interactive", phases: [{ durationS: 30, load: 10 }] },
 *   { tenant: "b", weight: 1, priority: "interactive", phases: [{ durationS: 30, load: 0.3 }] },
 * ]);
 * ```
 */
export function tenantWorkload(
  scenario: Scenario,
  capacityRps: number,
  streams: readonly TenantStream[],
): WorkloadRequest[] {
  const all = streams.flatMap((stream, index) =>
    generateWorkload({ ...scenario, seed: scenario.seed * 1000 + index, phases: stream.phases }, capacityRps).map(
      (request) => ({
        ...request,
        tenant: { tenant: stream.tenant, weight: stream.weight, priority: stream.priority },
      }),
    ),
  );
  all.sort((a, b) => a.arrivalMs - b.arrivalMs);
  return all.map((request, id) => ({ ...request, id }));
}
