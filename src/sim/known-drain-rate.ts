import { fleetSpeed } from "./oracle";
import type { Scenario } from "./scenario";

/**
 * The drain rate one router shard would see if it knew the fleet: the scenario's measured capacity (requests per
 * second at full load) scaled by the speed of the replicas still up at time t (fewer after a loss), shared evenly
 * by the shards (the fingerprint spreads requests evenly). What the `booked_capacity` ledger plans on in place of
 * its drain-rate EWMA in the variant `known-capacity`, which measures what that estimate's errors cost; no router
 * knows it.
 *
 * @example
 * ```ts
 * const rate = knownDrainRate(capacityHalves, 8.53);
 * rate(10);  // 8.53: four replicas up
 * rate(100); // 4.265: two of them lost at 80 s
 * ```
 */
export function knownDrainRate(scenario: Scenario, capacityRps: number): (tS: number) => number {
  const speed = fleetSpeed(scenario);
  return (tS) => (capacityRps * (speed.at(tS) / speed.total)) / scenario.router.shards;
}
