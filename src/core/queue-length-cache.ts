/** One replica's cached queue length. */
export interface QueueLengthEntry {
  /** Requests the replica holds (its own report, adjusted by our assignments and completions since). */
  queueLength: number;
  /** When the replica last reported (ms), or, after a failed probe or request, when that failed (`isDown` counts from it). */
  reportedAtMs: number;
  /** False after a failed or timed-out probe, until a probe succeeds. */
  valid: boolean;
  /**
   * True when the replica could not be reached at all (a refused connection, an error answer, a failed request);
   * false when it was only slow to answer. Only unreachable replicas make the fleet "down".
   */
  unreachable: boolean;
}

/** Entries older than this are stale and re-probed (Ray Serve: 10 s). */
export const QUEUE_LENGTH_STALE_MS = 10_000;
/**
 * A replica whose probe failed counts as down for this long; after it, it is worth probing again. Without
 * this, a fleet marked down would refuse every request before any probe could see it come back.
 */
export const DOWN_RECHECK_MS = 1_000;

/**
 * Per-replica queue lengths: +1 on assign, -1 on completion, set from the replica's own report. An entry
 * that is missing, invalid, stale, or at or above the cap needs a probe (else a replica that looked full
 * once would never be tried again).
 *
 * @example
 * ```ts
 * const cache = new QueueLengthCache(2);
 * cache.report("http://a", 0, 0);
 * cache.needsProbe("http://a", 5_000); // false: fresh and below the cap
 * cache.assign("http://a");
 * cache.assign("http://a");
 * cache.needsProbe("http://a", 5_000); // true: at the cap
 * cache.knownFree("http://a", 5_000); // false: full
 * cache.complete("http://a");
 * cache.knownFree("http://a", 5_000); // true: our own completion freed a slot, on a fresh report
 * cache.knownFree("http://a", 20_000); // false: the report is stale, ask first
 * cache.probeSent("http://a");
 * cache.complete("http://a"); // a response ends while the probe is out
 * cache.report("http://a", 0, 20_000); // the answer shows the room: the slot freed meanwhile stays known free
 * cache.knownFree("http://a", 20_000); // true
 *
 * const counted = new QueueLengthCache(2, undefined, ["http://b"]); // never probed: it counts its own requests
 * counted.needsProbe("http://b", 0); // false
 * counted.accepts("http://b"); // true (0 in flight)
 * ```
 */
export class QueueLengthCache {
  private readonly entries = new Map<string, QueueLengthEntry>();

  private readonly unprobed: ReadonlySet<string>;
  /** Per replica: completions since its last report not yet taken by an assignment (slots the owner freed). */
  private readonly freed = new Map<string, number>();
  /** Per replica with a probe out: the owner's completions there since the probe was sent. */
  private readonly completedWhileProbing = new Map<string, number>();
  /**
   * Probed replicas that refused a request as full themselves (`markFull`) and have not reported since, each with
   * whether a probe has been sent since its mark. Only such a probe's report clears the mark: one sent before it
   * may have read the replica before its 429. (Like `completedWhileProbing`, this assumes one probe of a replica
   * out at a time, as the router's one placement round at a time sends them.)
   */
  private readonly toldFull = new Map<string, { probedSince: boolean }>();
  /**
   * Replicas that failed (a request to one was refused or cut: `invalidate` as unreachable) while a probe of them
   * was out: that probe's answer may have been read before the failure, and must not bring the replica back; the
   * next probe, sent after it, may.
   */
  private readonly failedWhileProbing = new Set<string>();

  /**
   * `unprobed` replicas are never probed: their entry starts valid at 0 and moves only by `assign` and
   * `complete` (the requests this cache's owner has in flight there), and one marked failed comes back by
   * itself after `DOWN_RECHECK_MS`, since no probe will ever say it is up.
   */
  constructor(
    private readonly cap: number,
    private readonly staleMs = QUEUE_LENGTH_STALE_MS,
    unprobed: readonly string[] = [],
  ) {
    this.unprobed = new Set(unprobed);
    for (const replica of this.unprobed) {
      this.entries.set(replica, { queueLength: 0, reportedAtMs: 0, valid: true, unreachable: false });
    }
  }

  get(replica: string): QueueLengthEntry | undefined {
    return this.entries.get(replica);
  }

  /** True when the replica must be probed before it can be chosen; always false for an unprobed replica. */
  needsProbe(replica: string, nowMs: number): boolean {
    const entry = this.entries.get(replica);
    if (this.unprobed.has(replica)) {
      // Nothing will ever report on it: once the down period is over it is worth trying again.
      if (entry && !entry.valid && nowMs - entry.reportedAtMs >= DOWN_RECHECK_MS) {
        entry.valid = true;
        entry.unreachable = false;
      }
      return false;
    }
    if (!entry?.valid) return true;
    return nowMs - entry.reportedAtMs > this.staleMs || entry.queueLength >= this.cap || this.toldFull.has(replica);
  }

  /**
   * True when the replica has a free slot the owner itself freed: fresh (or unprobed), valid, below the cap, and -
   * for a probed replica - one of the owner's completions since the last report not yet taken by an assignment.
   * A report's own "below the cap" does not count: with several routers, others may have filled that room since.
   */
  knownFree(replica: string, nowMs: number): boolean {
    if (this.needsProbe(replica, nowMs) || !this.accepts(replica)) return false;
    return this.unprobed.has(replica) || (this.freed.get(replica) ?? 0) > 0;
  }

  /**
   * True unless the cache knows the replica has no room: down (unreachable, within its recheck period), or full on a
   * report younger than the stale age. A replica never reported, one due for a recheck, one full on a stale report,
   * or one full only by its own word since its report (`markFull`) may have room: a probe will tell. What a router with nothing waiting asks before it refuses (only queued
   * requests start placement rounds, whose probes would tell).
   *
   * @example
   * ```ts
   * const cache = new QueueLengthCache(1);
   * cache.mayHaveRoom("http://a", 0); // true: never reported
   * cache.report("http://a", 1, 0);
   * cache.mayHaveRoom("http://a", 5_000); // false: full, on a fresh report
   * cache.mayHaveRoom("http://a", 20_000); // true: the report is stale
   * ```
   */
  mayHaveRoom(replica: string, nowMs: number): boolean {
    if (this.isDown(replica, nowMs)) return false;
    const entry = this.entries.get(replica);
    if (!entry?.valid || entry.queueLength < this.cap) return true;
    if (this.unprobed.has(replica)) return false;
    return nowMs - entry.reportedAtMs > this.staleMs || this.toldFull.has(replica);
  }

  /**
   * True when the entry is valid and below the cap, and the replica has not said it is full since its last report
   * (`markFull`): the owner's completions there after its 429 do not give it room back, only a probe's report does.
   */
  accepts(replica: string): boolean {
    const entry = this.entries.get(replica);
    return entry?.valid === true && entry.queueLength < this.cap && !this.toldFull.has(replica);
  }

  /**
   * A probe of the replica was sent: completions from now until its answer are counted, because the answer may
   * have been read before or after them (see `report`).
   */
  probeSent(replica: string): void {
    this.completedWhileProbing.set(replica, 0);
    this.failedWhileProbing.delete(replica);
    const mark = this.toldFull.get(replica);
    if (mark) mark.probedSince = true;
  }

  /**
   * Sets the entry from the replica's own report. The slots the owner freed before the report are in it and are no
   * longer the owner's alone (another router may take them); but those freed while its probe was out stay the
   * owner's, as many as the report still shows room for - the owner released them after the replica had freed them,
   * so a report that shows room may show exactly that room, and dropping the claim would leave it to the random
   * pair to find (with backoff while it does not).
   *
   * A replica that said it was full (`markFull`) stays full, whatever the report, unless the probe was sent after
   * it said so (`probeSent`): an older reading may show the very room the 429 says others have taken since. For the
   * same reason a replica that failed while the probe was out (`invalidate`) stays down: the report is dropped.
   */
  report(replica: string, queueLength: number, nowMs: number): void {
    // Read before the replica failed (see `failedWhileProbing`): the failure, newer, stands.
    if (this.failedWhileProbing.delete(replica)) return;
    const whileProbing = this.completedWhileProbing.get(replica) ?? 0;
    this.completedWhileProbing.delete(replica);
    const stillFull = this.toldFull.get(replica)?.probedSince === false;
    this.toldFull.delete(replica);
    const kept = Math.min(whileProbing, this.freed.get(replica) ?? 0, this.cap - Math.max(0, queueLength));
    if (kept > 0) this.freed.set(replica, kept);
    else this.freed.delete(replica);
    this.entries.set(replica, {
      queueLength: Math.max(0, queueLength),
      reportedAtMs: nowMs,
      valid: true,
      unreachable: false,
    });
    // The reading predates the 429: the replica's own word, newer, stands (and the next round probes it again).
    if (stillFull) this.markFull(replica, nowMs);
  }

  /**
   * Marks the entry invalid after a failed probe or a failed request (`unreachable`, the default), or after a
   * probe that missed its deadline (`unreachable: false`: slow, not gone; the next deadline is longer).
   */
  invalidate(replica: string, nowMs: number, unreachable = true): void {
    const entry = this.entries.get(replica);
    if (unreachable && this.completedWhileProbing.has(replica)) this.failedWhileProbing.add(replica);
    this.freed.delete(replica);
    this.completedWhileProbing.delete(replica);
    this.toldFull.delete(replica);
    this.entries.set(replica, { queueLength: entry?.queueLength ?? 0, reportedAtMs: nowMs, valid: false, unreachable });
  }

  /**
   * The replica refused a request as full itself (a 429: a rate-limiting proxy in front of it, TGI's full queue):
   * others filled the room its last report showed. It counts as full (at the cap, no slot the owner freed there,
   * nor any the owner's completions free later) and needs a probe, whatever its length, until the report of a
   * probe sent after this call (the answer to one already out may have been read before the 429); while nothing
   * else waits, a request may wait for that probe (`mayHaveRoom`), since the replica's word says nothing of how
   * long it stays full. Not down: a fleet of full replicas is refused with hints, not 503. An unprobed replica,
   * which no probe will ever read, is passed over for `DOWN_RECHECK_MS` instead (as a slow one is), then tried
   * again. Nothing for a replica already invalid (down, or slow: it is probed before it is chosen anyway).
   *
   * @example
   * ```ts
   * const cache = new QueueLengthCache(2);
   * cache.report("http://a", 0, 0);
   * cache.markFull("http://a", 100);
   * cache.accepts("http://a"); // false
   * cache.needsProbe("http://a", 100); // true, though the report is fresh
   * cache.isDown("http://a", 100); // false
   * cache.complete("http://a"); // one of ours ends there: still full, by its word
   * cache.accepts("http://a"); // false
   * cache.probeSent("http://a");
   * cache.report("http://a", 1, 200); // the probe, sent after the 429, reads its queue: room again
   * cache.accepts("http://a"); // true
   * ```
   */
  markFull(replica: string, nowMs: number): void {
    const entry = this.entries.get(replica);
    if (!entry?.valid) return;
    if (this.unprobed.has(replica)) {
      this.invalidate(replica, nowMs, false);
      return;
    }
    entry.queueLength = Math.max(entry.queueLength, this.cap);
    this.freed.delete(replica);
    this.toldFull.set(replica, { probedSince: false });
  }

  /** True when the replica was unreachable less than `DOWN_RECHECK_MS` ago and has not answered since. */
  isDown(replica: string, nowMs: number): boolean {
    const entry = this.entries.get(replica);
    return entry?.unreachable === true && nowMs - entry.reportedAtMs < DOWN_RECHECK_MS;
  }

  assign(replica: string): void {
    const entry = this.entries.get(replica);
    if (entry) entry.queueLength += 1;
    const freed = this.freed.get(replica) ?? 0;
    if (freed > 1) this.freed.set(replica, freed - 1);
    else this.freed.delete(replica);
  }

  complete(replica: string): void {
    const entry = this.entries.get(replica);
    if (!entry) return;
    entry.queueLength = Math.max(0, entry.queueLength - 1);
    this.freed.set(replica, (this.freed.get(replica) ?? 0) + 1);
    const whileProbing = this.completedWhileProbing.get(replica);
    if (whileProbing !== undefined) this.completedWhileProbing.set(replica, whileProbing + 1);
  }

  /**
   * Free slots over `replicas` as far as the cache knows: the room below the cap of each valid entry, a whole
   * replica's for one never reported (it is probed before it is used), none for an invalid (down or slow) one or
   * one that said it was full (`markFull`) and has not been read by a probe since.
   */
  freeSlots(replicas: readonly string[]): number {
    let free = 0;
    for (const replica of replicas) {
      const entry = this.entries.get(replica);
      if (!entry) free += this.cap;
      else if (entry.valid && !this.toldFull.has(replica)) free += Math.max(0, this.cap - entry.queueLength);
    }
    return free;
  }

  /** Sum of the valid entries' queue lengths, for the occupancy signal. */
  totalQueueLength(): number {
    let total = 0;
    for (const entry of this.entries.values()) if (entry.valid) total += entry.queueLength;
    return total;
  }

  /** A copy of every entry, for stats. */
  snapshot(): Record<string, QueueLengthEntry> {
    return Object.fromEntries([...this.entries].map(([replica, entry]) => [replica, { ...entry }]));
  }
}
