/**
 * How sheddable a request is. `interactive` is served first; `batch` (OpenAI's `service_tier: "flex"`, llm-d's
 * "sheddable") takes the capacity interactive work leaves and is refused first under overload.
 */
export type PriorityClass = "interactive" | "batch";

/** One waiting request, as the fair queue sees it. */
export interface FairEntry {
  ticket: string;
  tenant: string;
  /** The tenant's weight: its share of a contended queue relative to the other waiting tenants'. */
  weight: number;
  priority: PriorityClass;
  enqueuedAtMs: number;
  /** Carried for the router: the request's fingerprint and its client's horizon (what its refusal's hint needs). */
  fingerprint?: string | undefined;
  horizonS?: number;
  /**
   * A request that gives way (the router demotes a request whose client was first refused more than
   * `BookingAdmission.demoteAfterS` ago): it waits in the batch class and takes no room from others - it does not count
   * towards another request's capacity, and a request that finds the queue at its bound pushes one of them out.
   */
  yields?: boolean;
  /**
   * For an entry that yields: when its client was first refused (ms; absent: when it was queued). It orders the
   * entries that yield (`FairQueueOptions.yieldOrder`), and the one first refused longest ago is pushed out first.
   */
  firstRefusedAtMs?: number | undefined;
}

/** The answer to `offer`: queued (possibly pushing another tenant's request out), or refused. */
export type OfferResult = { kind: "queued"; displaced?: FairEntry } | { kind: "refused" };

/**
 * How a class orders its backlogged tenants.
 * - `start_time`: start-time fair queuing over backlog tags (equal tenants alternate whatever their arrival rates).
 * - `least_attained`: the tenant with the least recent service per weight goes first (its dispatches, decayed
 *   with a time constant), so a tenant below its fair share of recent service is never made to alternate with one
 *   above it, while tenants that are all over capacity still share by weight.
 *
 * @example
 * ```ts
 * const ordering: FairOrdering = "least_attained";
 * ```
 */
export type FairOrdering = "start_time" | "least_attained";

/**
 * How entries that yield are ordered among themselves.
 * - `newest_first` (adaptive LIFO): behind every other batch entry, the one whose client was first refused most
 *   recently goes first, and the one first refused longest ago is pushed out at the bound.
 * - `arrival`: in line with the batch class in arrival order; the newest queued is pushed out (the order before
 *   adaptive LIFO, kept as the simulator's `demoted-fifo` variant).
 * - `next_horizon`: earliest deadline first on the next completion horizon each can still make. A client first
 *   refused at t0 is served within h of it only if its request starts by t0 + h - `yieldServiceS`; of the horizons
 *   {@link COMPLETION_HORIZONS_FOR_ORDER} the first whose start-by is still ahead is its deadline, and the earliest
 *   deadline goes first (ties: the most recently first refused); one past every horizon goes last. Pushed out at
 *   the bound: as `newest_first`. The simulator's `next-horizon-order` variant.
 *
 * @example
 * ```ts
 * const order: YieldOrder = "newest_first";
 * ```
 */
export type YieldOrder = "newest_first" | "arrival" | "next_horizon";

/**
 * How a `FairQueue` orders tenants; `least_attained` needs the clock its decay reads.
 *
 * @example
 * ```ts
 * const options: FairQueueOptions = { ordering: "least_attained", clock: { now: () => 0 }, serviceTimeConstantMs: 4000 };
 * ```
 */
export interface FairQueueOptions {
  ordering: FairOrdering;
  /** The router's clock (ms); read by `least_attained` only. Pure core: passed in, never `Date`. */
  clock?: { now(): number };
  /** `least_attained`: the time constant of the decay of attained service, ms (a dispatch counts e^-t/tau). */
  serviceTimeConstantMs?: number;
  /** How entries that yield are ordered (default `newest_first`). */
  yieldOrder?: YieldOrder;
  /** `next_horizon`: seconds from a request's start to its client holding the answer (default 4). */
  yieldServiceS?: number;
  /**
   * How a tenant's entries that do not yield are ordered among themselves: `arrival` (the default, FIFO) or
   * `next_horizon` (earliest deadline first on the completion horizons from each one's arrival, `yieldServiceS`
   * before each; needs the clock): a request that can still start within its 5 s horizon goes before one queued
   * long enough that only its 15 s horizon is left, unless that one's deadline comes first.
   */
  freshOrder?: "arrival" | "next_horizon";
  /**
   * While entries that yield wait beside interactive ones, this share of the dispatches goes to the batch class (the
   * first that yields, in `yieldOrder`) instead of strictly last; a credit counter, so deterministic. 0 or absent:
   * entries that yield go only when nothing else waits.
   */
  yieldShare?: number;
  /**
   * While a tenant has two or more entries waiting that do not yield, this share of its dispatches goes to its newest
   * entry that can still start within its 5 s completion horizon (`yieldServiceS` before it) instead of its oldest
   * (adaptive LIFO in part: a standing queue's newest arrival is served while it can still be served soon); a credit
   * counter, so deterministic. 0 or absent: arrival order.
   */
  newestShare?: number;
  /**
   * When `newestShare` applies: while this returns true (the router passes "while the queue stands", which makes
   * `newestShare` 1 Facebook's adaptive LIFO: first in, first out while a queue is transient, newest first once it
   * stands). Absent: always.
   */
  newestWhile?: () => boolean;
  /**
   * Entries that yield go before the others while every waiting entry that does not has waited less than this, ms,
   * and `yieldFirstWhile` says so: the entries that do not yield lend the wait they can spare to those that do.
   * Absent: entries that yield go only when nothing else waits (or on `yieldShare`'s turns).
   */
  yieldFirstUnderMs?: number;
  /** When `yieldFirstUnderMs` applies (the router passes "while the queue does not stand"). Absent: always. */
  yieldFirstWhile?: () => boolean;
}

/**
 * The router's ordering: decayed attained service with a 4 s time constant, long enough to span the gaps between
 * clumps of slot releases. `npm run eval:tenants` with this constant edited: the quiet tenant's p99 beside the
 * burst is 1.54x alone for any tau from 2.5 to 5 s, 1.55x at 2 and 6 s, 1.59x at 8 s, 1.96x at 16 s (a burst
 * starting from nothing is served ahead of the quiet tenant until its service catches up with the quiet one's).
 *
 * @example
 * ```ts
 * const queue = new FairQueue({ ...DEFAULT_FAIR_QUEUE_OPTIONS, clock });
 * ```
 */
export const DEFAULT_FAIR_QUEUE_OPTIONS: Readonly<FairQueueOptions> = {
  ordering: "least_attained",
  serviceTimeConstantMs: 4000,
};

interface TenantQueue {
  weight: number;
  /** Waiting entries in arrival order. */
  entries: Map<string, FairEntry & { seq: number }>;
  /** How many of `entries` yield (0 keeps the head lookup O(1)). */
  yielding: number;
  /** Virtual finish tag of the tenant's last dispatched request (start-time fair queuing). */
  finishTag: number;
  /** `least_attained`: the tenant's decayed dispatch count as of `serviceAtMs`. */
  service: number;
  serviceAtMs: number;
}

/** Below this decayed service an idle tenant's history is forgotten (a hundredth of a dispatch). */
const FORGOTTEN_SERVICE = 0.01;

interface ClassQueue {
  tenants: Map<string, TenantQueue>;
  /** Virtual time: the start tag of the request dispatched last. */
  virtualTime: number;
  size: number;
}

/** A class's next request to dispatch: its tenant's head, with the start tag it would take. */
interface Next {
  entry: FairEntry & { seq: number };
  tenant: TenantQueue;
  classQueue: ClassQueue;
  start: number;
}

/**
 * Per-tenant sub-queues with weighted fair dispatch, two strict priority classes and a total bound with push-out.
 *
 * - **Dispatch**, per class, every request costing 1 (a slot), ties in arrival order; one tenant alone is FIFO.
 *   `least_attained` (the router's default, `DEFAULT_FAIR_QUEUE_OPTIONS`): the head of the tenant with the least
 *   decayed attained service per weight goes first (each dispatch counts e^-(age / tau), as CFS decays its load),
 *   so a tenant below its fair share of recent service - a steady light tenant beside a burst - is served first
 *   whenever it waits, and tenants that are all backlogged take turns by weight. `start_time` (the constructor's
 *   default, kept for comparison): start-time fair queuing (Goyal et al.); a tenant's head starts at `max(V, F)`
 *   (V: the class's virtual time, F: the tenant's last finish tag) and finishes at `start + 1 / weight`, the
 *   smallest start first; an idle tenant restarts at V (no credit), so equal backlogged tenants alternate
 *   whatever their arrival rates.
 * - **Priority**: `interactive` is always dispatched before `batch`; batch is served whenever no interactive
 *   request waits (no starvation while interactive demand is below capacity).
 * - **Bound**: the total never exceeds the capacity given to `offer`. When full, the request refused is the
 *   newest one of the tenant most over its fair share (largest backlog / weight, the newcomer counted; with
 *   `least_attained`, (decayed service + backlog) / weight: the request that order would dispatch last), and a
 *   batch request goes before any interactive one; a batch arrival never displaces interactive work.
 * - **Giving way**: entries that `yield` wait in the batch class behind every batch entry that does not, and count
 *   only towards the queue's own bound (`offer`'s `bound`), not towards another request's capacity. Among them the
 *   order is `yieldOrder`'s: by default adaptive LIFO (Facebook's, at the grain of a request): the one whose client
 *   was first refused most recently goes first - it can still be served soon after its first attempt; the router
 *   asks for `next_horizon` (earliest deadline first on the completion horizons). A request that finds the queue at
 *   its bound pushes out the one first refused longest ago (the one adaptive LIFO would serve last; with `arrival`
 *   order, the newest queued).
 *
 * Pure: the clock is a parameter (the router's); nothing here sleeps or reads the time itself.
 *
 * @example
 * ```ts
 * const q = new FairQueue();
 * q.offer({ ticket: "a1", tenant: "a", weight: 1, priority: "interactive", enqueuedAtMs: 0 }, 100);
 * q.offer({ ticket: "a2", tenant: "a", weight: 1, priority: "interactive", enqueuedAtMs: 1 }, 100);
 * q.offer({ ticket: "b1", tenant: "b", weight: 1, priority: "interactive", enqueuedAtMs: 2 }, 100);
 * [q.dispatch()?.ticket, q.dispatch()?.ticket, q.dispatch()?.ticket]; // ["a1", "b1", "a2"]
 *
 * // Least attained service reads a clock (the router passes its own).
 * const las = new FairQueue({ ordering: "least_attained", clock: { now: () => 0 } });
 * ```
 */
export class FairQueue {
  private readonly ordering: FairOrdering;
  private readonly clock: { now(): number };
  private readonly tauMs: number;
  private readonly newestFirst: boolean;
  /** `next_horizon`: the service time its deadlines allow for, ms; undefined for the other orders. */
  private readonly horizonServiceMs: number | undefined;
  /** `freshOrder` `next_horizon`: the same for the entries that do not yield; undefined in arrival order. */
  private readonly freshServiceMs: number | undefined;
  private readonly yieldShare: number;
  /** `yieldShare`'s credit: grows by the share at each dispatch while both kinds wait; at 1 the batch class goes. */
  private yieldCredit = 0;
  private readonly newestShare: number;
  /** `newestShare`'s credit: grows by the share at each dispatch from a tenant with two or more waiting; at 1 the newest goes. */
  private newestCredit = 0;
  private readonly newestWhile: () => boolean;
  private readonly yieldFirstUnderMs: number | undefined;
  private readonly yieldFirstWhile: () => boolean;
  /** `newestShare`: the latest a newest entry may start after its arrival and still be answered within 5 s, ms. */
  private readonly newestStartByMs: number;
  /** Every waiting entry in arrival order (for expiry, which sheds the oldest first). */
  private readonly byArrival = new Map<string, FairEntry & { seq: number }>();
  private readonly classes: Record<PriorityClass, ClassQueue> = {
    interactive: { tenants: new Map(), virtualTime: 0, size: 0 },
    batch: { tenants: new Map(), virtualTime: 0, size: 0 },
  };
  private seq = 0;
  /** Waiting entries that yield (all in the batch class). */
  private yielding = 0;
  /** The latest `enqueuedAtMs` offered so far: entries arriving in time order append (the common case). */
  private latestEnqueuedAtMs = Number.NEGATIVE_INFINITY;
  /** The next dispatch, as computed by the last `peek` (cleared by every change): finishRound peeks, then takes. */
  private next: Next | undefined;

  constructor(options: FairQueueOptions = { ordering: "start_time" }) {
    this.ordering = options.ordering;
    if (options.ordering === "least_attained" && !options.clock)
      throw new Error("FairQueue: least_attained ordering needs a clock");
    if (options.yieldOrder === "next_horizon" && !options.clock)
      throw new Error("FairQueue: the next_horizon order of entries that yield needs a clock");
    if (options.freshOrder === "next_horizon" && !options.clock)
      throw new Error("FairQueue: the next_horizon order of entries that do not yield needs a clock");
    this.clock = options.clock ?? { now: () => 0 };
    this.tauMs = options.serviceTimeConstantMs ?? (DEFAULT_FAIR_QUEUE_OPTIONS.serviceTimeConstantMs as number);
    this.newestFirst = (options.yieldOrder ?? "newest_first") !== "arrival";
    this.horizonServiceMs =
      options.yieldOrder === "next_horizon" ? 1000 * (options.yieldServiceS ?? DEFAULT_YIELD_SERVICE_S) : undefined;
    this.freshServiceMs =
      options.freshOrder === "next_horizon" ? 1000 * (options.yieldServiceS ?? DEFAULT_YIELD_SERVICE_S) : undefined;
    this.yieldShare = options.yieldShare ?? 0;
    this.newestShare = options.newestShare ?? 0;
    this.newestWhile = options.newestWhile ?? (() => true);
    this.yieldFirstUnderMs = options.yieldFirstUnderMs;
    this.yieldFirstWhile = options.yieldFirstWhile ?? (() => true);
    this.newestStartByMs =
      1000 * ((COMPLETION_HORIZONS_FOR_ORDER[0] as number) - (options.yieldServiceS ?? DEFAULT_YIELD_SERVICE_S));
  }

  get size(): number {
    return this.byArrival.size;
  }

  has(ticket: string): boolean {
    return this.byArrival.has(ticket);
  }

  /** Waiting entries, oldest first. */
  entries(): IterableIterator<FairEntry> {
    return this.byArrival.values();
  }

  /** Waiting requests of one tenant in one class. */
  backlogOf(tenant: string, priority: PriorityClass): number {
    return this.classes[priority].tenants.get(tenant)?.entries.size ?? 0;
  }

  /**
   * Queues `entry` if fewer than `capacity` wait; when full, pushes out the newest request of the tenant most over
   * its fair share, or refuses `entry` when that is its own tenant (or it is batch and no batch request waits).
   * Entries that yield are not counted against `capacity`, only against `bound` (the queue's own bound, at least
   * `capacity`): at the bound, one of them gives its place (the one first refused longest ago; with `arrival`
   * order, the newest). An entry that yields is queued in the batch class while fewer than `capacity` wait in all,
   * and pushes nobody out.
   */
  offer(entry: FairEntry, capacity: number, bound = capacity): OfferResult {
    let displaced: FairEntry | undefined;
    if (entry.yields) {
      if (this.size >= capacity) return { kind: "refused" };
    } else if (this.size - this.yielding >= capacity) {
      const victim = this.pushOutVictim(entry);
      if (victim === undefined) return { kind: "refused" };
      displaced = this.remove(victim);
    } else if (this.size >= Math.max(capacity, bound)) {
      displaced = this.remove(this.stalestYielding() as string);
    }
    this.next = undefined;
    const stamped = {
      ticket: entry.ticket,
      tenant: entry.tenant,
      weight: entry.weight,
      priority: entry.priority,
      enqueuedAtMs: entry.enqueuedAtMs,
      fingerprint: entry.fingerprint,
      horizonS: entry.horizonS,
      ...(entry.yields ? { yields: true, priority: "batch" as const, firstRefusedAtMs: entry.firstRefusedAtMs } : {}),
      seq: this.seq++,
    };
    if (stamped.yields) this.yielding += 1;
    const classQueue = this.classes[stamped.priority];
    let tenant = classQueue.tenants.get(entry.tenant);
    if (!tenant) {
      tenant = {
        weight: entry.weight,
        entries: new Map(),
        yielding: 0,
        finishTag: classQueue.virtualTime,
        service: 0,
        serviceAtMs: 0,
      };
      classQueue.tenants.set(entry.tenant, tenant);
    }
    tenant.weight = entry.weight;
    if (stamped.yields) tenant.yielding += 1;
    classQueue.size += 1;
    if (entry.enqueuedAtMs >= this.latestEnqueuedAtMs) {
      this.latestEnqueuedAtMs = entry.enqueuedAtMs;
      tenant.entries.set(entry.ticket, stamped);
      this.byArrival.set(entry.ticket, stamped);
    } else {
      // Older than the newest waiting request (a request re-acquired after a router reset keeps its first
      // arrival): it goes ahead of younger ones, in its tenant's order and in expiry's. Rare, so O(n) is fine.
      insertByArrival(tenant.entries, stamped);
      insertByArrival(this.byArrival, stamped);
    }
    return displaced ? { kind: "queued", displaced } : { kind: "queued" };
  }

  /**
   * The request `dispatch` would take now. With `eligible`, the first in fair order among the tenants it accepts in
   * the head's class (the highest class waiting): a request the router may not place does not let a lower class by.
   */
  peek(eligible?: (tenant: string) => boolean): FairEntry | undefined {
    if (eligible) return this.nextEligible(eligible)?.entry;
    if (this.yieldingMovesWithTime()) this.next = undefined;
    if (this.freshServiceMs !== undefined) this.next = undefined;
    // While the newest takes turns, the answer holds for this instant only: not cached for a later one.
    if (this.newestTurns()) {
      this.next = undefined;
      return this.nextInClasses()?.entry;
    }
    this.next ??= this.nextInClasses();
    return this.next?.entry;
  }

  /** Takes the next request in fair order (with `eligible`: as `peek(eligible)` names it) and advances its class's virtual time. */
  dispatch(eligible?: (tenant: string) => boolean): FairEntry | undefined {
    if (this.yieldingMovesWithTime()) this.next = undefined;
    if (this.freshServiceMs !== undefined || this.newestTurns()) this.next = undefined;
    const next = eligible ? this.nextEligible(eligible) : (this.next ?? this.nextInClasses());
    if (!next) return undefined;
    this.spendCredits(next);
    next.classQueue.virtualTime = next.start;
    next.tenant.finishTag = next.start + 1 / next.tenant.weight;
    if (this.ordering === "least_attained") {
      const now = this.clock.now();
      next.tenant.service = this.serviceOf(next.tenant, now) + 1;
      next.tenant.serviceAtMs = now;
    }
    this.remove(next.entry.ticket);
    return next.entry;
  }

  /** Removes a waiting request (dispatched elsewhere, cancelled, expired); `undefined` if it was not waiting. */
  remove(ticket: string): FairEntry | undefined {
    const entry = this.byArrival.get(ticket);
    if (!entry) return undefined;
    this.next = undefined;
    this.byArrival.delete(ticket);
    const classQueue = this.classes[entry.priority];
    const tenant = classQueue.tenants.get(entry.tenant);
    tenant?.entries.delete(ticket);
    if (tenant && entry.yields) tenant.yielding -= 1;
    classQueue.size -= 1;
    if (entry.yields) this.yielding -= 1;
    return entry;
  }

  /** Removes everything, oldest first. */
  clear(): FairEntry[] {
    const all = [...this.byArrival.values()];
    for (const entry of all) this.remove(entry.ticket);
    return all;
  }

  /**
   * How many waiting requests would be dispatched before a new request of `tenant` (the input of its
   * Retry-After): every waiting request of a higher class, its own backlog in its class, and of each other tenant
   * in its class as many as fair dispatch serves while it is served its backlog plus one, i.e.
   * `min(backlog_j, floor((backlog + 1) * weight_j / weight))`. With a single tenant this is the queue length;
   * a light tenant beside a heavy one is told a short wait, the heavy one a long one.
   */
  aheadOf(tenant: string, weight: number, priority: PriorityClass): number {
    const own = this.backlogOf(tenant, priority);
    let ahead = priority === "batch" ? this.classes.interactive.size : 0;
    ahead += own;
    const classQueue = this.classes[priority];
    if (this.ordering === "least_attained") {
      // Another tenant goes first while its service per weight is below this one's at its new request's turn.
      const now = this.clock.now();
      const mine = classQueue.tenants.get(tenant);
      const turn = ((mine ? this.serviceOf(mine, now) : 0) + own + 1) / weight;
      for (const [name, other] of classQueue.tenants) {
        if (name === tenant) continue;
        const served = Math.ceil(turn * other.weight - this.serviceOf(other, now));
        ahead += Math.min(other.entries.size, Math.max(0, served));
      }
      return ahead;
    }
    for (const [name, other] of classQueue.tenants) {
      if (name === tenant) continue;
      ahead += Math.min(other.entries.size, Math.floor(((own + 1) * other.weight) / weight));
    }
    return ahead;
  }

  /** `least_attained`: a tenant's dispatches, each decayed by e^-(age / tau). */
  private serviceOf(tenant: TenantQueue, now: number): number {
    if (tenant.service === 0) return 0;
    return tenant.service * Math.exp(-Math.max(0, now - tenant.serviceAtMs) / this.tauMs);
  }

  /**
   * Whether the newest may take turns now (`newestShare` on and `newestWhile` saying so): its deadlines pass with
   * time alone, so no dispatch is remembered from an earlier instant then. Off (the router's queue not standing),
   * the cached next dispatch stays right until the queue changes.
   */
  private newestTurns(): boolean {
    return this.newestShare > 0 && this.newestWhile();
  }

  /** `yieldShare` and `newestShare`: each dispatch earns its share of a turn, and a turn taken costs a whole one. */
  private spendCredits(next: Next): void {
    if (this.yieldShare > 0 && this.yielding > 0 && this.classes.interactive.size > 0) {
      this.yieldCredit += this.yieldShare;
      if (next.classQueue === this.classes.batch) this.yieldCredit -= 1;
    }
    if (this.newestTurns() && next.tenant.entries.size - next.tenant.yielding > 1) {
      // A turn the newest could not take (it was too late for its 5 s) is kept, but not banked: no run of newest
      // turns after a spell of late arrivals.
      const taken = next.entry !== headOf(next.tenant);
      this.newestCredit = Math.min(this.newestCredit, 1) + this.newestShare - (taken ? 1 : 0);
    }
  }

  /** The next dispatch: interactive first, unless it is the batch class's turn (`yieldShare`). */
  private nextInClasses(): Next | undefined {
    const { interactive, batch } = this.classes;
    if (this.yielding > 0 && (this.yieldCredit >= 1 - 1e-9 || this.othersCanWait()))
      return this.nextIn(batch) ?? this.nextIn(interactive);
    return this.nextIn(interactive) ?? this.nextIn(batch);
  }

  /**
   * Whether, with entries that yield waiting, the next dispatch can change with time alone (their `next_horizon`
   * deadlines, or `yieldFirstUnderMs`'s waits): then no dispatch is remembered from an earlier instant.
   */
  private yieldingMovesWithTime(): boolean {
    return this.yielding > 0 && (this.horizonServiceMs !== undefined || this.yieldFirstUnderMs !== undefined);
  }

  /**
   * `yieldFirstUnderMs`: whether every waiting entry that does not yield has waited less than it (and
   * `yieldFirstWhile` says so). O(n) in the entries that yield ahead of the oldest that does not.
   */
  private othersCanWait(): boolean {
    if (this.yieldFirstUnderMs === undefined || !this.yieldFirstWhile()) return false;
    for (const e of this.byArrival.values())
      if (!e.yields) return this.clock.now() - e.enqueuedAtMs < this.yieldFirstUnderMs;
    return true;
  }

  /** The next dispatch among the `eligible` tenants of the highest class waiting. */
  private nextEligible(eligible: (tenant: string) => boolean): Next | undefined {
    const { interactive, batch } = this.classes;
    return this.nextIn(interactive.size > 0 ? interactive : batch, eligible);
  }

  /**
   * The smallest start tag of a class's tenants' heads (ties: the older head), among the `eligible` tenants when
   * given; prunes idle tenants' state.
   */
  private nextIn(classQueue: ClassQueue, eligible?: (tenant: string) => boolean): Next | undefined {
    if (classQueue.size === 0) return undefined;
    if (this.ordering === "least_attained") return this.leastAttainedIn(classQueue, eligible);
    let bestEntry: (FairEntry & { seq: number }) | undefined;
    let bestTenant: TenantQueue | undefined;
    let bestStart = 0;
    for (const [name, tenant] of classQueue.tenants) {
      const head = this.headOf(tenant);
      if (head === undefined) {
        // An idle tenant whose last finish is behind virtual time has nothing left to remember.
        if (tenant.finishTag <= classQueue.virtualTime) classQueue.tenants.delete(name);
        continue;
      }
      if (eligible && !eligible(name)) continue;
      const start = Math.max(classQueue.virtualTime, tenant.finishTag);
      if (!bestEntry || start < bestStart || (start === bestStart && head.seq < bestEntry.seq)) {
        bestEntry = head;
        bestTenant = tenant;
        bestStart = start;
      }
    }
    return bestEntry && { entry: bestEntry, tenant: bestTenant as TenantQueue, classQueue, start: bestStart };
  }

  /**
   * `least_attained`: the head of the tenant with the least decayed service per weight (ties: the older head);
   * forgets idle tenants whose service has decayed away. Decay scales every tenant's service by the same factor,
   * so this order does not change with time alone (the cached `next` stays right until the queue changes).
   */
  private leastAttainedIn(classQueue: ClassQueue, eligible?: (tenant: string) => boolean): Next | undefined {
    const now = this.clock.now();
    let best: Next | undefined;
    let bestLoad = 0;
    for (const [name, tenant] of classQueue.tenants) {
      const service = this.serviceOf(tenant, now);
      const head = this.headOf(tenant);
      if (head === undefined) {
        if (service < FORGOTTEN_SERVICE) classQueue.tenants.delete(name);
        continue;
      }
      if (eligible && !eligible(name)) continue;
      const load = service / tenant.weight;
      if (!best || load < bestLoad || (load === bestLoad && head.seq < best.entry.seq)) {
        best = { entry: head, tenant, classQueue, start: classQueue.virtualTime };
        bestLoad = load;
      }
    }
    return best;
  }

  /**
   * The request to push out for `entry` when the queue is full, or `undefined` to refuse `entry` itself: the
   * newest request of the tenant with the largest backlog per weight (the newcomer counted, and winning ties),
   * looking at batch first; a batch newcomer only ever looks at batch. Entries that yield are not counted (they
   * hold no room) and never chosen: the caller found the queue full without them.
   */
  private pushOutVictim(entry: FairEntry): string | undefined {
    const batch = this.classes.batch;
    const pool =
      batch.size > this.yielding ? batch : entry.priority === "interactive" ? this.classes.interactive : undefined;
    if (!pool) return undefined;
    const samePool = pool === this.classes[entry.priority];
    // least_attained counts recent service too: the victim is the request that ordering would dispatch last.
    const attained = this.ordering === "least_attained";
    const now = attained ? this.clock.now() : 0;
    const own = samePool ? pool.tenants.get(entry.tenant) : undefined;
    const ownService = attained && own ? this.serviceOf(own, now) : 0;
    let worstLoad = samePool ? (ownService + (own ? this.holding(own) : 0) + 1) / entry.weight : -1;
    let victim: TenantQueue | undefined;
    for (const [name, tenant] of pool.tenants) {
      if (samePool && name === entry.tenant) continue;
      const holding = this.holding(tenant);
      const load = ((attained ? this.serviceOf(tenant, now) : 0) + holding) / tenant.weight;
      if (holding > 0 && load > worstLoad) {
        worstLoad = load;
        victim = tenant;
      }
    }
    if (!victim) return undefined;
    return [...victim.entries.values()].reverse().find((e) => !e.yields)?.ticket;
  }

  /** A tenant's waiting entries that hold room (all but those that yield; counted only while some do). */
  private holding(tenant: TenantQueue): number {
    if (this.yielding === 0) return tenant.entries.size;
    let n = 0;
    for (const e of tenant.entries.values()) if (!e.yields) n += 1;
    return n;
  }

  private headOf(tenant: TenantQueue): (FairEntry & { seq: number }) | undefined {
    if (this.newestCredit >= 1 - 1e-9 && tenant.entries.size - tenant.yielding > 1 && this.newestTurns()) {
      const newest = this.newestInTime(tenant);
      if (newest) return newest;
    }
    const freshMs = this.freshServiceMs;
    if (freshMs !== undefined && tenant.entries.size > tenant.yielding) {
      // Earliest next-horizon deadline first among the entries that do not yield (ties: the older); O(n).
      const nowMs = this.clock.now();
      let head: (FairEntry & { seq: number }) | undefined;
      let headBy = Number.POSITIVE_INFINITY;
      for (const e of tenant.entries.values()) {
        if (e.yields) continue;
        const by = nextHorizonDeadline(e, nowMs, freshMs);
        if (!head || by < headBy) [head, headBy] = [e, by];
      }
      return head;
    }
    if (tenant.yielding === 0 || !this.newestFirst) return headOf(tenant);
    const serviceMs = this.horizonServiceMs;
    if (serviceMs === undefined) return headOf(tenant, (a, b) => yieldRank(a) > yieldRank(b));
    const nowMs = this.clock.now();
    return headOf(tenant, (a, b) => {
      const [byA, byB] = [nextHorizonDeadline(a, nowMs, serviceMs), nextHorizonDeadline(b, nowMs, serviceMs)];
      return byA < byB || (byA === byB && yieldRank(a) > yieldRank(b));
    });
  }

  /**
   * `newestShare`: a tenant's newest entry that does not yield, when it is not its oldest and can still start within
   * its 5 s horizon; O(n) in the tenant's entries (a Map iterates from its oldest), only on the newest's turns.
   */
  private newestInTime(tenant: TenantQueue): (FairEntry & { seq: number }) | undefined {
    let newest: (FairEntry & { seq: number }) | undefined;
    for (const e of tenant.entries.values()) if (!e.yields) newest = e;
    if (!newest || newest === headOf(tenant)) return undefined;
    return newest.enqueuedAtMs + this.newestStartByMs >= this.clock.now() ? newest : undefined;
  }

  /**
   * The waiting entry that yields whose client was first refused longest ago (ties: the newest queued; with
   * `arrival` order: the newest queued); O(n), only when the queue is at its bound with some of them waiting.
   */
  private stalestYielding(): string | undefined {
    let stalest: FairEntry | undefined;
    for (const e of this.byArrival.values())
      if (e.yields && (!stalest || !this.newestFirst || yieldRank(e) <= yieldRank(stalest))) stalest = e;
    return stalest?.ticket;
  }
}

/** When an entry's client was first refused: the order of entries that yield (newest first). */
function yieldRank(entry: FairEntry): number {
  return entry.firstRefusedAtMs ?? entry.enqueuedAtMs;
}

/**
 * A tenant's next entry in its class: the oldest, except that, given an order of the entries that yield
 * (`before(a, b)`: a goes before b), those come after every other one, the first in that order first. O(1) without
 * an order or while none yields; else O(n) in the tenant's entries (a queue the size of `max_queued_requests`, and
 * only while an overload demotes requests).
 */
function headOf(
  tenant: TenantQueue,
  before?: (a: FairEntry, b: FairEntry) => boolean,
): (FairEntry & { seq: number }) | undefined {
  if (tenant.yielding === 0 || !before) return tenant.entries.values().next().value;
  let head: (FairEntry & { seq: number }) | undefined;
  for (const e of tenant.entries.values()) {
    if (!e.yields) return e;
    if (!head || before(e, head)) head = e;
  }
  return head;
}

/**
 * The completion horizons `next_horizon` orders by (and the ledger's horizon packing keeps a promise within),
 * seconds: the completion curve's (issue 15's targets, what clients feel: served within 5, 15, 30, 60, 120 s of the
 * first attempt).
 *
 * @example
 * ```ts
 * COMPLETION_HORIZONS_FOR_ORDER[0]; // 5
 * ```
 */
export const COMPLETION_HORIZONS_FOR_ORDER: readonly number[] = [5, 15, 30, 60, 120];

/**
 * `next_horizon`'s default time from start to answer, seconds: about a simulated replica's full-batch service.
 * `npm run eval:variant` with 2, 4 and 6 s: summed worst curve gaps -62.5, -59.2 and -61.4 (`newest_first`: -62.5).
 */
export const DEFAULT_YIELD_SERVICE_S = 4;

/** The start-by instant of the next completion horizon an entry can still make (ms); Infinity past every one. */
function nextHorizonDeadline(e: FairEntry, nowMs: number, serviceMs: number): number {
  return nextHorizonStartByMs(yieldRank(e), nowMs, serviceMs);
}

/**
 * The latest instant (ms) a request first seen at `firstMs` may start and still be answered within the first
 * completion horizon it can make when it starts at `nowMs`, `serviceMs` from start to answer; Infinity past every
 * horizon. The demoted's `next_horizon` order and the ledger's horizon packing both read it.
 *
 * @example
 * ```ts
 * nextHorizonStartByMs(0, 2_000, 4_000); // 11_000: the 5 s horizon needed a start by 1 s; the 15 s one allows 11 s
 * ```
 */
export function nextHorizonStartByMs(firstMs: number, nowMs: number, serviceMs: number): number {
  for (const h of COMPLETION_HORIZONS_FOR_ORDER) {
    const startBy = firstMs + h * 1000 - serviceMs;
    if (startBy >= nowMs) return startBy;
  }
  return Number.POSITIVE_INFINITY;
}

/** Puts `entry` into `map` (which is in `enqueuedAtMs` order) before the first entry that arrived after it. */
function insertByArrival<T extends FairEntry>(map: Map<string, T>, entry: T): void {
  const entries = [...map.values()];
  const at = entries.findIndex((e) => e.enqueuedAtMs > entry.enqueuedAtMs);
  if (at < 0) {
    map.set(entry.ticket, entry);
    return;
  }
  entries.splice(at, 0, entry);
  map.clear();
  for (const e of entries) map.set(e.ticket, e);
}
