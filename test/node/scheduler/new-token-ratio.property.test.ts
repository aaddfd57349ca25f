import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../../src/engine/rng.js";
import { type Batch, Scheduler, type SchedulerOptions } from "../../../src/scheduler/index.js";
import { NewTokenRatio, ratioAfterRetraction } from "../../../src/scheduler/new-token-ratio.js";
import { propertyRuns } from "../../support/property-runs";
import { itemsOf } from "./drive.js";

/**
 * The new-token ratio held against the spec (/work/shared/spec/scheduler.md, "The new-token ratio" and
 * "Retraction"), not against src/scheduler/new-token-ratio.ts:
 *
 * - `init = min(initRatio * conservativeness, 1)`, `min = init * minFactor`, `decay = (init - min) / steps`;
 * - it starts at `init`; each decode step whose memory check passed lowers it by `decay`, never below `min`
 *   (so after k decays from a value v it is `max(v - k * decay, min)`, and a value set below `min` by a
 *   retraction comes back up to `min` at the next decay, SGLang's `max(ratio - decay, min)`); it reaches `min`
 *   after `steps` decays from `init` and stays there;
 * - going idle resets it to `init`; a retraction overwrites it with
 *   `min(1, (sum out + retractDecodeSteps * n) / (sum maxNew + 1))` over the n requests that stay;
 * - in the scheduler, over any sequence of submits, steps, finishes and aborts: a prefill leaves it alone, a
 *   decode step without retraction decays it once, a retraction overwrites it (no decay that step), idle resets
 *   it; submit / finish / abort never touch it.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(300, 20261118);

/** A number in [lo, hi] on a 1/10000 grid (plain doubles would bring subnormals, which no option takes). */
const grid = (lo: number, hi: number) => fc.integer({ min: lo * 10_000, max: hi * 10_000 }).map((n) => n / 10_000);

const paramsArb = fc.record({
  conservativeness: fc.oneof(fc.constantFrom(0, 0.3, 1, 1.5, 2), grid(0, 3)),
  init: fc.oneof(fc.constant(0.7), grid(0.01, 1)),
  minFactor: fc.oneof(fc.constantFrom(0.14, 0, 1), grid(0, 1)),
  decaySteps: fc.oneof(fc.constant(600), fc.integer({ min: 1, max: 400 })),
});

type Op = { op: "decay"; times: number } | { op: "reset" } | { op: "retraction"; value: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant("decay" as const), times: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("reset" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("retraction" as const),
      value: fc.oneof(grid(0, 1), fc.constantFrom(0, 1, 0.001)),
    }),
  },
);

describe("NewTokenRatio", () => {
  it("starts at min(init * conservativeness, 1), decays linearly to init * minFactor, clamps there, resets to init", () => {
    fc.assert(
      fc.property(paramsArb, fc.array(opArb, { maxLength: 25, size: "max" }), (p, ops) => {
        const r = new NewTokenRatio(p);
        const init = Math.min(p.init * p.conservativeness, 1);
        const min = init * p.minFactor;
        const decay = (init - min) / p.decaySteps;
        expect(r.init).toBe(init);
        expect(r.min).toBe(min);
        expect(r.decayPerStep).toBeCloseTo(decay, 15);
        expect(r.value).toBe(init);
        // Model: the value last set (init, or a retraction's), and the decays since.
        let base = init;
        let k = 0;
        for (const o of ops) {
          if (o.op === "reset") {
            r.reset();
            expect(r.value).toBe(init);
            base = init;
            k = 0;
          } else if (o.op === "retraction") {
            r.value = o.value; // what the scheduler does with ratioAfterRetraction's result
            base = o.value;
            k = 0;
          } else {
            let bad: string | null = null; // checked per decay, asserted once (expect is slow in a hot loop)
            for (let i = 0; i < o.times; i++) {
              const before = r.value;
              r.decay();
              k++;
              if (r.value < min) bad = `${r.value} under the floor ${min}`;
              else if (before >= min && r.value > before) bad = `${before} -> ${r.value} went up`;
              else if (before < min && r.value !== min) bad = `${before} under the floor -> ${r.value}, not ${min}`;
            }
            expect(bad).toBeNull();
            expect(r.value).toBeCloseTo(Math.max(base - k * decay, min), 10);
          }
        }
      }),
      { numRuns: RUNS * 2, seed: SEED },
    );
  });

  it("reaches the floor exactly after `steps` decays from init (one more at most for float rounding) and stays", () => {
    fc.assert(
      fc.property(paramsArb, (p) => {
        const r = new NewTokenRatio(p);
        for (let i = 0; i < p.decaySteps - 1; i++) r.decay();
        if (r.init > r.min) expect(r.value).toBeGreaterThan(r.min); // not before
        r.decay();
        expect(r.value).toBeCloseTo(r.min, 12);
        r.decay();
        expect(r.value).toBe(r.min);
        for (let i = 0; i < 50; i++) r.decay();
        expect(r.value).toBe(r.min);
      }),
      { numRuns: RUNS, seed: SEED + 1 },
    );
  });

  it("after a retraction: min(1, (sum out + steps * n) / (sum maxNew + 1)) over the requests that stay", () => {
    const remainingArb = fc.array(
      fc
        .record({ out: fc.integer({ min: 0, max: 5000 }), extra: fc.integer({ min: 0, max: 5000 }) })
        .map(({ out, extra }) => ({ out, maxNew: out + extra })),
      { maxLength: 20 },
    );
    fc.assert(
      fc.property(remainingArb, fc.constantFrom(0, 1, 20, 100), (remaining, steps) => {
        let out = 0;
        let maxNew = 0;
        for (const r of remaining) {
          out += r.out;
          maxNew += r.maxNew;
        }
        const got = ratioAfterRetraction(out, remaining.length, maxNew, steps);
        expect(got).toBeCloseTo(Math.min(1, (out + steps * remaining.length) / (maxNew + 1)), 14);
        expect(got).toBeGreaterThanOrEqual(0);
        expect(got).toBeLessThanOrEqual(1);
      }),
      { numRuns: RUNS, seed: SEED + 2 },
    );
  });
});

// ---- in the scheduler, over any step sequence ------------------------------------------------------------------

const optionsArb = fc.record({
  maxTotalTokens: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 40, max: 200 }) },
    { weight: 1, arbitrary: fc.integer({ min: 2000, max: 20_000 }) },
  ),
  pageSize: fc.constantFrom(1, 1, 4),
  scheduleConservativeness: fc.constantFrom(0, 0.3, 1, 1.5),
  initNewTokenRatio: fc.constantFrom(0.7, 0.5),
  minNewTokenRatioFactor: fc.constantFrom(0.14, 0.5),
  newTokenRatioDecaySteps: fc.constantFrom(3, 10, 40),
  retractDecodeSteps: fc.constantFrom(20, 5),
  disableRadixCache: fc.boolean(),
});

type SchedOp = "submit" | "step" | "finish" | "abort";
const schedOpArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<SchedOp>("submit") },
  { weight: 20, arbitrary: fc.constant<SchedOp>("step") },
  { weight: 1, arbitrary: fc.constant<SchedOp>("finish") },
  { weight: 1, arbitrary: fc.constant<SchedOp>("abort") },
);

describe("the scheduler's ratio over any step sequence", () => {
  it("prefill: unchanged; decode: one decay; retraction: the formula, no decay; idle: init; other calls: unchanged", () => {
    const seen = { decays: 0, floor: 0, retractions: 0, resets: 0, prefills: 0 };
    fc.assert(
      fc.property(
        optionsArb,
        fc.array(schedOpArb, { minLength: 50, maxLength: 400, size: "max" }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (o, ops, seed) => {
          const rnd = seededRandom(seed);
          const s = new Scheduler(o satisfies SchedulerOptions);
          const init = Math.min(o.initNewTokenRatio * o.scheduleConservativeness, 1);
          const min = init * o.minNewTokenRatioFactor;
          const decay = (init - min) / o.newTokenRatioDecaySteps;
          let model = init;
          let next = 0;
          const live: string[] = [];
          const expectRatio = () => expect(s.state().newTokenRatio).toBeCloseTo(model, 12);
          const after = (batch: Batch) => {
            const retraction = batch.events.find((e) => e.type === "retraction");
            if (batch.kind === "idle") {
              model = init;
              seen.resets++;
            } else if (retraction !== undefined) {
              // Over the requests that stay: the decode batch (none when the last one was aborted).
              const stay = batch.kind === "decode" ? batch.requests : [];
              let out = 0;
              let maxNew = 0;
              for (const r of stay) {
                out += r.outputTokenIds.length;
                maxNew += r.maxNewTokens;
              }
              model = Math.min(1, (out + o.retractDecodeSteps * stay.length) / (maxNew + 1));
              seen.retractions++;
            } else if (batch.kind === "decode") {
              model = Math.max(model - decay, min);
              seen.decays++;
              if (model === min) seen.floor++;
            } else {
              seen.prefills++;
            }
            expectRatio();
          };
          for (const op of ops) {
            if (op === "submit") {
              const id = `r${next++}`;
              try {
                s.submit({
                  id,
                  promptTokenIds: Array.from({ length: 1 + Math.floor(rnd() * 20) }, () => Math.floor(rnd() * 8)),
                  maxNewTokens: Math.floor(rnd() * 60),
                  ignoreEos: rnd() < 0.2,
                });
                live.push(id);
              } catch {
                // too long for this pool
              }
            } else if (op === "step") {
              const batch = s.nextBatch(0);
              after(batch);
              const items = itemsOf(batch);
              if (items.length > 0) {
                s.completeBatch({
                  tokenIds: items.map(() => 3),
                  stopped: items.filter(() => rnd() < 0.02).map((r) => r.id),
                });
              }
            } else if (live.length > 0) {
              const id = live[Math.floor(rnd() * live.length)] as string;
              if (op === "finish") s.finish(id);
              else s.abort(id);
            }
            expectRatio(); // submit, finish, abort and completeBatch leave it alone
          }
        },
      ),
      { numRuns: RUNS / 2, seed: SEED + 3 },
    );
    for (const [k, v] of Object.entries(seen)) expect(v, k).toBeGreaterThan(10);
  });
});
