import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PolicyResult, ScenarioResult } from "../../../src/sim/evaluation";
import { envelopeRows, envelopeSection } from "../../../src/sim/report-envelope";
import { envelopeOwners } from "../../../src/sim/report-envelope-owners";
import { horizonTallies, pairwiseRows, pairwiseSection } from "../../../src/sim/report-pairwise";
import { bestOtherCurve, checkTargets, withDefault } from "../../../src/sim/targets";
import { propertyRuns } from "../../support/property-runs";

/**
 * Issue 15's simulator targets and the analyses of docs/evaluation.md that read them, held against a model written
 * from the documentation (src/sim/targets.ts's, report-envelope.ts's, report-pairwise.ts's and
 * report-envelope-owners.ts's JSDoc, docs/evaluation.md's tables "The default policy against the targets",
 * "Against each policy alone", "Every policy held to the curve target" and "Who sets the curve target"):
 *
 * - `checkTargets` / `bestOtherCurve` / `withDefault` (src/sim/targets.ts): per horizon the default's share less
 *   the best of the OTHER policies there (each horizon's best may be a different one); the worst of those gaps,
 *   its horizon and a policy best there; the final served share less the best other's, the oracle's less the
 *   default's, attempts per offered less static-30's (0 without static-30); met: curve iff every gap >= -2 points,
 *   served iff >= -1 point, oracle iff <= 5 points, attempts iff at most static-30's. `withDefault` swaps the
 *   default's figures for another policy's and leaves the rest (and its input) as they were;
 * - `pairwiseRows` / `horizonTallies` / `pairwiseSection` (src/sim/report-pairwise.ts): per other policy (in the
 *   results' order), in how many scenarios the default is within 2 points of it at every horizon, serves at least
 *   its share less 1 point, makes no more attempts per offered request; the furthest behind its curve (scenario,
 *   horizon); per horizon, in how many scenarios the default serves more / fewer by more than 2 points; the
 *   section's cells and its sentence on the static Retry-Afters;
 * - `envelopeRows` / `envelopeSection` (src/sim/report-envelope.ts): every policy held to the curve target against
 *   the best of all the others (with `leftOut`, that policy neither held nor in anyone's envelope): scenarios held,
 *   within 2 points, nearest of all (ties count for each), worst gaps summed, furthest behind; the section's cells,
 *   its nearest-first order, its reading and the sweep's sentence;
 * - `envelopeOwners` (src/sim/report-envelope-owners.ts): per horizon, each scenario's best other policy (any of
 *   those tied there), whether its share there is within half a point of its final served share, and the range of
 *   those policies' final shares.
 *
 * The model works in exact integers: every share is a count over the scenario's offered requests (as the
 * simulator's are), and a missing horizon counts as nobody served within it (as the modules read it). Generated:
 * 1 to 7 other policies, static-30 present or not (or the default), the default at any place, the best or not,
 * exact ties, gaps of exactly 0.5 / 1 / 2 / 5 points and one request either side (1e-9 with a billion requests),
 * missing horizons, policies missing from a scenario. Where the exact gap equals a tolerance (or two policies'
 * worst gaps tie exactly), the verdict is "within" (resp. "counts for each"), as documented, whatever a float
 * subtraction gives (0.3 - 0.32 = -0.020000000000000018: it used to read as missed); one request beyond it, in a
 * billion, is not. Figures are compared within 1e-12 of the exact ones.
 */

const { numRuns: RUNS, seed: SEED } = propertyRuns(200, 20261205);
const PARAMS = { numRuns: RUNS, seed: SEED };

/** Within float rounding of the exact figure (shares and attempts per offered are at most a few). */
const EPS = 1e-12;

// ---- the model: counts over the offered requests --------------------------------------------------------------

/** The completion horizons (docs/evaluation.md, Metrics). */
const HORIZONS = [5, 15, 30, 60, 120];
/** Issue 15's tolerances, and the owners' "final share", in 1/200 of a share (half points): 2, 1, 5, 0.5 points. */
const TOL = { curve: 4, served: 2, oracle: 10, final: 1 } as const;
const STATICS = ["static-1", "static-5", "static-30"];

interface MPolicy {
  id: string;
  /** Requests served within each horizon; `undefined`: the horizon is missing from its curve. */
  curve: (number | undefined)[];
  served: number;
  attempts: number;
}
interface MScenario {
  name: string;
  /** Offered requests: every share is a count over it. */
  n: number;
  defaultPolicy: string;
  oracle: number;
  policies: MPolicy[];
}

/** A verdict: on the tolerance exactly (or on a tie) is within it (resp. counts for each), as documented. */
type Verdict = boolean;

/** `k / n >= -t / 200`, exactly. */
function atLeast(k: number, n: number, t: number): Verdict {
  const l = 200 * k;
  const r = -t * n;
  return l >= r;
}
/** `k / n <= t / 200`, exactly. */
function atMost(k: number, n: number, t: number): Verdict {
  const l = 200 * k;
  const r = t * n;
  return l <= r;
}
/** Attempts `k / n` more than the other's: at most means k <= 0 (one attempt in a billion is more). */
function noMore(k: number, _n: number): Verdict {
  return k <= 0;
}

const at = (p: MPolicy, i: number) => p.curve[i] ?? 0;

/** How many verdicts hold: at least the decided ones, at most with every edge too. */
function count(vs: readonly Verdict[]): { lo: number; hi: number } {
  return { lo: vs.filter((v) => v === true).length, hi: vs.filter((v) => v !== false).length };
}
function inRange(actual: number, range: { lo: number; hi: number }, what: string): void {
  if (!(actual >= range.lo && actual <= range.hi))
    throw new Error(`${what}: ${actual} not in [${range.lo}, ${range.hi}]`);
}
function near(actual: number, expected: number, what: string): void {
  if (!(Math.abs(actual - expected) <= EPS || actual === expected))
    throw new Error(`${what}: ${actual} != ${expected}`);
}
function verdict(actual: boolean, expected: Verdict, what: string): void {
  if (actual !== expected) throw new Error(`${what}: ${actual}, the model says ${expected}`);
}

/** The targets as issue 15 states them, on one scenario (exact counts over `n`). */
function modelTargets(s: MScenario) {
  const def = s.policies.find((p) => p.id === s.defaultPolicy) as MPolicy;
  const others = s.policies.filter((p) => p.id !== s.defaultPolicy);
  const best = HORIZONS.map((_, i) => Math.max(...others.map((o) => at(o, i))));
  const gaps = HORIZONS.map((_, i) => at(def, i) - (best[i] as number));
  const worst = Math.min(...gaps);
  const servedGap = def.served - Math.max(...others.map((o) => o.served));
  const oracleGap = s.oracle - def.served;
  const s30 = s.policies.find((p) => p.id === "static-30");
  const attemptsDiff = s30 ? def.attempts - s30.attempts : 0;
  return {
    best,
    gaps,
    worst,
    /** The horizons where the default is furthest behind, and at each the other policies best there. */
    worstAt: HORIZONS.filter((_, i) => gaps[i] === worst),
    bestAt: (h: number) => {
      const i = HORIZONS.indexOf(h);
      return others.filter((o) => at(o, i) === best[i]).map((o) => o.id);
    },
    servedGap,
    oracleGap,
    attemptsDiff,
    met: {
      curve: atLeast(worst, s.n, TOL.curve),
      served: atLeast(servedGap, s.n, TOL.served),
      oracle: atMost(oracleGap, s.n, TOL.oracle),
      attempts: noMore(attemptsDiff, s.n),
    },
  };
}

/** A policy's worst gap to the best of `others` in a scenario (counts), per horizon and at worst. */
function heldTo(own: MPolicy, others: readonly MPolicy[]) {
  const gaps = HORIZONS.map((_, i) => at(own, i) - Math.max(...others.map((o) => at(o, i))));
  return { gaps, worst: Math.min(...gaps) };
}

// ---- into the modules' shapes ---------------------------------------------------------------------------------

function toPolicy(p: MPolicy, n: number): PolicyResult {
  const servedWithinS: Record<string, number> = {};
  HORIZONS.forEach((h, i) => {
    const c = p.curve[i];
    if (c !== undefined) servedWithinS[String(h)] = c / n;
  });
  const servedFraction = p.served / n;
  const attemptsPerOffered = p.attempts / n;
  return {
    id: p.id,
    label: p.id,
    servedFraction,
    attemptsPerOffered,
    hintCoverage: null,
    servedWithinS,
    metrics: { requests: n, served: p.served, servedFraction, attemptsPerOffered, servedWithinS: { ...servedWithinS } },
    admittedRetryRateBySeed: [],
  } as unknown as PolicyResult;
}

function toResult(s: MScenario): ScenarioResult {
  return {
    name: s.name,
    offeredRequests: s.n,
    defaultPolicy: s.defaultPolicy,
    oracle: { requests: s.n, served: s.oracle, servedFraction: s.oracle / s.n, servedWithinS: {}, model: "test" },
    policies: s.policies.map((p) => toPolicy(p, s.n)),
  } as unknown as ScenarioResult;
}

// ---- generators -----------------------------------------------------------------------------------------------

const OTHER_IDS = ["none", "static-1", "static-5", "static-30", "router_queue_drain_rate", "queue_drain_rate"];
/** Offered requests: multiples of 50, 100, 200 (exact 2, 1, 0.5 point gaps exist), real ones, a billion (1e-9). */
const N_CHOICES = [50, 100, 200, 1000, 3341, 5450, 34_634, 1_000_000, 1_000_000_000];

/**
 * A count offset: none, exactly `pts` points (0.5, 1, 2 or 5: the tolerance a scenario is drawn around) or one
 * request either side, anything within them, or anything within 10 points.
 */
const offsetArb = (n: number, pts: number) => {
  const at = Math.round((pts * n) / 100);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    {
      weight: 6,
      arbitrary: fc.tuple(fc.constantFrom(-1, 1), fc.constantFrom(-1, 0, 0, 0, 1)).map(([sign, e]) => sign * at + e),
    },
    { weight: 2, arbitrary: fc.integer({ min: -at, max: at }) },
    { weight: 1, arbitrary: fc.integer({ min: -Math.ceil(n / 10), max: Math.ceil(n / 10) }) },
  );
};
const attemptsOffsetArb = (n: number) =>
  fc.oneof(fc.constant(0), fc.constantFrom(-1, 1), fc.integer({ min: -Math.ceil(n / 2), max: Math.ceil(n / 2) }));
const shareArb = (n: number) => fc.double({ min: 0.1, max: 0.9, noNaN: true }).map((u) => Math.round(u * n));

const clamp = (v: number, n: number) => Math.min(n, Math.max(0, v));

interface Shape {
  defaultPolicy: string;
  /** Every policy, the default among them, in the results' order. */
  ids: string[];
}
const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    defaultPolicy: fc.constantFrom(
      "booked_capacity",
      "booked_capacity",
      "booked_capacity",
      "static-30",
      "retry_schedule",
    ),
    others: fc.shuffledSubarray([...OTHER_IDS, "retry_schedule"], { minLength: 1, maxLength: 7 }),
    at: fc.nat(),
  })
  .map(({ defaultPolicy, others, at: pos }) => {
    const rest = others.filter((id) => id !== defaultPolicy);
    const ids = rest.length > 0 ? rest : ["none"];
    const i = pos % (ids.length + 1);
    return { defaultPolicy, ids: [...ids.slice(0, i), defaultPolicy, ...ids.slice(i)] };
  });

const policyOffsetsArb = (n: number, pts: number) =>
  fc.record({
    curve: fc.tuple(...HORIZONS.map(() => offsetArb(n, pts))),
    /** Mostly a whole curve; sometimes a horizon or more missing. */
    missing: fc.oneof(
      { weight: 5, arbitrary: fc.constant(HORIZONS.map(() => false)) },
      fc.tuple(...HORIZONS.map(() => fc.integer({ min: 0, max: 2 }).map((x) => x === 0))),
    ),
    served: offsetArb(n, pts),
    attempts: attemptsOffsetArb(n),
  });

function scenarioArb(shape: Shape, name: string): fc.Arbitrary<MScenario> {
  return fc.tuple(fc.constantFrom(...N_CHOICES), fc.constantFrom(0.5, 1, 2, 5)).chain(([n, pts]) =>
    fc
      .record({
        ref: fc.tuple(...HORIZONS.map(() => shareArb(n))),
        served: shareArb(n),
        attempts: fc.double({ min: 1, max: 3, noNaN: true }).map((u) => Math.round(u * n)),
        offsets: fc.tuple(...shape.ids.map(() => policyOffsetsArb(n, pts))),
        /** The default on the reference itself (its gaps are then the others' offsets, exactly). */
        plainDefault: fc.boolean(),
        /** The default the best of all at every horizon and in served share (by 0 or 1 request, or more). */
        defaultBest: fc.oneof({ weight: 4, arbitrary: fc.constant(-1) }, fc.constantFrom(0, 1, 7)),
        oracle: fc.oneof(offsetArb(n, pts), offsetArb(n, 5)),
      })
      .map(({ ref, served, attempts, offsets, plainDefault, defaultBest, oracle }) => {
        const policies = shape.ids.map((id, k): MPolicy => {
          const o = offsets[k] as (typeof offsets)[number];
          const plain = plainDefault && id === shape.defaultPolicy;
          return {
            id,
            curve: HORIZONS.map((_, i) =>
              o.missing[i] ? undefined : clamp((ref[i] as number) + (plain ? 0 : (o.curve[i] as number)), n),
            ),
            served: clamp(served + (plain ? 0 : o.served), n),
            attempts: Math.max(0, attempts + (plain ? 0 : o.attempts)),
          };
        });
        const def = policies.find((p) => p.id === shape.defaultPolicy) as MPolicy;
        if (defaultBest >= 0) {
          const others = policies.filter((p) => p !== def);
          def.curve = HORIZONS.map((_, i) => clamp(Math.max(...others.map((p) => at(p, i))) + defaultBest, n));
          def.served = clamp(Math.max(...others.map((p) => p.served)) + defaultBest, n);
        }
        return { name, n, defaultPolicy: shape.defaultPolicy, oracle: clamp(def.served + oracle, n), policies };
      }),
  );
}

/** Scenarios of one evaluation: the same policies, in any order, one of them sometimes missing after the first. */
const runOfArb = (shape: Shape, names: string[]) =>
  fc.integer({ min: 1, max: names.length }).chain((k) =>
    fc
      .tuple(
        ...names.slice(0, k).map((name) =>
          fc.record({
            scenario: scenarioArb(shape, name),
            order: fc.nat(),
            drop: fc.oneof({ weight: 5, arbitrary: fc.constant(-1) }, fc.nat()),
          }),
        ),
      )
      .map((xs) => ({
        shape,
        scenarios: xs.map(({ scenario, order, drop }, i): MScenario => {
          let policies = scenario.policies;
          if (i > 0) {
            const r = order % policies.length;
            policies = [...policies.slice(r), ...policies.slice(0, r)];
            if (drop >= 0) policies = policies.filter((_, j) => j !== drop % policies.length);
          }
          return { ...scenario, policies };
        }),
      })),
  );
const runArb = (names: string[]) => shapeArb.chain((shape) => runOfArb(shape, names));

const SCENARIO_NAMES = ["a", "b", "c", "d"];

// ---- the properties -------------------------------------------------------------------------------------------

function expectTargets(result: ScenarioResult, s: MScenario): void {
  const c = checkTargets(result);
  const m = modelTargets(s);
  expect(c.scenario).toBe(s.name);
  expect(Object.keys(c.curveGap).sort()).toEqual(HORIZONS.map(String).sort());
  HORIZONS.forEach((h, i) => {
    near(c.curveGap[String(h)] as number, (m.gaps[i] as number) / s.n, `curve gap at ${h} s`);
  });
  near(c.worstCurveGap.gap, m.worst / s.n, "worst curve gap");
  expect(m.worstAt).toContain(c.worstCurveGap.horizonS);
  expect(m.bestAt(c.worstCurveGap.horizonS)).toContain(c.worstCurveGap.bestOther);
  near(c.servedGap, m.servedGap / s.n, "served gap");
  near(c.oracleGap, m.oracleGap / s.n, "oracle gap");
  near(c.attemptsVsStatic30, m.attemptsDiff / s.n, "attempts against static-30");
  verdict(c.met.curve, m.met.curve, "met.curve");
  verdict(c.met.served, m.met.served, "met.served");
  verdict(c.met.oracle, m.met.oracle, "met.oracle");
  verdict(c.met.attempts, m.met.attempts, "met.attempts");
}

describe("issue 15's targets (checkTargets) against the model", () => {
  it("gives each gap, the worst horizon and who sets it, and each verdict", () => {
    fc.assert(
      fc.property(
        shapeArb.chain((shape) => scenarioArb(shape, "s")),
        (s) => {
          const result = toResult(s);
          expectTargets(result, s);
          const m = modelTargets(s);
          const best = bestOtherCurve(result);
          expect(Object.keys(best).sort()).toEqual(HORIZONS.map(String).sort());
          HORIZONS.forEach((h, i) => {
            expect(best[String(h)]).toBe((m.best[i] as number) / s.n);
          });
        },
      ),
      PARAMS,
    );
  });

  it("exactly on each tolerance (within) and one request either side, a billion offered (1e-9 of a share)", () => {
    const n = 1_000_000_000;
    const base = (def: Partial<MPolicy>, other: Partial<MPolicy>, oracle: number): MScenario => {
      const policy = (id: string, p: Partial<MPolicy>): MPolicy => ({
        id,
        curve: HORIZONS.map(() => 300_000_000),
        served: 900_000_000,
        attempts: 1_200_000_000,
        ...p,
      });
      return {
        name: "edge",
        n,
        defaultPolicy: "booked_capacity",
        oracle,
        policies: [policy("booked_capacity", def), policy("static-30", other)],
      };
    };
    for (const e of [-1, 0, 1]) {
      // The default 0.3 at 30 s against 0.32 - 1e-9, 0.32 (exactly 2 points: met) and 0.32 + 1e-9.
      const curve = base({}, { curve: HORIZONS.map((h) => (h === 30 ? 320_000_000 + e : 300_000_000)) }, 900_000_000);
      expectTargets(toResult(curve), curve);
      expect(checkTargets(toResult(curve)).met.curve).toBe(e <= 0);
      // Served 0.89 against 0.9 -/+ 1e-9.
      const served = base({ served: 890_000_000 }, { served: 900_000_000 + e }, 890_000_000);
      expectTargets(toResult(served), served);
      expect(checkTargets(toResult(served)).met.served).toBe(e <= 0);
      // The oracle 0.95 -/+ 1e-9 against the default's 0.9.
      const oracle = base({}, {}, 950_000_000 + e);
      expectTargets(toResult(oracle), oracle);
      expect(checkTargets(toResult(oracle)).met.oracle).toBe(e <= 0);
      // Attempts one in a billion either side of static-30's, or equal.
      const attempts = base({ attempts: 1_200_000_000 + e }, {}, 900_000_000);
      expectTargets(toResult(attempts), attempts);
      expect(checkTargets(toResult(attempts)).met.attempts).toBe(e <= 0);
    }
  });

  it("withDefault swaps in the default's figures only, and the targets are checked on them", () => {
    fc.assert(
      fc.property(
        shapeArb.chain((shape) =>
          scenarioArb(shape, "s").chain((s) => fc.tuple(fc.constant(s), policyOffsetsArb(s.n, 2), fc.nat())),
        ),
        ([s, o, k]) => {
          const donor = s.policies[k % s.policies.length] as MPolicy;
          const own: MPolicy = {
            id: "variant",
            curve: HORIZONS.map((_h, i) =>
              o.missing[i] ? undefined : clamp(at(donor, i) + (o.curve[i] as number), s.n),
            ),
            served: clamp(donor.served + o.served, s.n),
            attempts: Math.max(0, donor.attempts + o.attempts),
          };
          const result = toResult(s);
          const before = structuredClone(result);
          const swapped = withDefault(result, toPolicy(own, s.n));
          expect(result).toEqual(before);
          expect(swapped.policies.map((p) => p.id)).toEqual(s.policies.map((p) => p.id));
          swapped.policies.forEach((p, i) => {
            if (p.id !== s.defaultPolicy) expect(p).toEqual(result.policies[i]);
          });
          const m: MScenario = {
            ...s,
            policies: s.policies.map((p) => (p.id === s.defaultPolicy ? { ...own, id: p.id } : p)),
          };
          expectTargets(swapped, m);
        },
      ),
      PARAMS,
    );
  });
});

describe("the default against each policy alone (pairwiseRows, horizonTallies) against the model", () => {
  it("counts, per other policy, the scenarios within each target and where the default is furthest behind", () => {
    fc.assert(
      fc.property(runArb(SCENARIO_NAMES), ({ shape, scenarios }) => {
        const results = scenarios.map(toResult);
        const rows = pairwiseRows(results, shape.defaultPolicy);
        const first = scenarios[0] as MScenario;
        expect(rows.map((r) => r.policy)).toEqual(
          first.policies.map((p) => p.id).filter((id) => id !== shape.defaultPolicy),
        );
        for (const row of rows) {
          const pairs = scenarios.flatMap((s) => {
            const def = s.policies.find((p) => p.id === shape.defaultPolicy);
            const other = s.policies.find((p) => p.id === row.policy);
            return def && other ? [{ s, def, other, gaps: heldTo(def, [other]) }] : [];
          });
          expect(row.scenarios).toBe(pairs.length);
          inRange(row.curveWithin, count(pairs.map((x) => atLeast(x.gaps.worst, x.s.n, TOL.curve))), "curveWithin");
          inRange(
            row.servedWithin,
            count(pairs.map((x) => atLeast(x.def.served - x.other.served, x.s.n, TOL.served))),
            "servedWithin",
          );
          inRange(
            row.attemptsAtMost,
            count(pairs.map((x) => noMore(x.def.attempts - x.other.attempts, x.s.n))),
            "attemptsAtMost",
          );
          if (pairs.length === 0) {
            expect(row.worst.gap).toBe(Number.POSITIVE_INFINITY);
            continue;
          }
          const worst = Math.min(...pairs.map((x) => x.gaps.worst / x.s.n));
          near(row.worst.gap, worst, `${row.policy}: furthest behind`);
          const there = pairs.find((x) => x.s.name === row.worst.scenario);
          const i = HORIZONS.indexOf(row.worst.horizonS);
          expect(there && i >= 0).toBe(true);
          near(((there?.gaps.gaps[i] as number) ?? Number.NaN) / (there?.s.n ?? 1), worst, "at the worst's place");
        }
        // Horizon by horizon, against each other policy and one that is in no scenario.
        for (const policy of [...OTHER_IDS, "retry_schedule", "absent"]) {
          if (policy === shape.defaultPolicy) continue;
          const tallies = horizonTallies(results, shape.defaultPolicy, policy);
          expect(tallies.map((t) => t.horizonS)).toEqual(HORIZONS);
          tallies.forEach((t, i) => {
            const gaps = scenarios.flatMap((s) => {
              const def = s.policies.find((p) => p.id === shape.defaultPolicy);
              const other = s.policies.find((p) => p.id === policy);
              return def && other ? [{ k: at(def, i) - at(other, i), n: s.n }] : [];
            });
            expect(t.ahead).toBe(gaps.filter((g) => g.k > 0).length);
            // Behind by more than 2 points: not within them.
            inRange(t.behind, count(gaps.map(({ k, n }) => !atLeast(k, n, TOL.curve))), `behind at ${t.horizonS} s`);
          });
        }
      }),
      PARAMS,
    );
  });
});

/** The model of one envelope row: per scenario the policy's worst gap to the rest's best (but `leftOut`). */
function modelEnvelope(scenarios: readonly MScenario[], leftOut?: string) {
  const ids = (scenarios[0]?.policies.map((p) => p.id) ?? []).filter((id) => id !== leftOut);
  const held = scenarios.map((s) => {
    const byId = new Map<string, { gaps: number[]; worst: number } | undefined>();
    for (const id of ids) {
      const own = s.policies.find((p) => p.id === id);
      const others = s.policies.filter((p) => p.id !== id && p.id !== leftOut);
      byId.set(id, own && others.length > 0 ? heldTo(own, others) : undefined);
    }
    return byId;
  });
  return ids.map((policy) => {
    const mine = scenarios.flatMap((s, i) => {
      const g = held[i]?.get(policy);
      if (!g) return [];
      const all = [...(held[i]?.values() ?? [])].flatMap((x) => (x ? [x.worst] : []));
      const top = Math.max(...all);
      const nearest: Verdict = g.worst >= top;
      return [{ s, g, nearest }];
    });
    const worstSum = mine.reduce((a, x) => a + x.g.worst / x.s.n, 0);
    const worst = Math.min(...mine.map((x) => x.g.worst / x.s.n));
    return {
      policy,
      scenarios: mine.length,
      curveWithin: count(mine.map((x) => atLeast(x.g.worst, x.s.n, TOL.curve))),
      nearest: count(mine.map((x) => x.nearest)),
      worstSum,
      worst,
      /** Whether the gap at (scenario, horizon) is its worst over every scenario. */
      isWorst: (scenario: string, horizonS: number) => {
        const x = mine.find((y) => y.s.name === scenario);
        const i = HORIZONS.indexOf(horizonS);
        return x !== undefined && i >= 0 && Math.abs((x.g.gaps[i] as number) / x.s.n - worst) <= EPS;
      },
    };
  });
}

describe("every policy held to the curve target (envelopeRows) against the model", () => {
  it("gives each policy's scenarios, within 2 points, nearest, summed and furthest behind, with or without one left out", () => {
    fc.assert(
      fc.property(runArb(SCENARIO_NAMES), fc.nat(), ({ shape, scenarios }, pick) => {
        const results = scenarios.map(toResult);
        const choices = [undefined, shape.defaultPolicy, shape.ids[pick % shape.ids.length], "absent"];
        const leftOut = choices[pick % choices.length];
        const rows = envelopeRows(results, leftOut);
        const model = modelEnvelope(scenarios, leftOut);
        expect(rows.map((r) => r.policy)).toEqual(model.map((m) => m.policy));
        rows.forEach((row, i) => {
          const m = model[i] as (typeof model)[number];
          expect(row.scenarios, `${row.policy}: scenarios`).toBe(m.scenarios);
          inRange(row.curveWithin, m.curveWithin, `${row.policy}: curveWithin`);
          inRange(row.nearest, m.nearest, `${row.policy}: nearest`);
          near(row.worstSum, m.worstSum, `${row.policy}: worstSum`);
          if (m.scenarios === 0) {
            expect(row.worst.gap).toBe(Number.POSITIVE_INFINITY);
            return;
          }
          near(row.worst.gap, m.worst, `${row.policy}: worst`);
          expect(m.isWorst(row.worst.scenario, row.worst.horizonS), `${row.policy}: worst's place`).toBe(true);
        });
      }),
      PARAMS,
    );
  });

  it("agrees with checkTargets on the default: its scenarios within 2 points and its worst gaps", () => {
    fc.assert(
      fc.property(runArb(SCENARIO_NAMES), ({ shape, scenarios }) => {
        const complete = scenarios.filter((s) => s.policies.some((p) => p.id === shape.defaultPolicy));
        const results = complete.filter((s) => s.policies.length > 1).map(toResult);
        const row = envelopeRows(results).find((r) => r.policy === shape.defaultPolicy);
        if (results.length === 0 || !results[0]?.policies.some((p) => p.id === shape.defaultPolicy)) return;
        const checks = results.map(checkTargets);
        expect(row?.scenarios).toBe(results.length);
        near(
          row?.worstSum ?? Number.NaN,
          checks.reduce((a, c) => a + c.worstCurveGap.gap, 0),
          "summed worst gaps",
        );
        expect(row?.curveWithin).toBe(checks.filter((c) => c.met.curve).length);
      }),
      PARAMS,
    );
  });
});

const rowRe =
  /^\| (?:\*\*)?([^|*]+?)(?:\*\*)? \| (\d+) of (\d+) \| (\d+) of (\d+) \| ([^|]+) pts \| [^|]+ \(([^|,]+), (\d+) s\) \| (?:(\d+) of (\d+) \/ [^|]+ pts|-) \|$/;

describe("the envelope section (envelopeSection) against the model", () => {
  it("prints each row's counts, nearest first, and a reading and a sweep sentence the rows bear out", () => {
    let read = 0;
    fc.assert(
      fc.property(
        shapeArb.chain((shape) => fc.tuple(runOfArb(shape, SCENARIO_NAMES), runOfArb(shape, SCENARIO_NAMES))),
        ([{ shape, scenarios }, sweepRun]) => {
          // The sweep: the same policies, its points named scenario/queue bound.
          const sweep = sweepRun.scenarios.map((s, i) => ({ ...s, name: `${s.name}/${16 * (i + 1)}` }));
          const sweepPoints = sweep.map((s, i) => ({
            scenario: s.name.split("/")[0] as string,
            maxQueuedRequests: 16 * (i + 1),
            policies: toResult(s).policies,
          }));
          const text = envelopeSection(scenarios.map(toResult), shape.defaultPolicy, sweepPoints);
          const model = modelEnvelope(scenarios);
          const baselines = modelEnvelope(scenarios, shape.defaultPolicy);
          const rows = text
            .split("\n")
            .filter((l) => l.startsWith("| ") && !l.startsWith("| policy |") && !l.startsWith("| --- |"))
            .map((l) => {
              const g = rowRe.exec(l);
              if (!g) throw new Error(`unreadable row: ${l}`);
              return g;
            });
          expect(rows.map((g) => g[1]).sort()).toEqual(model.map((m) => m.policy).sort());
          const of = (id: string) => model.find((m) => m.policy === id) as (typeof model)[number];
          for (const g of rows) {
            const m = of(g[1] as string);
            inRange(Number(g[2]), m.curveWithin, `${m.policy}: within`);
            expect(Number(g[3])).toBe(m.scenarios);
            inRange(Number(g[4]), m.nearest, `${m.policy}: nearest`);
            const b = baselines.find((x) => x.policy === m.policy);
            if (b) {
              inRange(Number(g[9]), b.curveWithin, `${m.policy}: within without the default`);
              expect(Number(g[10])).toBe(b.scenarios);
            } else expect(g[9]).toBeUndefined();
          }
          // Nearest first: the summed worst gaps never rise down the table (ties within rounding either way).
          for (let i = 1; i < rows.length; i++)
            expect(of(rows[i - 1]?.[1] as string).worstSum).toBeGreaterThanOrEqual(
              of(rows[i]?.[1] as string).worstSum - EPS,
            );

          const def = model.find((m) => m.policy === shape.defaultPolicy);
          const decided = model.every((m) => m.curveWithin.lo === m.curveWithin.hi && m.nearest.lo === m.nearest.hi);
          const sameCounts = model.every((m) => m.scenarios === scenarios.length);
          const clearSums = model.every((m) => !def || m === def || Math.abs(m.worstSum - def.worstSum) > 1e-9);
          if (def && decided && sameCounts && clearSums && scenarios.length > 0) {
            read += 1;
            const n = scenarios.length;
            const most = Math.max(0, ...model.map((m) => m.curveWithin.lo));
            expect(text).toContain(
              most === 0
                ? `No policy meets it in any of the ${n} scenarios`
                : `No policy meets it in more than ${most} of ${n} scenarios`,
            );
            const nearer = model.filter((m) => m !== def && m.worstSum > def.worstSum);
            if (nearer.length === 0) {
              expect(text).toContain(`The default's worst gaps are the smallest in ${def.nearest.lo} of ${n}`);
              const next = /the next nearest policy's, ([^,]+)'s, to/.exec(text)?.[1];
              const others = model.filter((m) => m !== def);
              if (others.length > 0) {
                const top = Math.max(...others.map((m) => m.worstSum));
                expect(Math.abs(of(next as string).worstSum - top)).toBeLessThanOrEqual(EPS);
              }
              const bDecided = baselines.every((m) => m.curveWithin.lo === m.curveWithin.hi);
              const bMost = Math.max(0, ...baselines.map((m) => m.curveWithin.lo));
              if (bDecided)
                expect(text).toContain(
                  `the other policies meet it ${bMost === 0 ? "in none of them" : `in at most ${bMost} of ${n} scenarios`}`,
                );
            } else {
              const listed = /nearer than the default: (.*?)\.(?: Across|\n)/.exec(text)?.[1] ?? "";
              expect(
                listed
                  .split(", ")
                  .map((x) => x.replace(/ \([^)]*\)$/, ""))
                  .sort(),
              ).toEqual(nearer.map((m) => m.policy).sort());
            }
          }
          // The sweep's sentence.
          const sweepModel = modelEnvelope(sweep);
          const sweepDef = sweepModel.find((m) => m.policy === shape.defaultPolicy);
          const line =
            /Across the queue-bound sweep's (\d+) points \(below\), the other policies meet it (at none|at (\d+) at most), the default at (\d+), and the default's worst gap is the smallest at (\d+) of them\./.exec(
              text,
            );
          expect(Boolean(line)).toBe(Boolean(sweepDef));
          if (line && sweepDef) {
            expect(Number(line[1])).toBe(sweepDef.scenarios);
            const others = sweepModel.filter((m) => m !== sweepDef);
            const said = line[2] === "at none" ? 0 : Number(line[3]);
            inRange(
              said,
              {
                lo: Math.max(0, ...others.map((m) => m.curveWithin.lo)),
                hi: Math.max(0, ...others.map((m) => m.curveWithin.hi)),
              },
              "the sweep's others within",
            );
            inRange(Number(line[4]), sweepDef.curveWithin, "the sweep's default within");
            inRange(Number(line[5]), sweepDef.nearest, "the sweep's default nearest");
          }
        },
      ),
      PARAMS,
    );
    if (RUNS >= 100) expect(read).toBeGreaterThan(RUNS / 20);
  });
});

describe("the pairwise section (pairwiseSection) against the model", () => {
  it("prints each row's counts and where the default is furthest behind, and says which constants it keeps up with", () => {
    fc.assert(
      fc.property(runArb(SCENARIO_NAMES), ({ shape, scenarios }) => {
        const results = scenarios.map(toResult);
        const text = pairwiseSection(results, shape.defaultPolicy);
        const rows = pairwiseRows(results, shape.defaultPolicy);
        const first = scenarios[0] as MScenario;
        const ids = first.policies.map((p) => p.id).filter((id) => id !== shape.defaultPolicy);
        const model = ids.map((policy) => {
          const pairs = scenarios.flatMap((s) => {
            const def = s.policies.find((p) => p.id === shape.defaultPolicy);
            const other = s.policies.find((p) => p.id === policy);
            return def && other ? [{ s, def, other, gaps: heldTo(def, [other]) }] : [];
          });
          const worst = Math.min(...pairs.map((x) => x.gaps.worst / x.s.n));
          return {
            policy,
            scenarios: pairs.length,
            curveWithin: count(pairs.map((x) => atLeast(x.gaps.worst, x.s.n, TOL.curve))),
            servedWithin: count(pairs.map((x) => atLeast(x.def.served - x.other.served, x.s.n, TOL.served))),
            attemptsAtMost: count(pairs.map((x) => noMore(x.def.attempts - x.other.attempts, x.s.n))),
            /** Behind somewhere: some scenario and horizon where the default serves fewer (exactly). */
            behind: pairs.some((x) => x.gaps.worst < 0),
            worst,
            isWorst: (scenario: string, h: number) => {
              const x = pairs.find((y) => y.s.name === scenario);
              const i = HORIZONS.indexOf(h);
              return x !== undefined && i >= 0 && Math.abs((x.gaps.gaps[i] as number) / x.s.n - worst) <= EPS;
            },
          };
        });
        for (const m of model) {
          const line = text.split("\n").find((l) => l.startsWith(`| ${m.policy} | `) && l.includes(" of "));
          const g = /^\| [^|]+ \| (\d+) of (\d+) \| (\d+) of (\d+) \| (\d+) of (\d+) \| (.+) \|$/.exec(line ?? "");
          if (!g) throw new Error(`no row for ${m.policy}: ${line}`);
          inRange(Number(g[1]), m.curveWithin, `${m.policy}: curve cell`);
          inRange(Number(g[3]), m.servedWithin, `${m.policy}: served cell`);
          inRange(Number(g[5]), m.attemptsAtMost, `${m.policy}: attempts cell`);
          expect([g[2], g[4], g[6]].map(Number)).toEqual([m.scenarios, m.scenarios, m.scenarios]);
          if (!m.behind) expect(g[7]).toBe("never behind");
          else {
            const w = /^-?[\d.]+ \(([^,]+), (\d+) s\)$/.exec(g[7] as string);
            expect(w && m.isWorst(w[1] as string, Number(w[2])), `${m.policy}: ${g[7]}`).toBe(true);
          }
        }
        // The sentence on the static Retry-Afters, where every count it reads is decided.
        const statics = model.filter((m) => STATICS.includes(m.policy));
        const decided = statics.every(
          (m) => m.curveWithin.lo === m.curveWithin.hi && m.attemptsAtMost.lo === m.attemptsAtMost.hi,
        );
        if (decided) {
          const beaten = statics.filter((m) => m.curveWithin.lo === m.scenarios && m.attemptsAtMost.lo === m.scenarios);
          if (beaten.length === statics.length)
            expect(text).toContain(
              "it stays within 2 points of every static Retry-After at every horizon, with no more attempts per offered request, in every scenario.",
            );
          else {
            expect(text).toContain(
              `of the static Retry-Afters (${statics.map((m) => m.policy).join(", ")}), it stays within 2 points ${beaten.length === 0 ? "of none" : `of ${beaten.map((m) => m.policy).join(", ")} only`} at every horizon, with no more attempts per offered request, in every scenario`,
            );
            const behind = statics.filter((m) => m.behind);
            const said = /in every scenario; furthest behind ([^,]+), (-?[\d.]+) points \(([^,]+), (\d+) s\)\./.exec(
              text,
            );
            expect(Boolean(said)).toBe(behind.length > 0);
            if (said) {
              const worst = Math.min(...behind.map((m) => m.worst));
              const who = statics.find((m) => m.policy === said[1]);
              expect(who && Math.abs(who.worst - worst) <= EPS && who.isWorst(said[3] as string, Number(said[4]))).toBe(
                true,
              );
            }
          }
        }
        // The constants horizon by horizon: the cells are the tallies.
        for (const m of statics) {
          const line = text.split("\n").find((l) => l.startsWith(`| ${m.policy} | `) && l.includes(" / "));
          const cells = (line ?? "").split(" | ").slice(1);
          const tallies = horizonTallies(results, shape.defaultPolicy, m.policy);
          expect(cells.map((c) => c.replace(" |", ""))).toEqual(tallies.map((t) => `${t.ahead} / ${t.behind}`));
        }
        // The rows the section prints are pairwiseRows'.
        expect(rows.map((r) => r.policy)).toEqual(ids);
      }),
      PARAMS,
    );
  });
});

describe("who sets the curve target (envelopeOwners) against the model", () => {
  it("names a best other policy of each scenario at each horizon, whether its share there is final, and their shares", () => {
    fc.assert(
      fc.property(runArb(SCENARIO_NAMES), ({ shape, scenarios }) => {
        const owners = envelopeOwners(scenarios.map(toResult), shape.defaultPolicy);
        expect(owners.map((o) => o.horizonS)).toEqual(HORIZONS);
        owners.forEach((o, i) => {
          const counted = scenarios.filter((s) => s.policies.some((p) => p.id !== shape.defaultPolicy));
          // Each scenario with another policy is set by exactly one of those best there.
          const setBy = new Map<string, string>();
          for (const { policy, scenarios: names } of o.owners)
            for (const name of names) {
              expect(setBy.has(name), `${name} set twice at ${o.horizonS} s`).toBe(false);
              setBy.set(name, policy);
            }
          expect([...setBy.keys()].sort()).toEqual(counted.map((s) => s.name).sort());
          for (let k = 1; k < o.owners.length; k++) {
            const [a, b] = [o.owners[k - 1], o.owners[k]] as [(typeof o.owners)[number], (typeof o.owners)[number]];
            expect(
              a.scenarios.length > b.scenarios.length ||
                (a.scenarios.length === b.scenarios.length && a.policy.localeCompare(b.policy) < 0),
            ).toBe(true);
          }
          const finals: number[] = [];
          const served: number[] = [];
          const finalVerdicts: { name: string; v: Verdict }[] = [];
          for (const s of counted) {
            const others = s.policies.filter((p) => p.id !== shape.defaultPolicy);
            const top = Math.max(...others.map((p) => at(p, i)));
            const best = others.find((p) => p.id === setBy.get(s.name));
            expect(best && at(best, i) === top, `${s.name} at ${o.horizonS} s: ${best?.id} is not best`).toBe(true);
            const b = best as MPolicy;
            served.push(b.served / s.n);
            const v = atLeast(at(b, i) - b.served, s.n, TOL.final);
            finalVerdicts.push({ name: s.name, v });
            if (o.finalThere.includes(s.name)) finals.push(b.served / s.n);
          }
          for (const { name, v } of finalVerdicts)
            expect(o.finalThere.includes(name), `${name} final at ${o.horizonS} s`).toBe(v);
          expect(o.finalThere.every((name) => setBy.has(name))).toBe(true);
          if (counted.length > 0) expect(o.bestServed).toEqual({ min: Math.min(...served), max: Math.max(...served) });
          if (finals.length === 0) expect(o.finalServed).toBeUndefined();
          else expect(o.finalServed).toEqual({ min: Math.min(...finals), max: Math.max(...finals) });
        });
      }),
      PARAMS,
    );
  });
});
