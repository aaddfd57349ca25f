import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DOWN_RECHECK_MS, QUEUE_LENGTH_STALE_MS, QueueLengthCache } from "../../../src/core/queue-length-cache";
import { propertyRuns } from "../../support/property-runs";

/**
 * The router's per-replica queue lengths under arbitrary assignments, completions (some of failed requests), probes
 * sent and answered (a length, a failure, a timeout) and time steps - some landing exactly on the stale and
 * down-recheck thresholds - on three replicas (one of them, in some runs, never probed) and a small cap, against a
 * model of what the cache was told, kept from its JSDoc: a length is the replica's last report (never below 0) moved +1
 * per assignment and -1 (floored at 0) per completion; an entry is stale once older than the stale age (exactly at it
 * still fresh); a failure makes it invalid (and down for `DOWN_RECHECK_MS` when unreachable) until a report, or for a
 * never-probed replica until that period ends (the report of a probe that was out when the replica failed is
 * dropped: it was read before the failure); the owner's claims on a replica (its completions since the last report
 * not yet taken by an assignment) survive a report only for the completions since the probe was sent, as many as the
 * report shows room for. After every step, each replica's `needsProbe`, `knownFree`, `mayHaveRoom`, `isDown`, `accepts`
 * and entry, and the fleet's `freeSlots`, `totalQueueLength` and `snapshot`, must be exactly the model's at that clock.
 */

const REPLICAS = ["http://r0", "http://r1", "http://r2"] as const;
const replicaIndex = fc.integer({ min: 0, max: REPLICAS.length - 1 });

type Op =
  | { kind: "wait"; ms: number }
  /** To exactly a threshold (± delta) after the replica's last report or failure, where that is still ahead. */
  | { kind: "jump"; r: number; threshold: "stale" | "down"; delta: number }
  /** The router places a request there (only where the cache accepts it, as `finishRound` does). */
  | { kind: "assign"; r: number }
  /** One of the owner's requests ends, on the `pick`-th replica holding one; `failed`: it failed (the replica is down). */
  | { kind: "complete"; pick: number; failed: boolean }
  | { kind: "probeSent"; r: number }
  /** A probe's answer; `asRouter`: raised to the owner's requests in flight there, as `reportProbe` does. */
  | { kind: "report"; r: number; length: number; asRouter: boolean }
  /** A probe that failed (`unreachable`) or missed its deadline. */
  | { kind: "probeFailed"; r: number; unreachable: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(fc.constantFrom(0, 1, DOWN_RECHECK_MS - 1, DOWN_RECHECK_MS), fc.integer({ min: 0, max: 12_000 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("jump" as const),
      r: replicaIndex,
      threshold: fc.constantFrom("stale" as const, "down" as const),
      delta: fc.constantFrom(-1, 0, 1),
    }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("assign" as const), r: replicaIndex }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("complete" as const),
      pick: fc.nat(),
      // About one in ten ends in failure.
      failed: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("probeSent" as const), r: replicaIndex }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("report" as const),
      r: replicaIndex,
      // Mostly below the cap; sometimes at or over it, or negative (clamped to 0).
      length: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constantFrom(-1, 3, 4, 5)),
      asRouter: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("probeFailed" as const), r: replicaIndex, unreachable: fc.boolean() }),
  },
);

/** The cache settings the runs draw from: the router's stale age and a shorter one, caps of 1 to 3. */
const settings = fc.record({
  cap: fc.integer({ min: 1, max: 3 }),
  staleMs: fc.constantFrom(QUEUE_LENGTH_STALE_MS, 2_500),
  unprobed: fc.subarray([0, 1, 2], { maxLength: 1 }),
});

interface ModelEntry {
  queueLength: number;
  /** The last report's instant, or the last failure's. */
  atMs: number;
  valid: boolean;
  unreachable: boolean;
}

interface Modelled {
  entry: ModelEntry | undefined;
  /** The owner's completions since the last report not yet taken by an assignment. */
  freed: number;
  /** With a probe out: the owner's completions since it was sent. */
  whileProbing: number | undefined;
  /** It failed (unreachable) while a probe was out: that probe's report, read before, is dropped. */
  failedWhileProbing: boolean;
  /** The owner's requests in flight there. */
  leases: number;
}

/** Runs the ops; returns the violations seen (none expected). */
function run(ops: readonly Op[], config: { cap: number; staleMs: number; unprobed: number[] }): string[] {
  const { cap, staleMs } = config;
  const unprobed = new Set(config.unprobed.map((i) => REPLICAS[i] as string));
  const cache = new QueueLengthCache(cap, staleMs, [...unprobed]);
  let now = 0;
  const model = new Map<string, Modelled>();
  for (const replica of REPLICAS) {
    const entry = unprobed.has(replica) ? { queueLength: 0, atMs: 0, valid: true, unreachable: false } : undefined;
    model.set(replica, { entry, freed: 0, whileProbing: undefined, failedWhileProbing: false, leases: 0 });
  }
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  const at = (r: number) => [REPLICAS[r] as string, model.get(REPLICAS[r] as string) as Modelled] as const;

  // What the cache should answer at `now`, from its documentation.
  /** A never-probed replica marked failed comes back by itself once the down period is over. */
  const recover = (replica: string, m: Modelled) => {
    if (unprobed.has(replica) && m.entry && !m.entry.valid && now - m.entry.atMs >= DOWN_RECHECK_MS)
      m.entry = { ...m.entry, valid: true, unreachable: false };
  };
  const stale = (e: ModelEntry) => now - e.atMs > staleMs;
  const accepts = (m: Modelled) => m.entry?.valid === true && m.entry.queueLength < cap;
  const needsProbe = (replica: string, m: Modelled) =>
    !unprobed.has(replica) && (m.entry === undefined || !m.entry.valid || stale(m.entry) || m.entry.queueLength >= cap);
  const knownFree = (replica: string, m: Modelled) =>
    !needsProbe(replica, m) && accepts(m) && (unprobed.has(replica) || m.freed > 0);
  const isDown = (m: Modelled) => m.entry?.unreachable === true && now - m.entry.atMs < DOWN_RECHECK_MS;
  const mayHaveRoom = (replica: string, m: Modelled) => {
    if (isDown(m)) return false;
    if (m.entry === undefined || !m.entry.valid || m.entry.queueLength < cap) return true;
    // Full: known full while the report is fresh; a never-probed replica's own count never goes stale.
    return !unprobed.has(replica) && stale(m.entry);
  };
  const freeSlots = (m: Modelled) =>
    m.entry === undefined ? cap : m.entry.valid ? Math.max(0, cap - m.entry.queueLength) : 0;

  /** A failure (of a probe or of a request) ends the probe out and the owner's claims: the next report tells. */
  const invalidate = (m: Modelled, unreachable: boolean) => {
    if (unreachable && m.whileProbing !== undefined) m.failedWhileProbing = true;
    m.entry = { queueLength: m.entry?.queueLength ?? 0, atMs: now, valid: false, unreachable };
    m.freed = 0;
    m.whileProbing = undefined;
  };

  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "jump") {
      const [, m] = at(o.r);
      if (m.entry !== undefined) {
        const target = m.entry.atMs + (o.threshold === "stale" ? staleMs : DOWN_RECHECK_MS) + o.delta;
        if (target > now) now = target;
      }
    } else if (o.kind === "assign") {
      const [replica, m] = at(o.r);
      if (!accepts(m)) continue;
      cache.assign(replica);
      if (m.entry) m.entry.queueLength += 1;
      m.freed = Math.max(0, m.freed - 1);
      m.leases += 1;
    } else if (o.kind === "complete") {
      const holding = REPLICAS.filter((replica) => (model.get(replica) as Modelled).leases > 0);
      if (holding.length === 0) continue;
      const replica = holding[o.pick % holding.length] as string;
      const m = model.get(replica) as Modelled;
      cache.complete(replica);
      m.leases -= 1;
      if (m.entry) {
        m.entry.queueLength = Math.max(0, m.entry.queueLength - 1);
        m.freed += 1;
        if (m.whileProbing !== undefined) m.whileProbing += 1;
      }
      if (o.failed) {
        cache.invalidate(replica, now);
        invalidate(m, true);
      }
    } else if (o.kind === "probeSent") {
      const [replica, m] = at(o.r);
      if (unprobed.has(replica)) continue;
      cache.probeSent(replica);
      m.whileProbing = 0;
      m.failedWhileProbing = false;
    } else if (o.kind === "report") {
      const [replica, m] = at(o.r);
      if (unprobed.has(replica)) continue;
      const length = o.asRouter ? Math.max(o.length, m.leases) : o.length;
      cache.report(replica, length, now);
      // The answer of a probe that was out when the replica failed was read before the failure: dropped.
      if (m.failedWhileProbing) m.failedWhileProbing = false;
      else {
        const queueLength = Math.max(0, length);
        // Claims freed before the probe went out are in the report; those freed since stay, up to the room it shows
        // (an assignment takes the oldest claim first).
        m.freed = Math.max(0, Math.min(m.whileProbing ?? 0, m.freed, cap - queueLength));
        m.whileProbing = undefined;
        m.entry = { queueLength, atMs: now, valid: true, unreachable: false };
      }
    } else {
      const [replica, m] = at(o.r);
      if (unprobed.has(replica)) continue;
      cache.invalidate(replica, now, o.unreachable);
      invalidate(m, o.unreachable);
    }

    // `needsProbe` first: the clocked question is the one that tells a never-probed replica its down period is over.
    let free = 0;
    let total = 0;
    for (const replica of REPLICAS) {
      const m = model.get(replica) as Modelled;
      recover(replica, m);
      const asked = cache.needsProbe(replica, now);
      if (asked !== needsProbe(replica, m)) fail(`${replica} needsProbe ${asked}, model ${JSON.stringify(m)}`);
      const answers = {
        knownFree: cache.knownFree(replica, now),
        mayHaveRoom: cache.mayHaveRoom(replica, now),
        isDown: cache.isDown(replica, now),
        accepts: cache.accepts(replica),
        freeSlots: cache.freeSlots([replica]),
      };
      const expected = {
        knownFree: knownFree(replica, m),
        mayHaveRoom: mayHaveRoom(replica, m),
        isDown: isDown(m),
        accepts: accepts(m),
        freeSlots: freeSlots(m),
      };
      if (JSON.stringify(answers) !== JSON.stringify(expected))
        fail(`${replica} answers ${JSON.stringify(answers)}, model ${JSON.stringify(expected)} (${JSON.stringify(m)})`);
      const entry = cache.get(replica);
      const seen = entry && { queueLength: entry.queueLength, valid: entry.valid, unreachable: entry.unreachable };
      const told = m.entry && {
        queueLength: m.entry.queueLength,
        valid: m.entry.valid,
        unreachable: m.entry.unreachable,
      };
      if (JSON.stringify(seen) !== JSON.stringify(told))
        fail(`${replica} entry ${JSON.stringify(entry)}, model ${JSON.stringify(told)}`);
      if (entry && !(Number.isInteger(entry.queueLength) && entry.queueLength >= 0))
        fail(`${replica} queue length ${entry.queueLength}`);
      free += freeSlots(m);
      if (m.entry?.valid) total += m.entry.queueLength;
    }
    const snapshot = cache.snapshot();
    for (const replica of REPLICAS) {
      const entry = cache.get(replica);
      if (JSON.stringify(snapshot[replica]) !== JSON.stringify(entry === undefined ? undefined : { ...entry }))
        fail(`${replica} snapshot ${JSON.stringify(snapshot[replica])} against ${JSON.stringify(entry)}`);
    }
    if (Object.keys(snapshot).length !== [...model.values()].filter((m) => m.entry).length)
      fail(`snapshot of ${Object.keys(snapshot)}`);
    if (cache.freeSlots(REPLICAS) !== free) fail(`${cache.freeSlots(REPLICAS)} free slots, model ${free}`);
    if (cache.totalQueueLength() !== total) fail(`total queue length ${cache.totalQueueLength()}, model ${total}`);
  }
  // The snapshot is a copy: changing it leaves the cache as it was.
  const before = JSON.stringify(cache.snapshot());
  for (const entry of Object.values(cache.snapshot())) entry.queueLength += 7;
  if (JSON.stringify(cache.snapshot()) !== before) fail("a snapshot changed the cache");
  return violations;
}

describe("the queue-length cache under arbitrary assignments, completions, probes and time", () => {
  it("answers every question exactly as its documented rules do at that clock", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 150, size: "max" }), settings, (ops, config) => {
        expect(run(ops, config)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});
