import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BookedHint,
  CapacityBooking,
  type CapacityBookingOptions,
  DEFAULT_CAPACITY_BOOKING_OPTIONS,
} from "../../../src/core/capacity-booking";
import { propertyRuns } from "../../support/property-runs";

/**
 * The ledger of `booked_capacity` under arbitrary refusals, returns and time steps, held to what the router relies
 * on: hints inside the client's horizon, promises bound to their own fingerprint and claimable once, the per-second
 * counts of promises equal to the promises outstanding (none leaked by a claim, a replacement, an eviction or a
 * lapse), outcomes that add up, and a trust within its bounds. A small model of the bookings (fingerprint -> due
 * instant, promise or best effort) is kept beside it from what the ledger was told and answered.
 */

const FINGERPRINTS = 6;
const HORIZONS_S = [5, 30, 60, 120, 600] as const;

type Op =
  | { kind: "wait"; ms: number }
  | { kind: "fresh"; count: number }
  | { kind: "refuse"; fp: number; horizon: number; depth: number; rate: number; first: boolean; r: number }
  | { kind: "claim"; fp: number; returnMs: number | undefined }
  | { kind: "early"; fp: number }
  | { kind: "kept"; admitted: boolean; leadS: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 4_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("fresh" as const), count: fc.integer({ min: 1, max: 30 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("refuse" as const),
      fp: fc.integer({ min: 0, max: FINGERPRINTS - 1 }),
      horizon: fc.integer({ min: 0, max: HORIZONS_S.length - 1 }),
      depth: fc.integer({ min: 0, max: 60 }),
      // 0: no usable drain rate (the ladder falls back).
      rate: fc.oneof(fc.constant(0), fc.double({ min: 0.2, max: 20, noNaN: true })),
      first: fc.boolean(),
      r: fc.double({ min: 0, max: 0.999, noNaN: true }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      fp: fc.integer({ min: 0, max: 9 }),
      // Where set: the client comes back this long after its booked instant (if that is still ahead), as told.
      returnMs: fc.option(fc.integer({ min: -2_000, max: 5_000 }), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("early" as const), fp: fc.integer({ min: 0, max: 9 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("kept" as const),
      admitted: fc.boolean(),
      leadS: fc.double({ min: 0, max: 300, noNaN: true }),
    }),
  },
);

/** Ledger settings the runs draw from: the default, and ones that reach two-step promises, packing, evictions and trust by lead. */
const settings: fc.Arbitrary<Partial<CapacityBookingOptions>> = fc.record({
  twoStepHorizons: fc.constantFrom(1, 2),
  horizonPackS: fc.constantFrom(0, 10),
  maxBookings: fc.constantFrom(65_536, 3),
  queueRefill: fc.boolean(),
  maxOverbooking: fc.constantFrom(1, 1.5),
  trustBucketS: fc.constantFrom(0, 4),
});

interface Modelled {
  dueMs: number;
  madeMs: number;
  promised: boolean;
}

/** Runs the ops; returns the violations seen (none expected). */
function run(ops: readonly Op[], overrides: Partial<CapacityBookingOptions>): string[] {
  const options = { ...DEFAULT_CAPACITY_BOOKING_OPTIONS, ...overrides };
  let now = 1_000;
  const ledger = new CapacityBooking(options, now);
  // The bookings as the ledger was told them, in the order made (its eviction takes the oldest).
  const model = new Map<string, Modelled>();
  let claimedPromises = 0;
  let keptCalls = 0;
  const violations: string[] = [];
  const fail = (what: string) => violations.push(`t=${now}: ${what}`);
  // A booking lapses once its client is more than `lateS` late: the ledger sweeps it when it next moves.
  const sweep = () => {
    for (const [fp, b] of model) if (b.dueMs < now - options.lateS * 1000) model.delete(fp);
  };
  for (const o of ops) {
    if (o.kind === "wait") now += o.ms;
    else if (o.kind === "fresh") for (let i = 0; i < o.count; i++) ledger.onFresh(now);
    else if (o.kind === "refuse") {
      const fp = `fp-${o.fp}`;
      const horizonS = HORIZONS_S[o.horizon] as number;
      const hint = ledger.hint(now, { queueDepth: o.depth, drainRate: o.rate }, horizonS, () => o.r, {
        first: o.first,
      });
      if (o.rate > 0 && hint === undefined) fail(`no hint at drain rate ${o.rate}`);
      if (o.rate === 0 && hint !== undefined) fail("a hint without a drain rate");
      if (hint === undefined) continue;
      const reach = Math.max(1, Math.min(horizonS, options.ledgerS - 1));
      if (!(hint.delayS >= 1 && hint.delayS <= reach + 1e-9)) fail(`hint ${hint.delayS} s outside [1, ${reach}]`);
      if (hint.dueS !== undefined && !(hint.dueS >= hint.delayS && hint.dueS < options.ledgerS + 1))
        fail(`two-step due ${hint.dueS} s against a first step of ${hint.delayS} s`);
      ledger.book(fp, now, hint);
      bookInModel(model, fp, now, hint, options);
    } else if (o.kind === "claim") {
      const fp = `fp-${o.fp}`;
      const told = model.get(fp);
      if (told !== undefined && o.returnMs !== undefined) now = Math.max(now, Math.round(told.dueMs + o.returnMs));
      sweep();
      const booked = model.get(fp);
      const claim = ledger.claim(fp, now);
      const due = booked !== undefined && now >= booked.dueMs - options.earlyS * 1000;
      const onTime = due && booked !== undefined && now <= booked.dueMs + options.lateS * 1000;
      if (onTime !== (claim !== undefined))
        fail(`${fp} claimed ${JSON.stringify(claim)}, booked ${JSON.stringify(booked)}`);
      if (claim && booked && claim.promised !== booked.promised) fail(`${fp} claimed the wrong kind of booking`);
      if (claim && booked && Math.abs(claim.leadS - (booked.dueMs - booked.madeMs) / 1000) > 1e-9)
        fail(`${fp} claimed a lead of ${claim.leadS} s, booked ${JSON.stringify(booked)}`);
      if (due) model.delete(fp);
      if (claim?.promised) claimedPromises += 1;
      // Claimed once: the same fingerprint takes nothing more until it is booked again.
      if (due && ledger.claim(fp, now) !== undefined) fail(`${fp} claimed twice`);
    } else if (o.kind === "early") {
      const fp = `fp-${o.fp}`;
      ledger.admittedEarly(fp, now);
      model.delete(fp);
    } else {
      ledger.kept(o.admitted, o.leadS);
      keptCalls += 1;
    }
    sweep();
    // Promises per second from now on are exactly the promises outstanding for those seconds.
    const current = Math.floor(now / 1000);
    let counted = 0;
    for (let k = 0; k < options.ledgerS; k++) counted += ledger.promisedAt(now, k);
    const expected = [...model.values()].filter((b) => b.promised && Math.floor(b.dueMs / 1000) >= current).length;
    if (counted !== expected) fail(`${counted} promises counted ahead, ${expected} outstanding`);
    if (ledger.outstandingAt(now) !== model.size)
      fail(`${ledger.outstandingAt(now)} outstanding, modelled ${model.size}`);
    if (model.size > options.maxBookings) fail(`${model.size} bookings over ${options.maxBookings}`);
    const held = ledger.heldRoom(now);
    // Room is held only for promises still claimable or ahead (those due at most `heldLateS` ago, and ahead).
    const promises = [...model.values()].filter((b) => b.promised).length;
    if (!(Number.isInteger(held) && held >= 0 && held <= promises)) fail(`held room ${held} for ${promises} promises`);
    const outcomes = ledger.promiseOutcomes;
    if (outcomes.kept + outcomes.broken !== keptCalls) fail(`outcomes ${JSON.stringify(outcomes)}`);
    if (outcomes.noShow + claimedPromises > outcomes.made)
      fail(`more promises ended than made: ${JSON.stringify(outcomes)}`);
    if (!(ledger.trust >= options.minTrust && ledger.trust <= 1)) fail(`trust ${ledger.trust}`);
  }
  return violations;
}

/** What `book` does to the bookings: a new hint replaces the request's older one; the oldest goes past the cap. */
function bookInModel(
  model: Map<string, Modelled>,
  fp: string,
  now: number,
  hint: BookedHint,
  options: CapacityBookingOptions,
): void {
  if (hint.held) return;
  model.delete(fp);
  const dueMs = now + (hint.dueS ?? hint.delayS) * 1000;
  if (Math.floor(dueMs / 1000) - Math.floor(now / 1000) >= options.ledgerS) return;
  if (model.size >= options.maxBookings) model.delete(model.keys().next().value as string);
  model.set(fp, { dueMs, madeMs: now, promised: hint.promised });
}

describe("the capacity ledger under arbitrary refusals and returns", () => {
  it("keeps hints within horizons and counts exactly the promises outstanding", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 20, maxLength: 150, size: "max" }), settings, (ops, overrides) => {
        expect(run(ops, overrides)).toEqual([]);
      }),
      propertyRuns(200, 20261205),
    );
  });
});
