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
}

/** The answer to `offer`: queued (possibly pushing another tenant's request out), or refused. */
export type OfferResult = { kind: "queued"; displaced?: FairEntry } | { kind: "refused" };

interface TenantQueue {
  weight: number;
  /** Waiting entries in arrival order. */
  entries: Map<string, FairEntry & { seq: number }>;
  /** Virtual finish tag of the tenant's last dispatched request (start-time fair queuing). */
  finishTag: number;
}

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
 * - **Dispatch**: start-time fair queuing (Goyal et al.) per class, with every request costing 1 (a slot). A
 *   tenant's head request starts at `max(V, F)` (V: the class's virtual time, F: the tenant's last finish tag)
 *   and finishes at `start + 1 / weight`; the smallest start goes first, ties in arrival order. A tenant that was
 *   idle starts at V (no credit banked), so with one tenant, or equal tenants taking turns, this is FIFO.
 * - **Priority**: `interactive` is always dispatched before `batch`; batch is served whenever no interactive
 *   request waits (no starvation while interactive demand is below capacity).
 * - **Bound**: the total never exceeds the capacity given to `offer`. When full, the request refused is the
 *   newest one of the tenant most over its fair share (largest backlog / weight, the newcomer counted), and a
 *   batch request goes before any interactive one; a batch arrival never displaces interactive work.
 *
 * Pure: times are parameters; nothing here sleeps or reads a clock.
 *
 * @example
 * ```ts
 * const q = new FairQueue();
 * q.offer({ ticket: "a1", tenant: "a", weight: 1, priority: "interactive", enqueuedAtMs: 0 }, 100);
 * q.offer({ ticket: "a2", tenant: "a", weight: 1, priority: "interactive", enqueuedAtMs: 1 }, 100);
 * q.offer({ ticket: "b1", tenant: "b", weight: 1, priority: "interactive", enqueuedAtMs: 2 }, 100);
 * [q.dispatch()?.ticket, q.dispatch()?.ticket, q.dispatch()?.ticket]; // ["a1", "b1", "a2"]
 * ```
 */
export class FairQueue {
  /** Every waiting entry in arrival order (for expiry, which sheds the oldest first). */
  private readonly byArrival = new Map<string, FairEntry & { seq: number }>();
  private readonly classes: Record<PriorityClass, ClassQueue> = {
    interactive: { tenants: new Map(), virtualTime: 0, size: 0 },
    batch: { tenants: new Map(), virtualTime: 0, size: 0 },
  };
  private seq = 0;
  /** The latest `enqueuedAtMs` offered so far: entries arriving in time order append (the common case). */
  private latestEnqueuedAtMs = Number.NEGATIVE_INFINITY;
  /** The next dispatch, as computed by the last `peek` (cleared by every change): finishRound peeks, then takes. */
  private next: Next | undefined;

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
   */
  offer(entry: FairEntry, capacity: number): OfferResult {
    let displaced: FairEntry | undefined;
    if (this.size >= capacity) {
      const victim = this.pushOutVictim(entry);
      if (victim === undefined) return { kind: "refused" };
      displaced = this.remove(victim);
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
      seq: this.seq++,
    };
    const classQueue = this.classes[entry.priority];
    let tenant = classQueue.tenants.get(entry.tenant);
    if (!tenant) {
      tenant = { weight: entry.weight, entries: new Map(), finishTag: classQueue.virtualTime };
      classQueue.tenants.set(entry.tenant, tenant);
    }
    tenant.weight = entry.weight;
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

  /** The request `dispatch` would take now. */
  peek(): FairEntry | undefined {
    this.next ??= this.nextIn(this.classes.interactive) ?? this.nextIn(this.classes.batch);
    return this.next?.entry;
  }

  /** Takes the next request in fair order and advances its class's virtual time. */
  dispatch(): FairEntry | undefined {
    const next = this.next ?? this.nextIn(this.classes.interactive) ?? this.nextIn(this.classes.batch);
    if (!next) return undefined;
    next.classQueue.virtualTime = next.start;
    next.tenant.finishTag = next.start + 1 / next.tenant.weight;
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
    classQueue.tenants.get(entry.tenant)?.entries.delete(ticket);
    classQueue.size -= 1;
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
    for (const [name, other] of this.classes[priority].tenants) {
      if (name === tenant) continue;
      ahead += Math.min(other.entries.size, Math.floor(((own + 1) * other.weight) / weight));
    }
    return ahead;
  }

  /** The smallest start tag of a class's tenants' heads (ties: the older head); prunes idle tenants' state. */
  private nextIn(classQueue: ClassQueue): Next | undefined {
    if (classQueue.size === 0) return undefined;
    let bestEntry: (FairEntry & { seq: number }) | undefined;
    let bestTenant: TenantQueue | undefined;
    let bestStart = 0;
    for (const [name, tenant] of classQueue.tenants) {
      const head = tenant.entries.values().next().value;
      if (head === undefined) {
        // An idle tenant whose last finish is behind virtual time has nothing left to remember.
        if (tenant.finishTag <= classQueue.virtualTime) classQueue.tenants.delete(name);
        continue;
      }
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
   * The request to push out for `entry` when the queue is full, or `undefined` to refuse `entry` itself: the
   * newest request of the tenant with the largest backlog per weight (the newcomer counted, and winning ties),
   * looking at batch first; a batch newcomer only ever looks at batch.
   */
  private pushOutVictim(entry: FairEntry): string | undefined {
    const batch = this.classes.batch;
    const pool = batch.size > 0 ? batch : entry.priority === "interactive" ? this.classes.interactive : undefined;
    if (!pool) return undefined;
    const samePool = pool === this.classes[entry.priority];
    let worstLoad = samePool ? (this.backlogOf(entry.tenant, entry.priority) + 1) / entry.weight : -1;
    let victim: TenantQueue | undefined;
    for (const [name, tenant] of pool.tenants) {
      if (samePool && name === entry.tenant) continue;
      const load = tenant.entries.size / tenant.weight;
      if (tenant.entries.size > 0 && load > worstLoad) {
        worstLoad = load;
        victim = tenant;
      }
    }
    if (!victim) return undefined;
    return [...victim.entries.keys()].at(-1);
  }
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
