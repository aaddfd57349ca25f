import { describe, expect, it } from "vitest";
import { readScenario } from "../../../eval/scenario-files";
import { SWEEP_DRAIN_S, sweepQueueBound } from "../../../eval/sweep";
import {
  BURST_TRAIN_FLEETS,
  type BurstTrainPoint,
  type BurstTrainReport,
  bestOther,
  burstTrainSummary,
  clairvoyantSummary,
  fleetShape,
  onFleet,
  renderBurstTrain,
  SPIKE_S,
  smallFleet,
  spikeTrain,
  TRAIN_LOAD,
  TRAIN_S,
  trainShape,
  trustByLeadSummary,
  VARIANT_HORIZON_S,
  type VariantFigures,
} from "../../../src/sim/burst-train";
import { measureCapacity } from "../../../src/sim/capacity";
import { burstBound } from "../../../src/sim/evaluation";
import { DEFAULT_POLICY_ID, EVAL_POLICIES } from "../../../src/sim/policies";
import { scenarioSchema } from "../../../src/sim/scenario";
import { DEFAULT_POLICY_VARIANTS } from "../../../src/sim/variants";
import { repoJson, repoText } from "../../support/repo-files";

const report = repoJson<BurstTrainReport>("docs/burst-train.json");

/**
 * A variant's figures at a point as a run makes them: the default's horizons, a curve that rises to at most the
 * final served share, an idle share in [0, 1), and promises (its own and the default's) of which at most all broke.
 */
function expectVariantFigures(v: VariantFigures, p: BurstTrainPoint): void {
  expect(Object.keys(v)).toEqual(["served", "servedWithinS", "idleWhileWaiting", "promises"]);
  expect(Object.keys(v.servedWithinS)).toEqual(Object.keys(p.servedWithinS[DEFAULT_POLICY_ID] ?? {}));
  const curve = Object.values(v.servedWithinS);
  expect(curve).toEqual([...curve].sort((a, b) => a - b));
  expect(Math.max(...curve)).toBeLessThanOrEqual(v.served);
  expect(v.served).toBeLessThanOrEqual(1);
  expect(v.idleWhileWaiting).toBeGreaterThanOrEqual(0);
  expect(v.idleWhileWaiting).toBeLessThan(1);
  // A run with no overload may make no promise.
  for (const c of [v.promises, p.defaultPromises]) {
    expect(Number.isInteger(c.made) && Number.isInteger(c.broken)).toBe(true);
    expect(c.broken).toBeGreaterThanOrEqual(0);
    expect(c.broken).toBeLessThanOrEqual(c.made);
  }
}

/** A variant's figures at a point without promises (the tests that do not read them). */
const NO_PROMISES = { promises: { made: 0, broken: 0 } };

const md = repoText("docs/burst-train.md");
/** A fleet's subsection of docs/burst-train.md (after its `### heading`, to the next one): what its tests read. */
function subsection(fleet: string, heading: string): string {
  const fleetSection =
    md.split(/^## /m).find((s) => s.startsWith(fleet === "small" ? "The small fleet:" : `The \`${fleet}\` fleet:`)) ??
    "";
  return fleetSection.split(`### ${heading}`)[1]?.split("### ")[0] ?? "";
}
/** The cells after the first two (period, queue) of a subsection's table rows. */
const tableRows = (text: string): string[][] =>
  text
    .split("\n")
    .filter((l) => /^\| (none|\d+ s) /.test(l))
    .map((l) =>
      l
        .split(" | ")
        .slice(2)
        .map((c) => c.replace(/ \|$/, "")),
    );
const fixed = (share: number | undefined) => `${(100 * (share ?? Number.NaN)).toFixed(1)}%`;
const signed = (share: number) => `${share >= 0 ? "+" : ""}${(100 * share).toFixed(1)}`;
const at60 = (c: Record<string, number> | undefined) => c?.["60"] ?? Number.NaN;
/** A point's spike period as the docs' sentences name it (none for the steady load). */
const period = (p: BurstTrainPoint) => (p.periodS === 0 ? undefined : String(p.periodS));
/** The highest idle share, as the docs quote it, of a variant's, the default's and static 30 s's over some points. */
const highestIdle = (points: readonly BurstTrainPoint[], variant: (p: BurstTrainPoint) => number): string[] =>
  [
    variant,
    (p: BurstTrainPoint) => p.idleWhileWaiting.booked_capacity ?? Number.NaN,
    (p: BurstTrainPoint) => p.idleWhileWaiting["static-30"] ?? Number.NaN,
  ].map((idle) => (100 * Math.max(...points.map(idle))).toFixed(1));

describe("a burst as a train of spikes", () => {
  const burst = readScenario("burst-3x");
  const seconds = (phases: { durationS: number }[]) => phases.reduce((s, p) => s + p.durationS, 0);

  it("keeps the lead-in, the last phase and the rest of the scenario, and spends 60 s at a mean 1.5x between them", () => {
    for (const periodS of [1, 2, 4, 8]) {
      const train = spikeTrain(burst, periodS);
      expect(train.phases[0]).toEqual(burst.phases[0]);
      expect(train.phases.at(-1)).toEqual(burst.phases.at(-1));
      expect({ ...train, phases: burst.phases }).toEqual(burst);
      const middle = train.phases.slice(1, -1);
      expect(seconds(middle)).toBeCloseTo(TRAIN_S, 9);
      expect(trainShape(train, periodS).meanLoad).toBeCloseTo(TRAIN_LOAD, 9);
      expect(trainShape(train, periodS).spikes).toBe(Math.ceil(TRAIN_S / periodS));
    }
  });

  it("puts a 0.2 s spike at the start of every period, the rest of it at the lead-in's load", () => {
    const train = spikeTrain(burst, 4);
    expect(train.phases.slice(1, 5)).toEqual([
      { durationS: SPIKE_S, load: 20.5 },
      { durationS: 3.8, load: 0.5 },
      { durationS: SPIKE_S, load: 20.5 },
      { durationS: 3.8, load: 0.5 },
    ]);
  });

  it("ends a period that does not divide 60 s with a shorter one whose spike keeps its mean", () => {
    const train = spikeTrain(burst, 8);
    expect(train.phases.slice(-3, -1)).toEqual([
      { durationS: SPIKE_S, load: 20.5 },
      { durationS: 3.8, load: 0.5 },
    ]);
    expect(trainShape(train, 8).spikeLoads).toEqual([40.5, 20.5]);
  });

  it("at period 0 holds 1.5x steady for the 60 s", () => {
    expect(spikeTrain(burst, 0).phases).toEqual([burst.phases[0], { durationS: 60, load: 1.5 }, burst.phases[2]]);
  });

  it("points burstPhase at the first spike, so the burst bound reads it", () => {
    const train = spikeTrain(burst, 2);
    expect(train.burstPhase).toBe(1);
    expect(train.phases[train.burstPhase as number]).toEqual({ durationS: SPIKE_S, load: 10.5 });
    // One spike's excess (9.5x capacity for 0.2 s) fits a queue of 100: nothing is refused by the fluid model.
    expect(burstBound(train, 8.5)?.refusedEstimate).toBe(0);
  });

  it("refuses a period that is no spike period, and a scenario that is not one burst", () => {
    expect(() => spikeTrain(burst, SPIKE_S)).toThrow("longer than the 0.2 s spike");
    expect(() => spikeTrain(burst, -1)).toThrow("longer than the 0.2 s spike");
    expect(() => spikeTrain(burst, Number.POSITIVE_INFINITY)).toThrow("longer than the 0.2 s spike");
    expect(() => spikeTrain(readScenario("waves"), 4)).toThrow("waves: not a scenario of one burst");
  });
});

describe("the small fleet", () => {
  const burst = readScenario("burst-3x");
  const small = smallFleet(burst);

  it("is one replica of 4 slots serving fixed 16-token prompts and 32-token outputs", () => {
    expect(small.fleet).toEqual({ replicas: [{ count: 1, speed: 1 }], maxOngoingRequests: 4, maxTotalTokens: 16384 });
    expect(small.requests).toEqual({
      ...burst.requests,
      prompt: { kind: "fixed", tokens: 16 },
      output: { kind: "fixed", tokens: 32 },
    });
    expect(scenarioSchema.parse(small)).toEqual(small);
  });

  it("keeps the rest of the scenario: phases, router, clients, network, seed and tail", () => {
    expect({ ...small, name: burst.name, fleet: burst.fleet, requests: burst.requests }).toEqual(burst);
    expect(small.name).toBe("burst-3x-small-fleet");
    expect(spikeTrain(small, 4).phases).toEqual(spikeTrain(burst, 4).phases);
    expect(onFleet(burst, "small")).toEqual(small);
    expect(onFleet(burst, "burst-3x")).toBe(burst);
  });
});

describe("the targets at each point", () => {
  const point = (served: Record<string, number>): BurstTrainPoint => ({
    fleet: "small",
    periodS: 4,
    maxQueuedRequests: 9,
    queueDrainS: 1.1,
    offeredRequests: 100,
    served,
    servedWithinS: Object.fromEntries(Object.entries(served).map(([id, s]) => [id, { "30": s, "60": s }])),
    idleWhileWaiting: Object.fromEntries(Object.keys(served).map((id) => [id, 0.1])),
    defaultPromises: { made: 0, broken: 0 },
    clairvoyantDefault: { served: 0.9, servedWithinS: { "30": 0.9, "60": 0.9 }, idleWhileWaiting: 0.1, ...NO_PROMISES },
    trustByLead: { served: 0.9, servedWithinS: { "30": 0.9, "60": 0.9 }, idleWhileWaiting: 0.1, ...NO_PROMISES },
  });

  it("holds the default to the best other policy, a point on the served share and two on the curve", () => {
    const behind = point({ booked_capacity: 0.87, "static-30": 0.9, "static-5": 0.95 });
    expect(bestOther(behind.served)).toEqual({ id: "static-5", value: 0.95 });
    const close = point({ booked_capacity: 0.945, "static-30": 0.9, "static-5": 0.95 });
    const ahead = point({ booked_capacity: 0.99, "static-30": 0.9 });
    const elsewhere = { ...point({ booked_capacity: 0.5, "static-30": 0.99 }), fleet: "burst-3x" as const };
    const s = burstTrainSummary({ ...report, points: [behind, close, elsewhere, ahead] }, "small");
    expect(s.points).toBe(3);
    expect(s.servedMisses.map((m) => m.bestOther)).toEqual(["static-5"]);
    expect(s.widest.gap).toBeCloseTo(-0.08, 9);
    expect(s.curveMisses["30"]).toEqual([{ periodS: 4, maxQueuedRequests: 9 }]);
  });
});

describe("the default with its fresh arrivals known in advance", () => {
  const h = String(VARIANT_HORIZON_S);
  // A point whose figures within 60 s are the default's, the clairvoyant default's and static 30 s's.
  const point = (
    periodS: number,
    maxQueuedRequests: number,
    [mine, known, static30]: number[],
    [idleMine, idleKnown, idleStatic]: number[],
  ): BurstTrainPoint => ({
    fleet: "small",
    periodS,
    maxQueuedRequests,
    queueDrainS: 1,
    offeredRequests: 100,
    served: { booked_capacity: 1, "static-30": 1 },
    servedWithinS: { booked_capacity: { [h]: mine as number }, "static-30": { [h]: static30 as number } },
    idleWhileWaiting: { booked_capacity: idleMine as number, "static-30": idleStatic as number },
    defaultPromises: { made: 0, broken: 0 },
    clairvoyantDefault: {
      served: 1,
      servedWithinS: { [h]: known as number },
      idleWhileWaiting: idleKnown as number,
      ...NO_PROMISES,
    },
    trustByLead: { served: 1, servedWithinS: { [h]: 1 }, idleWhileWaiting: 0, ...NO_PROMISES },
  });

  it("sums up each figure against static 30 s within 60 s, a gap of exactly 2 points within the target", () => {
    const points = [
      point(0, 6, [0.9, 0.93, 0.95], [0.05, 0.01, 0.02]), // default -5, clairvoyant -2 (within)
      point(4, 6, [0.92, 0.9, 0.94], [0.03, 0.04, 0.01]), // default -2 (within), clairvoyant -4, below the default
      point(8, 11, [0.96, 0.97, 0.95], [0.01, 0.0, 0.03]), // both ahead
      { ...point(8, 6, [0.1, 0.1, 0.9], [0.9, 0.9, 0.9]), fleet: "burst-3x" as const }, // another fleet's
    ];
    const s = clairvoyantSummary({ ...report, points }, "small");
    expect(s.points).toBe(3);
    expect(s.worstDefault).toMatchObject({ periodS: 0, maxQueuedRequests: 6 });
    expect(s.worstDefault.gap).toBeCloseTo(-0.05, 9);
    expect(s.clairvoyantAtWorstDefault).toBeCloseTo(-0.02, 9);
    expect(s.worstClairvoyant).toMatchObject({ periodS: 4, maxQueuedRequests: 6 });
    expect(s.worstClairvoyant.gap).toBeCloseTo(-0.04, 9);
    expect([s.defaultWithin, s.clairvoyantWithin, s.clairvoyantBelowDefault]).toEqual([2, 2, 1]);
    expect(s.idleHighest).toEqual({ default: 0.05, clairvoyant: 0.04, static30: 0.03 });
    expect(() => clairvoyantSummary({ ...report, points: [] }, "small")).toThrow("no points on the small fleet");
  });

  it("is the default with only its forecast replaced by the run's arrivals, run at every point", () => {
    const variant = DEFAULT_POLICY_VARIANTS.find((v) => v.id === "clairvoyant-forecast")?.spec;
    const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID);
    expect(report.clairvoyantPolicy).toBe(variant?.id);
    expect({ ...variant, id: base?.id, label: base?.label }).toEqual({ ...base, clairvoyantForecast: true });
    for (const p of report.points) expectVariantFigures(p.clairvoyantDefault, p);
  });

  const section = (fleet: string) => subsection(fleet, "The default with its fresh arrivals known in advance");

  it("tabulates, per fleet and point, within 60 s and idle: default, clairvoyant default, static 30 s, from the JSON", () => {
    for (const fleet of BURST_TRAIN_FLEETS) {
      const text = section(fleet);
      expect(text).toContain("A counterfactual, not a policy");
      expect(text).toContain(
        "No router knows its arrivals; this measures how much of the default's loss is its forecast's.",
      );
      const rows = tableRows(text);
      const points = report.points.filter((p) => p.fleet === fleet);
      expect(rows).toEqual(
        points.map((p) => [
          fixed(p.servedWithinS[DEFAULT_POLICY_ID]?.[h]),
          fixed(p.clairvoyantDefault.servedWithinS[h]),
          fixed(p.servedWithinS["static-30"]?.[h]),
          fixed(p.idleWhileWaiting[DEFAULT_POLICY_ID]),
          fixed(p.clairvoyantDefault.idleWhileWaiting),
          fixed(p.idleWhileWaiting["static-30"]),
        ]),
      );
    }
  });

  it("says per fleet, from the JSON, how far each is behind static 30 s within 60 s, how often within 2 points, and the idle fleet", () => {
    for (const fleet of BURST_TRAIN_FLEETS) {
      const quoted = section(fleet).match(
        /What the counterfactual says: within (\d+) s the clairvoyant default is at worst ([+-]\d+\.\d) points from static 30 s \(with (?:spikes every (\d+) s|the steady 1\.5x) and a queue of (\d+)\), the default ([+-]\d+\.\d) \((?:at the same point|with (?:spikes every (\d+) s|the steady 1\.5x) and a queue of (\d+), where the clairvoyant default is ([+-]\d+\.\d))\); the clairvoyant default is within 2 points of static 30 s at (\d+) of (\d+) points, the default at (\d+), and below the default at (\d+) \(where knowing the arrivals does worse than forecasting them\); the clairvoyant default leaves at most (\d+\.\d)% of the fleet's slots idle while refused clients wait, the default (\d+\.\d)%, static 30 s (\d+\.\d)%\./,
      );
      expect(quoted).not.toBeNull();
      const q = quoted as RegExpMatchArray;
      expect(Number(q[1])).toBe(60);
      // Recomputed from the JSON, not through clairvoyantSummary.
      const points = report.points.filter((p) => p.fleet === fleet);
      const gaps = points.map((p) => ({
        p,
        mine: at60(p.servedWithinS.booked_capacity) - at60(p.servedWithinS["static-30"]),
        known: at60(p.clairvoyantDefault.servedWithinS) - at60(p.servedWithinS["static-30"]),
      }));
      const lowest = (by: (g: (typeof gaps)[number]) => number) =>
        gaps.reduce((a, g) => (by(g) < by(a) ? g : a), gaps[0] as (typeof gaps)[number]);
      const known = lowest((g) => g.known);
      const mine = lowest((g) => g.mine);
      expect([q[2], q[3], q[4]]).toEqual([signed(known.known), period(known.p), String(known.p.maxQueuedRequests)]);
      expect(q[5]).toBe(signed(mine.mine));
      if (mine === known) expect(q.slice(6, 9)).toEqual([undefined, undefined, undefined]);
      else expect(q.slice(6, 9)).toEqual([period(mine.p), String(mine.p.maxQueuedRequests), signed(mine.known)]);
      // The curve target's 2 points, float noise aside (a gap of exactly 2 points is within).
      const within = (g: number) => g >= -0.02 - 1e-12;
      expect(q.slice(9, 13).map(Number)).toEqual([
        gaps.filter((g) => within(g.known)).length,
        points.length,
        gaps.filter((g) => within(g.mine)).length,
        gaps.filter((g) => g.known < g.mine).length,
      ]);
      expect(q.slice(13, 16)).toEqual(highestIdle(points, (p) => p.clairvoyantDefault.idleWhileWaiting));
    }
  });
});

describe("the default with one trust per lead time", () => {
  const h = String(VARIANT_HORIZON_S);
  // A point: within 60 s, final served share and idle share of the default, trust by lead and static 30 s, and the
  // final served share of static 5 s.
  const point = (
    periodS: number,
    maxQueuedRequests: number,
    [mine60, lead60, static60]: number[],
    [mine, lead, static30, static5]: number[],
    [idleMine, idleLead, idleStatic]: number[],
    [[madeMine, brokenMine], [madeLead, brokenLead]]: [number[], number[]] = [
      [0, 0],
      [0, 0],
    ],
  ): BurstTrainPoint => ({
    fleet: "small",
    periodS,
    maxQueuedRequests,
    queueDrainS: 1,
    offeredRequests: 100,
    served: { booked_capacity: mine as number, "static-30": static30 as number, "static-5": static5 as number },
    servedWithinS: {
      booked_capacity: { [h]: mine60 as number },
      "static-30": { [h]: static60 as number },
      "static-5": { [h]: 0 },
    },
    idleWhileWaiting: { booked_capacity: idleMine as number, "static-30": idleStatic as number, "static-5": 0 },
    defaultPromises: { made: madeMine as number, broken: brokenMine as number },
    clairvoyantDefault: { served: 1, servedWithinS: { [h]: 1 }, idleWhileWaiting: 0, ...NO_PROMISES },
    trustByLead: {
      served: lead as number,
      servedWithinS: { [h]: lead60 as number },
      idleWhileWaiting: idleLead as number,
      promises: { made: madeLead as number, broken: brokenLead as number },
    },
  });

  it("sums up, against static 30 s within 60 s, against the best policy other than the default in the end, and idle", () => {
    const points = [
      // Within 60 s: default -5, trust by lead exactly -2 (within). Served: the default best of all (0.99); trust
      // by lead -1 from static 30 s, the best other, but -4 from the default.
      point(
        0,
        6,
        [0.9, 0.93, 0.95],
        [0.99, 0.95, 0.96, 0.94],
        [0.08, 0.01, 0.02],
        [
          [100, 10],
          [300, 90],
        ],
      ),
      // Within 60 s: default -2 (within), trust by lead +3. Served: static 5 s best other; trust by lead -2.5 from it,
      // the default -3; trust by lead above the default.
      point(
        4,
        6,
        [0.92, 0.97, 0.94],
        [0.95, 0.955, 0.9, 0.98],
        [0.03, 0.05, 0.01],
        [
          [100, 30],
          [100, 10],
        ],
      ),
      // Within 60 s: both out (-7.9, -2.9). Served: trust by lead +1.5 from static 30 s, 0.5 below the default.
      point(8, 11, [0.8, 0.85, 0.879], [0.99, 0.985, 0.97, 0.97], [0.04, 0.02, 0.06]),
      // Another fleet's, worse at everything.
      { ...point(8, 6, [0.1, 0.1, 0.9], [0.1, 0.1, 0.9, 0.9], [0.9, 0.9, 0.9]), fleet: "burst-3x" as const },
    ];
    const s = trustByLeadSummary({ ...report, points }, "small");
    expect(s.points).toBe(3);
    expect(s.within).toEqual({ trustByLead: 2, default: 1 });
    // The same yardstick for both: the best policy other than the default, not the default itself (trust by lead is
    // 4 points below the default at the first point but 1 below static 30 s: exactly the served target's point).
    expect(s.servedMisses).toEqual({ trustByLead: 1, default: 1 });
    expect(s.worstServed.trustByLead).toMatchObject({ periodS: 4, maxQueuedRequests: 6, bestOther: "static-5" });
    expect(s.worstServed.trustByLead.gap).toBeCloseTo(-0.025, 9);
    expect(s.worstServed.default).toMatchObject({ periodS: 4, maxQueuedRequests: 6, bestOther: "static-5" });
    expect(s.worstServed.default.gap).toBeCloseTo(-0.03, 9);
    expect(s.belowDefault.points).toBe(2);
    expect(s.belowDefault.furthest).toMatchObject({ periodS: 0, maxQueuedRequests: 6 });
    expect(s.belowDefault.furthest.gap).toBeCloseTo(-0.04, 9);
    expect(s.idleHighest).toEqual({ trustByLead: 0.05, default: 0.08, static30: 0.06 });
    // Promises summed over the fleet's points (the other fleet's none): made, and the share of those broken.
    expect(s.promises.default).toEqual({ made: 200, brokenShare: 0.2 });
    expect(s.promises.trustByLead).toEqual({ made: 400, brokenShare: 0.25 });
    expect(() => trustByLeadSummary({ ...report, points: [] }, "small")).toThrow("no points on the small fleet");
  });

  it("is the default with only its ledger's trust kept per lead time, run at every point", () => {
    const variant = DEFAULT_POLICY_VARIANTS.find((v) => v.id === "trust-by-lead")?.spec;
    const base = EVAL_POLICIES.find((p) => p.id === DEFAULT_POLICY_ID);
    expect(report.trustByLeadPolicy).toBe(variant?.id);
    expect({ ...variant, id: base?.id, label: base?.label }).toEqual({ ...base, ledger: { trustBucketS: 4 } });
    for (const p of report.points) expectVariantFigures(p.trustByLead, p);
  });

  const section = (fleet: string) => subsection(fleet, "Trust by lead time");

  it("is rendered, section by section, from docs/burst-train.json", () => {
    const rendered = renderBurstTrain(report);
    for (const fleet of BURST_TRAIN_FLEETS) {
      expect(section(fleet)).not.toBe("");
      expect(rendered).toContain(`### Trust by lead time${section(fleet)}`);
    }
  });

  it("tabulates, per fleet and point, within 60 s, served and idle: default, trust by lead, static 30 s, from the JSON", () => {
    for (const fleet of BURST_TRAIN_FLEETS) {
      const text = section(fleet);
      expect(text).toContain("A measured variant, not the default");
      const rows = tableRows(text);
      const three = (mine: number | undefined, lead: number, static30: number | undefined) =>
        [mine, lead, static30].map(fixed);
      expect(rows).toEqual(
        report.points
          .filter((p) => p.fleet === fleet)
          .map((p) => [
            ...three(
              p.servedWithinS[DEFAULT_POLICY_ID]?.[h],
              p.trustByLead.servedWithinS[h] ?? Number.NaN,
              p.servedWithinS["static-30"]?.[h],
            ),
            ...three(p.served[DEFAULT_POLICY_ID], p.trustByLead.served, p.served["static-30"]),
            ...three(
              p.idleWhileWaiting[DEFAULT_POLICY_ID],
              p.trustByLead.idleWhileWaiting,
              p.idleWhileWaiting["static-30"],
            ),
          ]),
      );
    }
  });

  it("says per fleet, from the JSON, how often each is within 2 points of static 30 s, the served gaps and the idle fleet", () => {
    for (const fleet of BURST_TRAIN_FLEETS) {
      const q = section(fleet).match(
        /What trust by lead says: within (\d+) s it is within 2 points of static 30 s at (\d+) of (\d+) points, the default at (\d+); its final served share is more than a point behind the best policy other than the default \(the served target's tolerance\) at (\d+) of \d+ points, the default's at (\d+), at worst ([+-]\d+\.\d) points \(with (?:spikes every (\d+) s|the steady 1\.5x) and a queue of (\d+), against `([\w-]+)`\), the default's ([+-]\d+\.\d) points \(with (?:spikes every (\d+) s|the steady 1\.5x) and a queue of (\d+), against `([\w-]+)`\); it serves less than the default in the end at (?:(\d+) of \d+ points \(at worst ([+-]\d+\.\d) points, with (?:spikes every (\d+) s|the steady 1\.5x) and a queue of (\d+)\)|none of the \d+ points); it leaves at most (\d+\.\d)% of the fleet's slots idle while refused clients wait, the default (\d+\.\d)%, static 30 s (\d+\.\d)%\./,
      ) as RegExpMatchArray;
      expect(q).not.toBeNull();
      expect(Number(q[1])).toBe(60);
      // Recomputed from the JSON, not through trustByLeadSummary.
      const points = report.points.filter((p) => p.fleet === fleet);
      const within = (curve: (p: BurstTrainPoint) => Record<string, number> | undefined) =>
        points.filter((p) => at60(curve(p)) - at60(p.servedWithinS["static-30"]) >= -0.02 - 1e-12).length;
      expect(q.slice(2, 5).map(Number)).toEqual([
        within((p) => p.trustByLead.servedWithinS),
        points.length,
        within((p) => p.servedWithinS.booked_capacity),
      ]);
      const others = (p: BurstTrainPoint) =>
        Object.entries(p.served).filter(([id]) => id !== DEFAULT_POLICY_ID) as [string, number][];
      const best = (p: BurstTrainPoint) => others(p).reduce((a, o) => (o[1] > a[1] ? o : a));
      const lowest = (by: (p: BurstTrainPoint) => number) =>
        points.reduce((a, p) => (by(p) < by(a) ? p : a), points[0] as BurstTrainPoint);
      const quoted = (by: (p: BurstTrainPoint) => number) => {
        const w = lowest(by);
        return [signed(by(w)), period(w), String(w.maxQueuedRequests), best(w)[0]];
      };
      const leadGap = (p: BurstTrainPoint) => p.trustByLead.served - best(p)[1];
      const mineGap = (p: BurstTrainPoint) => (p.served.booked_capacity ?? Number.NaN) - best(p)[1];
      // The served target's point, float noise aside.
      const misses = (gap: (p: BurstTrainPoint) => number) => points.filter((p) => gap(p) < -0.01 - 1e-12).length;
      expect(q.slice(5, 7).map(Number)).toEqual([misses(leadGap), misses(mineGap)]);
      expect(q.slice(7, 11)).toEqual(quoted(leadGap));
      expect(q.slice(11, 15)).toEqual(quoted(mineGap));
      const less = (p: BurstTrainPoint) => p.trustByLead.served - (p.served.booked_capacity ?? Number.NaN);
      const below = points.filter((p) => less(p) < 0);
      if (below.length === 0) expect(q.slice(15, 19)).toEqual([undefined, undefined, undefined, undefined]);
      else {
        const w = lowest(less);
        expect(q.slice(15, 19)).toEqual([
          String(below.length),
          signed(less(w)),
          period(w),
          String(w.maxQueuedRequests),
        ]);
      }
      expect(q.slice(19, 22)).toEqual(highestIdle(points, (p) => p.trustByLead.idleWhileWaiting));
    }
  });
});

describe("docs/burst-train.md", () => {
  it("is rendered from docs/burst-train.json", () => {
    expect(repoText("docs/burst-train.md")).toBe(renderBurstTrain(report));
  });

  it("holds the scenarios the code builds, at the sweep's queue bounds, every point with every policy", () => {
    const burst = readScenario(report.scenario);
    expect(report.leadIn).toEqual(burst.phases[0]);
    expect(report.after).toEqual(burst.phases.at(-1));
    expect(report.tailS).toBe(burst.tailS);
    expect(report.trains.map((t) => t.periodS)).toEqual([0, 1, 2, 4, 8]);
    expect(report.fleets.map((f) => f.fleet)).toEqual([...BURST_TRAIN_FLEETS]);
    expect(report.capacityRps).toBe(report.fleets.find((f) => f.fleet === "burst-3x")?.capacityRps);
    // Each fleet's points in turn, periods in the trains' order, the sweep's bounds at that fleet's capacity.
    expect(report.points.map((p) => p.fleet)).toEqual(
      report.fleets.flatMap((f) => Array(report.trains.length * SWEEP_DRAIN_S.length).fill(f.fleet)),
    );
    for (const f of report.fleets) {
      const onIt = onFleet(burst, f.fleet);
      expect(f).toEqual(fleetShape(onIt, f.fleet, measureCapacity(onIt)));
      expect(report.trains).toEqual(report.trains.map((t) => trainShape(spikeTrain(onIt, t.periodS), t.periodS)));
      const bounds = SWEEP_DRAIN_S.map((d) => sweepQueueBound(d, f.capacityRps));
      const points = report.points.filter((p) => p.fleet === f.fleet);
      expect(points.map((p) => p.periodS)).toEqual(report.trains.flatMap((t) => bounds.map(() => t.periodS)));
      for (const t of report.trains)
        expect(points.filter((p) => p.periodS === t.periodS).map((p) => p.maxQueuedRequests)).toEqual(bounds);
    }
    expect(report.fleets.find((f) => f.fleet === "small")?.capacityRps).toBeLessThan(report.capacityRps);
    const policies = Object.keys(report.points[0]?.served ?? {});
    for (const p of report.points) {
      expect(Object.keys(p.servedWithinS)).toEqual(policies);
      expect(Object.keys(p.idleWhileWaiting)).toEqual(policies);
    }
  });
});

describe("what docs/retry-after-default.md says of it", () => {
  it("docs/retry-after-default.md's 'Where it loses' quotes the default's curve gap within 30 s, its served share and the idle fleet", () => {
    const readme = repoText("docs/retry-after-default.md").replace(/\s+/g, " ");
    const quoted = readme.match(
      /arriving in ([\d.]+) s spikes every (\d+) to (\d+) s \(or steady\), at the sweep's queue bounds, the default is more than 2 points behind the best other policy within 30 s at (\d+) of (\d+) points \(by up to (\d+\.\d) points\), its final served share within a point at all (\d+), and it leaves up to (\d+\.\d)% of the fleet's slots idle while refused clients sleep, static 30 s at most (\d+\.\d)% \(\[burst-train\.md\]/,
    );
    expect(quoted).not.toBeNull();
    const s = burstTrainSummary(report, "burst-3x");
    const spiked = report.trains.map((t) => t.periodS).filter((p) => p > 0);
    const fixed = (share: number) => (100 * share).toFixed(1);
    expect(quoted?.slice(1, 4).map(Number)).toEqual([SPIKE_S, Math.min(...spiked), Math.max(...spiked)]);
    expect(report.trains.map((t) => t.periodS)).toContain(0);
    expect(quoted?.slice(4, 6).map(Number)).toEqual([s.curveMisses["30"]?.length, s.points]);
    expect(quoted?.[6]).toBe(fixed(-(s.worstCurve["30"]?.gap as number)));
    expect(s.servedMisses).toEqual([]);
    expect(Number(quoted?.[7])).toBe(s.points);
    expect(quoted?.slice(8, 10)).toEqual([fixed(s.idleDefault.highest), fixed(s.idleStatic30.highest)]);
  });

  it("docs/retry-after-default.md's 'Where it loses' quotes the same on the small fleet: served share, 30 s gap and idle fleet", () => {
    const readme = repoText("docs/retry-after-default.md").replace(/\s+/g, " ");
    const quoted = readme.match(
      /On one replica of (\d+) slots with short answers, its final served share is within a point at all (\d+) points too, but it is more than 2 points behind within 30 s at (\d+) of (\d+) \(by up to (\d+\.\d) points\) and leaves up to (\d+\.\d)% of the slots idle, static 30 s at most (\d+\.\d)% \(same page\)\./,
    );
    expect(quoted).not.toBeNull();
    const fleet = report.fleets.find((f) => f.fleet === "small");
    expect(fleet?.replicas).toEqual([{ count: 1, speed: 1 }]);
    expect(Number(quoted?.[1])).toBe(fleet?.maxOngoingRequests);
    const s = burstTrainSummary(report, "small");
    const fixed = (share: number) => (100 * share).toFixed(1);
    expect(s.servedMisses).toEqual([]);
    expect(Number(quoted?.[2])).toBe(s.points);
    expect(quoted?.slice(3, 5).map(Number)).toEqual([s.curveMisses["30"]?.length, s.points]);
    expect(quoted?.[5]).toBe(fixed(-(s.worstCurve["30"]?.gap as number)));
    expect(quoted?.slice(6, 8)).toEqual([fixed(s.idleDefault.highest), fixed(s.idleStatic30.highest)]);
  });

  it("docs/retry-after-default.md's 'Where it loses' quotes trust by lead on burst-3x's fleet: 60 s points, idle, served misses", () => {
    const readme = repoText("docs/retry-after-default.md").replace(/\s+/g, " ");
    const quoted = readme.match(
      /brings `burst-3x`'s fleet within 2 points of static 30 s within 60 s at (\d+) of (\d+) points \(the default at (\d+)\) and leaves at most (\d+\.\d)% of it idle, but its final served share is more than a point behind the best other policy at (\d+) of (\d+) points \(the default at (\d+)\)/,
    );
    expect(quoted).not.toBeNull();
    const t = trustByLeadSummary(report, "burst-3x");
    expect(quoted?.slice(1, 4).map(Number)).toEqual([t.within.trustByLead, t.points, t.within.default]);
    expect(quoted?.[4]).toBe((100 * t.idleHighest.trustByLead).toFixed(1));
    expect(quoted?.slice(5, 8).map(Number)).toEqual([t.servedMisses.trustByLead, t.points, t.servedMisses.default]);
  });
});
