import type { PriorityClass } from "./fair-queue";

/**
 * A tenant counts as active this long after one of its requests last arrived or ended (and always while one waits
 * or is in flight): long enough to span the gaps of a steady light tenant (one request every few seconds), short
 * enough that a tenant gone quiet stops holding slots back within seconds.
 */
export const TENANT_ACTIVE_WINDOW_MS = 5_000;

/**
 * The router's default `tenantHeadroomSlots` (decided by `npm run eval:tenants`'s headroom sweep, docs/tenants.md).
 *
 * @example
 * ```ts
 * routerSettingsSchema.parse({}).tenantHeadroomSlots === DEFAULT_TENANT_HEADROOM_SLOTS; // true
 * ```
 */
export const DEFAULT_TENANT_HEADROOM_SLOTS = 1;

/** What the router remembers of one tenant for its headroom. */
interface TenantActivity {
  /** The weight of its latest request. */
  weight: number;
  /** Its requests in flight (leased), per class. */
  inFlight: Record<PriorityClass, number>;
  /** Per class: when a request of it last arrived or ended (ms). */
  lastSeenMs: Record<PriorityClass, number>;
}

/** The headroom's verdict for the placements of one round. */
export interface HeadroomGate {
  /** Whether a request of `tenant` in class `priority` must wait: placing it would eat into the headroom. */
  holds(tenant: string, priority: PriorityClass): boolean;
  /**
   * When a hold may lapse without a release or an arrival (the first protected tenant's activity window ends); the
   * router rechecks then.
   */
  recheckAtMs: number;
}

/** Below this many tracked tenants nothing is pruned (a new tenant's arrival prunes: see `arrived`). */
const PRUNE_FLOOR = 64;

/**
 * Headroom for light tenants: `headroomSlots` slots of the fleet that a tenant at or above its weighted fair share
 * may not take while another tenant below its share is active, so the light tenant's next request finds a slot at
 * once instead of waiting for the next release (in a fleet a heavy tenant saturates, with fixed-length answers,
 * releases come in clumps seconds apart; no work-conserving order avoids that wait, src/sim/first-release-bound.ts).
 *
 * A tenant's fair share is `fleetSlots * weight / (the weights of the active tenants)`; it is at or above it when
 * its requests in flight at this router reach that. A request of class `interactive` is held back only for
 * tenants active in `interactive` (batch never reserves room against interactive work); a `batch` request for any.
 * With a single active tenant, or when no active tenant is below its share, nothing is held (work-conserving).
 *
 * Pure: the clock is a parameter of every call; memory is bounded by the tenants active in the last window.
 *
 * @example
 * ```ts
 * const headroom = new TenantHeadroom(2, 32, () => false);
 * headroom.arrived("a", 1, "interactive", 0);
 * for (let i = 0; i < 20; i++) headroom.placed("a", "interactive");
 * headroom.arrived("b", 1, "interactive", 0);
 * headroom.gate(0, 2)?.holds("a", "interactive"); // true: a holds 20 of its 16 and b is active below its share
 * headroom.gate(0, 3); // undefined: placing one more still leaves 2 free
 * headroom.gate(6_000, 2); // undefined: b has been quiet for 6 s
 * ```
 */
export class TenantHeadroom {
  private readonly tenants = new Map<string, TenantActivity>();
  private pruneAt = PRUNE_FLOOR;

  /**
   * `fleetSlots`: the slots this router's fair shares divide (the fleet's, over the routers sharing it).
   * `waiting(tenant, priority)` says whether a request of the tenant waits in that class (a waiting tenant is
   * active however long ago it arrived).
   */
  constructor(
    readonly headroomSlots: number,
    private readonly fleetSlots: number,
    private readonly waiting: (tenant: string, priority: PriorityClass) => boolean,
    private readonly windowMs = TENANT_ACTIVE_WINDOW_MS,
  ) {}

  /** Tenants remembered (active in the last window, or with a request in flight). */
  get tracked(): number {
    return this.tenants.size;
  }

  /** A request of `tenant` reached the router (queued or not: either way the tenant is active). */
  arrived(tenant: string, weight: number, priority: PriorityClass, nowMs: number): void {
    let activity = this.tenants.get(tenant);
    if (!activity) {
      // A flood of one-off tenant names cannot grow the map: the quiet ones are dropped when it doubles.
      if (this.tenants.size >= this.pruneAt) {
        this.prune(nowMs);
        this.pruneAt = Math.max(PRUNE_FLOOR, 2 * this.tenants.size);
      }
      activity = {
        weight,
        inFlight: { interactive: 0, batch: 0 },
        lastSeenMs: { interactive: Number.NEGATIVE_INFINITY, batch: Number.NEGATIVE_INFINITY },
      };
      this.tenants.set(tenant, activity);
    }
    activity.weight = weight;
    activity.lastSeenMs[priority] = nowMs;
  }

  /** A request of `tenant` was placed (it holds a slot until `ended`). */
  placed(tenant: string, priority: PriorityClass): void {
    const activity = this.tenants.get(tenant);
    if (activity) activity.inFlight[priority] += 1;
  }

  /** A request of `tenant` placed earlier ended (response done, failed, cancelled or its lease reclaimed). */
  ended(tenant: string, priority: PriorityClass, nowMs: number): void {
    const activity = this.tenants.get(tenant);
    if (!activity || activity.inFlight[priority] === 0) return;
    activity.inFlight[priority] -= 1;
    activity.lastSeenMs[priority] = nowMs;
  }

  /**
   * The round's verdict with `freeSlots` free in the fleet (as far as the router knows); `undefined` when nothing
   * is held: more than `headroomSlots` are free (placing one leaves enough), fewer than two tenants are active, or
   * no active tenant is below its share (or none at or above it).
   */
  gate(nowMs: number, freeSlots: number): HeadroomGate | undefined {
    if (freeSlots > this.headroomSlots) return undefined;
    const active: Array<{ name: string; activity: TenantActivity; interactive: boolean }> = [];
    let totalWeight = 0;
    for (const [name, activity] of this.tenants) {
      const interactive = this.activeIn(name, activity, "interactive", nowMs);
      if (!interactive && !this.activeIn(name, activity, "batch", nowMs)) continue;
      active.push({ name, activity, interactive });
      totalWeight += activity.weight;
    }
    if (active.length < 2) return undefined;
    const aboveShare = new Set<string>();
    const protectors: Record<PriorityClass, number> = { interactive: 0, batch: 0 };
    let recheckAtMs = Number.POSITIVE_INFINITY;
    for (const { name, activity, interactive } of active) {
      const share = (this.fleetSlots * activity.weight) / totalWeight;
      if (activity.inFlight.interactive + activity.inFlight.batch >= share) {
        aboveShare.add(name);
        continue;
      }
      protectors.batch += 1;
      recheckAtMs = Math.min(recheckAtMs, this.activeUntil(name, activity, nowMs));
      if (!interactive) continue;
      protectors.interactive += 1;
      // Its protection of interactive work may lapse first, while it stays active in batch.
      recheckAtMs = Math.min(recheckAtMs, this.activeUntil(name, activity, nowMs, "interactive"));
    }
    if (protectors.batch === 0 || aboveShare.size === 0) return undefined;
    return {
      holds: (tenant, priority) => aboveShare.has(tenant) && protectors[priority] > 0,
      recheckAtMs,
    };
  }

  /** Whether the tenant is active in `priority`: a request in flight or waiting, or one seen within the window. */
  private activeIn(name: string, activity: TenantActivity, priority: PriorityClass, nowMs: number): boolean {
    return (
      activity.inFlight[priority] > 0 ||
      nowMs - activity.lastSeenMs[priority] < this.windowMs ||
      this.waiting(name, priority)
    );
  }

  /**
   * The earliest moment the tenant may stop being active (in `only` that class, else in both): a window after now
   * while it has work there, else a window after it was last seen there.
   */
  private activeUntil(name: string, activity: TenantActivity, nowMs: number, only?: PriorityClass): number {
    const classes: readonly PriorityClass[] = only ? [only] : ["interactive", "batch"];
    if (classes.some((c) => activity.inFlight[c] > 0 || this.waiting(name, c))) return nowMs + this.windowMs;
    return Math.max(...classes.map((c) => activity.lastSeenMs[c])) + this.windowMs;
  }

  /** Forgets tenants neither active nor in flight. */
  private prune(nowMs: number): void {
    for (const [name, activity] of this.tenants) {
      if (!this.activeIn(name, activity, "interactive", nowMs) && !this.activeIn(name, activity, "batch", nowMs))
        this.tenants.delete(name);
    }
  }
}
