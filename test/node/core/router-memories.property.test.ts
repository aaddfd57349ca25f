import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type HintedRetryCounts,
  type HintedRetryOptions,
  HintedRetryTracker,
  type HintOutcome,
  type HintTiming,
} from "../../../src/core/hinted-retries";
import { DEFAULT_REFUSAL_COUNT_CAPACITY, RefusalCounts } from "../../../src/core/refusal-counts";
import { SecondCounts } from "../../../src/core/second-counts";
import { DRAINING_WINDOW_S, StandingQueue, type StandingQueueOptions } from "../../../src/core/standing-queue";
import { propertyRuns } from "../../support/property-runs";

/**
 * The four small memories the router's Retry-After policy reads, each under arbitrary operations and a clock the
 * test moves (steps of every size, and steps that land exactly on, and a millisecond either side of, the instants
 * where a window or a tolerance ends), held after every operation to a small model written from their JSDoc and
 * from what `RouterCore` and `CapacityBooking` rely on:
 *
 * - `SecondCounts` (the ledgers' promises per second) against a plain list of the seconds counted: every second of
 *   the window reads exactly its count (none below 0, a remove outside the window changes nothing), the window's sum
 *   is the number counted, a second reads 0 from the moment it falls `keepS` behind the current one (not a
 *   millisecond before), a second newly ahead starts at 0, a second outside the window reads the window second that
 *   shares its bucket, and `advance` returns the whole seconds elapsed (0 when the clock goes back).
 * - `RefusalCounts` (demotion, last chance, first refusals) against a map of fingerprint -> count, first refusal
 *   and the sequence number of its last refusal: counts and first-refusal instants exact, at most `capacity`
 *   remembered, the least recently refused forgotten first, `forget` starting a request afresh.
 * - `HintedRetryTracker` (the live X metric) against a map of fingerprint -> hinted instant and hint sequence: a
 *   returning request classed early / on time / late exactly at `earlyMs` before and `lateMs` after its hinted
 *   instant (both ends on time), counted once, at most `capacity` hints remembered with the oldest hint forgotten
 *   first, and the counters equal to the outcomes counted.
 * - `StandingQueue` (the delay target's CoDel state) against the JSDoc's rules over a list of offered instants:
 *   the target depth, standing exactly once the queue has not been at or below it for `standingIntervalS` since
 *   construction, its last short sample or the end of the last standing spell, leaving exactly once nothing has
 *   been refused for max(`standingIntervalS`, `DRAINING_WINDOW_S`) since the later of the last refusal and the
 *   spell's start, and never standing at an update while the
 *   attempts offered over the last `DRAINING_WINDOW_S` whole seconds fall short of `drainingOfferedShare` of the
 *   drain rate.
 */

const FINGERPRINTS = 8;
/** A fingerprint of the few the runs use, or none (a request without a body to fingerprint). */
const fingerprint = fc.option(fc.integer({ min: 0, max: FINGERPRINTS - 1 }), { nil: undefined, freq: 8 });
const fpName = (fp: number | undefined) => (fp === undefined ? undefined : `fp-${fp}`);
/** Just before, exactly at, or just after an instant. */
const edgeDelta = fc.constantFrom(-1, 0, 1);

describe("SecondCounts (promises per second in a sliding window)", () => {
  type Op =
    /** One more in the window second `at` (mod the ring) from its first: callers only count inside the window. */
    | { kind: "add"; at: number }
    /** One less in the second `at` from the window's first: -2 and -1 are behind it, `size` and more ahead. */
    | { kind: "remove"; at: number }
    /** One less in a second that has a count. */
    | { kind: "removeCounted"; pick: number }
    | { kind: "wait"; ms: number }
    | { kind: "back"; ms: number }
    /** To the instant a counted second falls `keepS` behind the current one (plus `delta` ms). */
    | { kind: "lapse"; pick: number; delta: number }
    /** Whole seconds ahead from the current second's start (`keepS`, a ring's length, ...), plus `delta` ms. */
    | { kind: "jump"; ring: number; delta: number };

  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant("add" as const), at: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant("remove" as const), at: fc.integer({ min: -2, max: 11 }) }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("removeCounted" as const), pick: fc.nat() }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 12_000 }) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("back" as const), ms: fc.integer({ min: 1, max: 5_000 }) }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant("lapse" as const), pick: fc.nat(), delta: edgeDelta }),
    },
    {
      weight: 2,
      // 0: keepS; 1: keepS + 1; 2, 3, 4: size - 1, size, size + 1 seconds (a whole ring cleared, or all but one).
      arbitrary: fc.record({
        kind: fc.constant("jump" as const),
        ring: fc.integer({ min: 0, max: 4 }),
        delta: edgeDelta,
      }),
    },
  );

  /** A ring of 1 to 9 seconds keeping 0 to size - 1 behind (as both ledgers size theirs), from any instant. */
  const ring = fc.integer({ min: 1, max: 9 }).chain((size) =>
    fc.record({
      size: fc.constant(size),
      keepS: fc.integer({ min: 0, max: size - 1 }),
      startMs: fc.integer({ min: -20_000, max: 20_000 }),
    }),
  );

  function run(ops: readonly Op[], { size, keepS, startMs }: { size: number; keepS: number; startMs: number }) {
    const counts = new SecondCounts(size, keepS, startMs);
    let now = startMs;
    // The model: the current second, and the seconds counted (one entry per count) still inside the window.
    let current = Math.floor(startMs / 1000);
    let counted: number[] = [];
    const violations: string[] = [];
    const fail = (what: string) => violations.push(`t=${now}: ${what}`);
    const first = () => current - keepS;
    const moveTo = (ms: number) => {
      now = ms;
      const second = Math.floor(ms / 1000);
      const elapsed = Math.max(0, second - current);
      const returned = counts.advance(ms);
      if (returned !== elapsed) fail(`advance returned ${returned}, ${elapsed} s elapsed`);
      if (second > current) current = second;
      // Seconds more than keepS behind the current one are no longer counted.
      counted = counted.filter((s) => s >= first());
    };
    for (const o of ops) {
      if (o.kind === "add") {
        const second = first() + (o.at % size);
        counts.add(second);
        counted.push(second);
      } else if (o.kind === "remove" || o.kind === "removeCounted") {
        const second =
          o.kind === "remove" ? first() + o.at : (counted[o.pick % Math.max(1, counted.length)] ?? first());
        counts.remove(second);
        // Never below 0; a second outside the window is left alone.
        const i = counted.indexOf(second);
        if (i >= 0 && second >= first() && second < first() + size) counted.splice(i, 1);
      } else if (o.kind === "wait") moveTo(now + o.ms);
      else if (o.kind === "back") moveTo(now - o.ms);
      else if (o.kind === "lapse") {
        const second = counted[o.pick % Math.max(1, counted.length)] ?? first();
        // `second` is kept while it is at most keepS behind the current second, and cleared from then on.
        moveTo((second + keepS + 1) * 1000 + o.delta);
      } else {
        const seconds = [keepS, keepS + 1, size - 1, size, size + 1][o.ring] as number;
        moveTo((current + seconds) * 1000 + o.delta);
      }
      if (counts.currentSecond !== current) fail(`current second ${counts.currentSecond}, modelled ${current}`);
      let sum = 0;
      for (let s = first(); s < first() + size; s++) {
        const expected = counted.filter((c) => c === s).length;
        const read = counts.at(s);
        sum += read;
        if (read !== expected)
          fail(`second ${s} (window ${first()}..${first() + size - 1}) reads ${read}, ${expected}`);
      }
      if (sum !== counted.length) fail(`window sums to ${sum}, ${counted.length} counted`);
      // Outside the window: whatever shares the bucket (the window second congruent to it modulo the ring).
      for (let s = first() - 2 * size; s < first() + 3 * size; s++) {
        if (s >= first() && s < first() + size) continue;
        const alias = first() + ((((s - first()) % size) + size) % size);
        if (counts.at(s) !== counts.at(alias))
          fail(`second ${s} reads ${counts.at(s)}, its bucket's ${alias} ${counts.at(alias)}`);
      }
    }
    return violations;
  }

  it("reads exactly the counts of the window's seconds, clears them exactly as they fall behind", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 120, size: "max" }), ring, (ops, r) => {
        expect(run(ops, r)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});

describe("RefusalCounts (how often, and since when, each request was refused)", () => {
  type Op =
    | { kind: "refused"; fp: number | undefined; timed: boolean }
    | { kind: "forget"; fp: number | undefined }
    | { kind: "wait"; ms: number };

  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant("refused" as const), fp: fingerprint, timed: fc.boolean() }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("forget" as const), fp: fingerprint }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 10_000 }) }),
    },
  );

  interface Remembered {
    count: number;
    firstAtMs: number;
    /** When it was last refused, in refusals (the least recently refused is forgotten first). */
    lastRefusal: number;
  }

  function run(ops: readonly Op[], capacity: number) {
    const counts = new RefusalCounts(capacity);
    let now = 5_000;
    let refusals = 0;
    const model = new Map<string, Remembered>();
    const violations: string[] = [];
    const fail = (what: string) => violations.push(`t=${now}: ${what}`);
    for (const o of ops) {
      const fp = o.kind === "wait" ? undefined : fpName(o.fp);
      if (o.kind === "wait") now += o.ms;
      else if (o.kind === "refused") {
        // The refusal's time defaults to 0 (the JSDoc's example leaves it out).
        const at = o.timed ? now : 0;
        if (o.timed) counts.refused(fp, now);
        else counts.refused(fp);
        if (fp !== undefined) {
          refusals += 1;
          const known = model.get(fp);
          model.set(fp, { count: (known?.count ?? 0) + 1, firstAtMs: known?.firstAtMs ?? at, lastRefusal: refusals });
          if (model.size > capacity) {
            // Beyond the capacity the least recently refused is forgotten (all of them at a capacity of 0).
            let oldest: string | undefined;
            for (const [k, v] of model)
              if (oldest === undefined || v.lastRefusal < (model.get(oldest) as Remembered).lastRefusal) oldest = k;
            model.delete(oldest as string);
            if (capacity <= 0) model.clear();
          }
        }
      } else {
        counts.forget(fp);
        if (fp !== undefined) model.delete(fp);
      }
      if (counts.tracked !== model.size) fail(`${counts.tracked} tracked, modelled ${model.size}`);
      if (counts.tracked > Math.max(0, capacity)) fail(`${counts.tracked} tracked over capacity ${capacity}`);
      for (let i = 0; i < FINGERPRINTS; i++) {
        const name = fpName(i) as string;
        const known = model.get(name);
        if (counts.of(name) !== (known?.count ?? 0))
          fail(`${name} refused ${counts.of(name)}, modelled ${known?.count}`);
        if (counts.firstRefusedAtMs(name) !== known?.firstAtMs)
          fail(`${name} first refused at ${counts.firstRefusedAtMs(name)}, modelled ${known?.firstAtMs}`);
      }
      if (counts.of(undefined) !== 0 || counts.firstRefusedAtMs(undefined) !== undefined)
        fail("a request without a fingerprint is remembered");
    }
    return violations;
  }

  it("counts each request's refusals and first refusal exactly, forgetting the least recently refused first", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 10, maxLength: 120, size: "max" }),
        fc.integer({ min: 0, max: 5 }),
        (ops, capacity) => {
          expect(run(ops, capacity)).toEqual([]);
        },
      ),
      propertyRuns(200, 20261205),
    );
  });

  it("is bounded at its default capacity, the router's", () => {
    const counts = new RefusalCounts();
    counts.refused("a", 1);
    for (let i = 0; i < DEFAULT_REFUSAL_COUNT_CAPACITY - 1; i++) counts.refused(`r${i}`, 2);
    counts.refused("a", 3); // refused again: now the most recently refused
    counts.refused("new", 4);
    expect(counts.tracked).toBe(DEFAULT_REFUSAL_COUNT_CAPACITY);
    expect([counts.of("r0"), counts.of("a"), counts.firstRefusedAtMs("a"), counts.of("new")]).toEqual([0, 2, 1, 1]);
  });
});

describe("HintedRetryTracker (the live X metric)", () => {
  type When = "early-1" | "early" | "due" | "late" | "late+1" | "any";
  type Op =
    | { kind: "hinted"; fp: number | undefined; delayS: number }
    /** The request comes back (at an edge of its hint's tolerances, or any time) and the router counts it. */
    | { kind: "returned"; fp: number | undefined; hinted: boolean; when: When; ms: number; outcome: HintOutcome }
    | { kind: "count"; outcome: HintOutcome; timing: HintTiming }
    | { kind: "wait"; ms: number };

  const outcome = fc.constantFrom<HintOutcome>("admitted", "refused");
  const op: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("hinted" as const),
        fp: fingerprint,
        // Whole seconds, and the jittered fractions the router sends.
        delayS: fc.oneof(fc.constantFrom(0, 1, 5, 30, 120), fc.double({ min: 0, max: 60, noNaN: true })),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("returned" as const),
        fp: fingerprint,
        // Most often a request that was hinted and is still remembered (the `fp`-th of them).
        hinted: fc.boolean(),
        when: fc.constantFrom<When>("early-1", "early", "due", "late", "late+1", "any"),
        ms: fc.integer({ min: 0, max: 70_000 }),
        outcome,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("count" as const),
        outcome,
        timing: fc.constantFrom<HintTiming>("early", "on_time", "late"),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
    },
  );

  const trackerOptions: fc.Arbitrary<HintedRetryOptions> = fc.record({
    earlyMs: fc.constantFrom(0, 250, 1_000),
    lateMs: fc.constantFrom(0, 1_500, 3_000),
    capacity: fc.integer({ min: 0, max: 5 }),
  });

  const zero = (): HintedRetryCounts => ({
    admitted: { early: 0, on_time: 0, late: 0 },
    refused: { early: 0, on_time: 0, late: 0 },
  });

  function run(ops: readonly Op[], options: HintedRetryOptions) {
    const tracker = new HintedRetryTracker(options);
    let now = 10_000;
    let hints = 0;
    // The model: the hinted instant of each remembered fingerprint, and when it was hinted (in hints).
    const model = new Map<string, { dueMs: number; hint: number }>();
    const tally = zero();
    const violations: string[] = [];
    const fail = (what: string) => violations.push(`t=${now}: ${what}`);
    // On time from earlyMs before the hinted instant to lateMs after it, both ends included.
    const timingOf = (dueMs: number, atMs: number): HintTiming =>
      atMs < dueMs - options.earlyMs ? "early" : atMs > dueMs + options.lateMs ? "late" : "on_time";
    for (const o of ops) {
      if (o.kind === "wait") now += o.ms;
      else if (o.kind === "hinted") {
        const fp = fpName(o.fp);
        tracker.hinted(fp, now, o.delayS);
        if (fp !== undefined) {
          // A newer hint replaces the request's older one; beyond the capacity the oldest hint is forgotten.
          model.set(fp, { dueMs: now + o.delayS * 1000, hint: ++hints });
          while (model.size > Math.max(0, options.capacity)) {
            const oldest = [...model.entries()].reduce((a, b) => (b[1].hint < a[1].hint ? b : a));
            model.delete(oldest[0]);
          }
        }
      } else if (o.kind === "returned") {
        const remembered = [...model.keys()];
        const fp = o.hinted && remembered.length > 0 ? remembered[(o.fp ?? 0) % remembered.length] : fpName(o.fp);
        const known = fp === undefined ? undefined : model.get(fp);
        const due = known?.dueMs ?? now;
        const at = {
          "early-1": due - options.earlyMs - 1,
          early: due - options.earlyMs,
          due,
          late: due + options.lateMs,
          "late+1": due + options.lateMs + 1,
          any: now + o.ms,
        }[o.when];
        const timing = tracker.returned(fp, at);
        const expected = known === undefined ? undefined : timingOf(known.dueMs, at);
        if (timing !== expected)
          fail(`${fp} back at ${at} (hinted for ${known?.dueMs}, ${o.when}): ${timing}, expected ${expected}`);
        // Counted once: the request is forgotten as it comes back.
        if (fp !== undefined) model.delete(fp);
        if (timing !== undefined) {
          tracker.count(o.outcome, timing);
          tally[o.outcome][timing] += 1;
        }
        now = Math.max(now, at);
      } else {
        tracker.count(o.outcome, o.timing);
        tally[o.outcome][o.timing] += 1;
      }
      if (tracker.tracked !== model.size) fail(`${tracker.tracked} hints tracked, modelled ${model.size}`);
      if (tracker.tracked > Math.max(0, options.capacity)) fail(`${tracker.tracked} tracked over ${options.capacity}`);
      const read = tracker.counts();
      if (JSON.stringify(read) !== JSON.stringify(tally))
        fail(`counts ${JSON.stringify(read)}, ${JSON.stringify(tally)}`);
      // A copy: what the caller does with it is not the tracker's count.
      read.admitted.on_time += 100;
      read.refused.late += 100;
      if (JSON.stringify(tracker.counts()) !== JSON.stringify(tally)) fail("counts() handed out its own counters");
    }
    // Whatever is still remembered comes back once, late, much later; the rest are not counted.
    const later = now + 1_000_000;
    for (let i = 0; i < FINGERPRINTS; i++) {
      const fp = fpName(i) as string;
      const timing = tracker.returned(fp, later);
      if (timing !== (model.has(fp) ? "late" : undefined)) fail(`${fp} back much later: ${timing}`);
    }
    if (tracker.tracked !== 0) fail(`${tracker.tracked} still tracked after every request came back`);
    return violations;
  }

  it("classes each returning request exactly at its tolerances, once, and remembers the newest hints", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 120, size: "max" }), trackerOptions, (ops, options) => {
        expect(run(ops, options)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});

describe("StandingQueue (whether the queue stands above its delay target)", () => {
  type Edge = "stand" | "leave" | "offerIn" | "offerOut";
  type Op =
    | { kind: "wait"; ms: number }
    /** To the instant a condition changes (plus `delta` ms): the interval above the target, the interval without a
     * refusal, an offered attempt entering or leaving the draining window; then, mostly, an update. */
    | { kind: "edge"; edge: Edge; pick: number; delta: number; update: number | undefined }
    | { kind: "offer"; n: number }
    | { kind: "refused" }
    /** An update with the queue at the target's depth plus `relative`, or at `depth` while there is no target. */
    | { kind: "update"; relative: number; depth: number }
    | { kind: "rate"; rate: number | undefined }
    /** Arrivals, `perS` a second for `seconds` seconds, each offered, updated with a queue `relative` to the
     * target, and refused while `refusing` (what the router does with each arrival). */
    | { kind: "traffic"; perS: number; seconds: number; relative: number; refusing: boolean }
    /** A burst and its end: arrivals above the target, refused, at `highPerS`, then fewer (`lowPerS`), still
     * refused at a queue above the target: the offered load falls below the drain rate while refusals go on. */
    | { kind: "burst"; highPerS: number; highS: number; lowPerS: number; lowS: number };

  const relative = fc.integer({ min: -2, max: 2 });
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 7_000 }) }) },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("edge" as const),
        edge: fc.constantFrom<Edge>("stand", "stand", "leave", "leave", "offerIn", "offerOut"),
        pick: fc.nat(),
        delta: edgeDelta,
        // An update there (the queue relative to the target), as the next arrival makes.
        update: fc.option(fc.constantFrom(1, 2, 1, 0, -1), { nil: undefined, freq: 4 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("offer" as const), n: fc.integer({ min: 1, max: 12 }) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("refused" as const) }) },
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("update" as const),
        relative,
        depth: fc.integer({ min: 0, max: 40 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("rate" as const),
        rate: fc.constantFrom(undefined, 0, 0.5, 2, 2, 3, 7.5, 10),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("traffic" as const),
        perS: fc.integer({ min: 0, max: 12 }),
        seconds: fc.integer({ min: 1, max: 8 }),
        relative,
        refusing: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("burst" as const),
        highPerS: fc.integer({ min: 4, max: 16 }),
        highS: fc.integer({ min: 1, max: 12 }),
        lowPerS: fc.integer({ min: 1, max: 3 }),
        lowS: fc.integer({ min: 1, max: 8 }),
      }),
    },
  );

  const queueOptions: fc.Arbitrary<StandingQueueOptions> = fc.record({
    queueDelayTargetS: fc.constantFrom(undefined, 0.01, 0.25, 1, 1, 2.5),
    standingIntervalS: fc.constantFrom(0, 1, 2.5, 5, 10, 30),
    drainingOfferedShare: fc.constantFrom(undefined, undefined, 0.5, 1, 1.5),
  });

  function run(ops: readonly Op[], options: StandingQueueOptions, startMs: number, startRate: number | undefined) {
    let rate = startRate;
    let now = startMs;
    const queue = new StandingQueue(options, () => rate, startMs);
    const intervalMs = options.standingIntervalS * 1000;
    const quietMs = Math.max(intervalMs, DRAINING_WINDOW_S * 1000);
    // The model: whether it stands, the last moment the queue was known short (at or below the target, draining,
    // or the standing spell's end; construction counts), the last refusal, and every attempt offered.
    let standing = false;
    let shortAtMs = startMs;
    let refusedAtMs = Number.NEGATIVE_INFINITY;
    const offered: number[] = [];
    const violations: string[] = [];
    const fail = (what: string) => violations.push(`t=${now}: ${what}`);
    const targetDepth = () => {
      const target = options.queueDelayTargetS;
      // Seconds of drain at the current rate, rounded up, at least one request; no bound while cold.
      if (target === undefined || rate === undefined || !(rate > 0)) return Number.POSITIVE_INFINITY;
      return Math.max(1, Math.ceil(target * rate));
    };
    // Offered per second over the DRAINING_WINDOW_S whole seconds before the current one.
    const offeredRate = () => {
      const current = Math.floor(now / 1000);
      return (
        offered.filter((t) => Math.floor(t / 1000) >= current - DRAINING_WINDOW_S && Math.floor(t / 1000) < current)
          .length / DRAINING_WINDOW_S
      );
    };
    const draining = () =>
      options.drainingOfferedShare !== undefined &&
      rate !== undefined &&
      rate > 0 &&
      offeredRate() < options.drainingOfferedShare * rate;
    const depthFor = (o: { relative: number; depth: number }) => {
      const target = targetDepth();
      return Number.isFinite(target) ? Math.max(0, target + o.relative) : o.depth;
    };
    const update = (depth: number) => {
      const drains = draining();
      const wasStanding = standing;
      if (standing) {
        // It stays standing until nothing has been refused for the interval (at least the draining window), or the
        // queue drains by itself; its end is a short moment.
        if (drains || now - refusedAtMs >= quietMs) {
          standing = false;
          shortAtMs = now;
        }
      } else if (drains || depth <= targetDepth()) shortAtMs = now;
      else if (now - shortAtMs >= intervalMs) {
        // A spell's quiet time starts with it (a refusal before it, or none, is not "nothing refused for that long").
        standing = true;
        refusedAtMs = Math.max(refusedAtMs, now);
      }
      const stands = queue.update(now, depth);
      if (stands !== standing)
        fail(
          `update(depth ${depth}, target ${targetDepth()}, draining ${drains}, short since ${shortAtMs}, refused ` +
            `${refusedAtMs}, was ${wasStanding}): ${stands}, expected ${standing}`,
        );
      if (stands && drains) fail("stands while the queue drains by itself");
      if (stands && !wasStanding && !(depth > targetDepth())) fail(`began standing at depth ${depth}, at the target`);
    };
    // Each arrival is offered, updates the state with the queue as deep as given, and may be refused.
    const traffic = (t: { perS: number; seconds: number; relative: number; refusing: boolean }) => {
      const stepMs = t.perS > 0 ? Math.floor(1_000 / t.perS) : 1_000;
      for (let i = 0; i < Math.max(1, t.perS) * t.seconds; i++) {
        now += stepMs;
        if (t.perS === 0) continue;
        queue.offer(now);
        offered.push(now);
        update(depthFor({ relative: t.relative, depth: 0 }));
        if (t.refusing) {
          queue.refused(now);
          refusedAtMs = now;
        }
      }
    };
    for (const o of ops) {
      if (o.kind === "wait") now += o.ms;
      else if (o.kind === "edge") {
        const picked = offered[o.pick % Math.max(1, offered.length)];
        const at =
          o.edge === "stand"
            ? shortAtMs + intervalMs
            : o.edge === "leave"
              ? refusedAtMs + quietMs
              : picked === undefined
                ? now
                : // An attempt counts from the end of its second, for DRAINING_WINDOW_S seconds.
                  (Math.floor(picked / 1000) + (o.edge === "offerIn" ? 1 : 1 + DRAINING_WINDOW_S)) * 1000;
        // The clock does not go back.
        if (Number.isFinite(at)) now = Math.max(now, at + o.delta);
        if (o.update !== undefined) update(depthFor({ relative: o.update, depth: 40 }));
      } else if (o.kind === "offer")
        for (let i = 0; i < o.n; i++) {
          queue.offer(now);
          offered.push(now);
        }
      else if (o.kind === "refused") {
        queue.refused(now);
        refusedAtMs = now;
      } else if (o.kind === "update") update(depthFor(o));
      else if (o.kind === "rate") rate = o.rate;
      else if (o.kind === "traffic") traffic(o);
      else {
        traffic({ perS: o.highPerS, seconds: o.highS, relative: 1, refusing: true });
        traffic({ perS: o.lowPerS, seconds: o.lowS, relative: 1, refusing: true });
      }
      if (queue.isStanding !== standing) fail(`isStanding ${queue.isStanding}, modelled ${standing}`);
      if (queue.targetDepth() !== targetDepth()) fail(`target depth ${queue.targetDepth()}, ${targetDepth()}`);
      if (violations.length > 0) break;
    }
    return violations;
  }

  it("stands, and stops standing, exactly when the delay target's conditions hold", () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 10, maxLength: 150, size: "max" }),
        queueOptions,
        fc.integer({ min: 0, max: 50_000 }),
        fc.constantFrom(undefined, 2, 2, 10, 7.5),
        (ops, options, startMs, startRate) => {
          expect(run(ops, options, startMs, startRate)).toEqual([]);
        },
      ),
      propertyRuns(200, 20261205),
    );
  });
});
