/**
 * `npm run eval:twins`: is foresight what the curve target asks for? For evaluated scenarios and twins that no
 * one can tell from them before a moment, the clairvoyant curve bound of each alone, of both at once, and of
 * both with every start before the parting tied (what no online policy can beat): `jointCurveBound` in
 * src/sim/curve-bound.ts. Writes docs/online-bound.json and docs/online-bound.md (a few minutes).
 *
 * Flags: --seeds <n> (default 3, as `npm run eval`).
 */

import { join, resolve } from "node:path";
import loadHighs from "highs";
import { commandFlags, positiveIntFlag } from "../scripts/command-line";
import { generatedWriter } from "../scripts/source-snapshot";
import { type BoundSet, curveBound, jointCurveBound, scenarioBoundSet } from "../src/sim/curve-bound";
import { evaluateScenario } from "../src/sim/evaluation";
import { type OnlineBoundReport, renderOnlineBound, type TwinPairResult } from "../src/sim/online-bound-report";
import { EVAL_POLICIES } from "../src/sim/policies";
import type { Scenario } from "../src/sim/scenario";
import { checkTargets } from "../src/sim/targets";
import { readScenario } from "./scenario-files";

const root = resolve(import.meta.dirname, "..");
// Figures are written only if the code that computes them is still the code on disk when they are.
const writeGenerated = generatedWriter(root);
const seedCount = commandFlags(
  "npm run eval:twins -- [--seeds <n>]",
  { options: { seeds: { type: "string" } } },
  ({ values }) => positiveIntFlag("seeds", values.seeds, 3),
);

/** A twin: the base scenario with one change from `partsAtS` on (phases re-cut there, or the fleet's loss). */
interface Twin {
  base: string;
  name: string;
  description: string;
  partsAtS: number;
  derive(base: Scenario): Scenario;
}

/** The base's phases with the load from `fromS` to `toS` replaced (the phases are cut at both). */
function withLoad(base: Scenario, fromS: number, toS: number, load: number): Scenario["phases"] {
  const out: Scenario["phases"] = [];
  let t = 0;
  for (const phase of base.phases) {
    const [start, end] = [t, t + phase.durationS];
    for (const [a, b, l] of [
      [start, Math.min(end, fromS), phase.load],
      [Math.max(start, fromS), Math.min(end, toS), load],
      [Math.max(start, toS), end, phase.load],
    ] as const)
      if (b > a) out.push({ ...phase, durationS: b - a, load: l });
    t = end;
  }
  return out;
}

const TWINS: Twin[] = [
  {
    base: "burst-3x",
    name: "burst-3x-ends-at-10s",
    description: "burst-3x whose burst ends after 10 s instead of 20 s (the 0.5x baseline from 70 s)",
    partsAtS: 70,
    derive: (b) => ({ ...b, phases: withLoad(b, 70, 80, 0.5) }),
  },
  {
    base: "burst-3x",
    name: "burst-3x-goes-on-to-30s",
    description: "burst-3x whose burst goes on for 30 s instead of 20 s (3x until 90 s)",
    partsAtS: 80,
    derive: (b) => ({ ...b, phases: withLoad(b, 80, 90, 3) }),
  },
  {
    base: "burst-3x",
    name: "burst-3x-loses-half",
    description: "burst-3x in which two of the four replicas are lost as the burst ends (80 s)",
    partsAtS: 80,
    derive: (b) => ({ ...b, fleet: { ...b.fleet, loss: { atS: 80, replicas: 2 } } }),
  },
  {
    base: "waves",
    name: "waves-third-wave-does-not-come",
    description: "waves whose third wave (150-180 s at 2x) does not come: 0.3x instead",
    partsAtS: 150,
    derive: (b) => ({ ...b, phases: withLoad(b, 150, 180, 0.3) }),
  },
  {
    base: "waves",
    name: "waves-second-trough-does-not-come",
    description: "waves whose second trough (120-150 s at 0.3x) does not come: the overload goes on at 2x",
    partsAtS: 120,
    derive: (b) => ({ ...b, phases: withLoad(b, 120, 150, 2) }),
  },
];

const highs = await loadHighs();
const evaluated = new Map<string, { set: BoundSet; gap: number }>();
/** A scenario's evaluation (every policy), its bound set and the default's worst curve gap. */
function evaluate(scenario: Scenario) {
  const known = evaluated.get(scenario.name);
  if (known) return known;
  const result = evaluateScenario(scenario, EVAL_POLICIES, seedCount);
  const out = { set: scenarioBoundSet(scenario, result), gap: checkTargets(result).worstCurveGap.gap };
  evaluated.set(scenario.name, out);
  return out;
}

const pairs: TwinPairResult[] = [];
for (const twin of TWINS) {
  const started = performance.now();
  const baseScenario = readScenario(twin.base);
  const base = evaluate(baseScenario);
  const other = evaluate({ ...twin.derive(baseScenario), name: twin.name });
  const sets = [base.set, other.set];
  const online = jointCurveBound(highs, sets, twin.partsAtS);
  pairs.push({
    base: twin.base,
    twin: twin.name,
    description: twin.description,
    partsAtS: twin.partsAtS,
    alone: {
      base: curveBound(highs, base.set.instances, base.set.target).margin,
      twin: curveBound(highs, other.set.instances, other.set.target).margin,
    },
    withForesight: jointCurveBound(highs, sets, 0).margin,
    online: online.margin,
    curves: { base: online.curves[0] ?? {}, twin: online.curves[1] ?? {} },
    targets: { base: base.set.target, twin: other.set.target },
    defaultWorstGap: { base: base.gap, twin: other.gap },
    size: online.size,
  });
  console.log(`${twin.name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const report: OnlineBoundReport = { generatedBy: "npm run eval:twins", seedsPerScenario: seedCount, pairs };
writeGenerated(join(root, "docs/online-bound.json"), `${JSON.stringify(report, null, 2)}\n`);
writeGenerated(join(root, "docs/online-bound.md"), renderOnlineBound(report));
console.log("wrote docs/online-bound.json and docs/online-bound.md");
